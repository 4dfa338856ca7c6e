// Crazy Rally board: car sheet, setup pairs, the timed test round, the hand and
// the revealed track card. Offers only the choices found in legal_actions.
import { legendBox } from "../legend.js";
import { clear, h, keepsInSight, restoreFocus, scrollToShow } from "../ui.js";

const PREVIEW_MS = 1600;
// What Drive and the events wait for: the turn's adjustment card and its way (CR-11).
const CHOOSE_FIRST = "choose a card and accelerate or brake first";
const SYMBOLS = { tyre: ["◎", "tyre: +1 maximum speed"], wheel: ["✇", "steering wheel: +1 manoeuvrability"], nut: ["⬢", "nut: +1 body strength"] };
const EFFECTS = { draw_two: "draw two cards", speed_up: "+1 speed", slow_down: "−1 speed" };
const OUTCOMES = {
  finished: (bonus) => `Finished! Distance plus ${points(bonus)} for each event card still in hand.`,
  eliminated: "Eliminated: the car's body strength ran out.",
  crashed_last: "Crashed on the last card: the car did not finish.",
};
const cap = (text) => text.charAt(0).toUpperCase() + text.slice(1);
const points = (n) => `${n} point${n === 1 ? "" : "s"}`;


// Everything drawn on the board, for its "?" and the "How to play" page.
export function legend() {
  return [
    [h("span", { class: "legend-sign" }, "9"), "Track card, white: the highest speed you may pass it at. Red: the lowest. Missing it costs manoeuvrability: its difficulty plus the difference."],
    ["◆", "Difficulty of a track card: manoeuvrability lost when you pass it too fast (white) or too slow (red)."],
    ["✖", "Damage of a track card: body lost if you crash on it (manoeuvrability below 0). A crash also stops the car: speed 0."],
    ["⚑", "Start flag: the first two track cards always carry one."],
    ["▲ ▼", "An adjustment card accelerates by ▲ or brakes by ▼. Purple cards change the speed by 3 and cost 1 body; above the car's maximum speed the speed is cut to it, for 1 body."],
    [SYMBOLS.tyre[0], "Tyre: +1 maximum speed, once the card is fitted to the car in the setup."],
    [SYMBOLS.wheel[0], "Steering wheel: +1 manoeuvrability, once fitted."],
    [SYMBOLS.nut[0], "Nut: +1 body, once fitted. In the hand during the race the symbols no longer count."],
    ["Event", "Event card: after your card, +1 speed, −1 speed or draw two cards. Each one kept to the end is worth a point."],
  ];
}

function cardData(view, id) {
  return [...(view?.hand || []), ...(view?.events || []), ...(view?.setup?.pair || [])].find((c) => c.id === id);
}

export function describeAction(action, viewBefore) {
  if (action.type === "apply") return `fit card ${action.card} to the car; its pair partner goes to the hand`;
  if (action.type === "start") return "start the race after the test round";
  const card = cardData(viewBefore, action.card);
  const value = card ? ` (${action.mode === "accelerate" ? `+${card.speed_up}` : `−${card.braking}`})` : "";
  const event = action.event ? `, with event ${action.event}${cardData(viewBefore, action.event) ? ` (${EFFECTS[cardData(viewBefore, action.event).effect]})` : ""}` : "";
  return `${action.mode} with card ${action.card}${value}${event}`;
}

// The move in the past tense, without its subject: a replay says who ("you", "the
// optimal line") in front of it.
export function describeMove(action, viewBefore) {
  if (action.type === "apply") return `fitted card ${action.card} to the car (its pair partner went to the hand)`;
  if (action.type === "start") return "started the race after the test round";
  const card = cardData(viewBefore, action.card);
  const value = card ? ` (${action.mode === "accelerate" ? `+${card.speed_up}` : `−${card.braking}`})` : "";
  const event = action.event ? `, with event ${action.event}${cardData(viewBefore, action.event) ? ` (${EFFECTS[cardData(viewBefore, action.event).effect]})` : ""}` : "";
  return `played ${action.card} to ${action.mode}${value}${event}`;
}

// What a turn did, from the view after it: "too fast on card 7: manoeuvrability −3".
export function describeOutcome(action, before, after) {
  const last = after?.last;
  if (action.type !== "drive" || !last) return "";
  const card = `card ${after.turn}`;
  const parts = [];
  if (last.purple_damage) parts.push(`purple card: body −${last.purple_damage}`);
  if (last.clamps) parts.push(`over the maximum speed: body −${last.clamps}`);
  if (last.too_fast) parts.push(`too fast on ${card}: manoeuvrability −${last.manoeuvrability_loss}`);
  if (last.too_slow) parts.push(`too slow on ${card}: manoeuvrability −${last.manoeuvrability_loss}`);
  if (last.crashed) parts.push(`crash on ${card}: speed 0, body −${last.crash_damage}`);
  parts.push(`distance +${last.gained}`);
  return parts.join("; ");
}

// The guided first game's step: the controls of a move, in the order they are used (as
// data-focus-key values). What to do, in words, is the server's (its lesson, worked out
// from the engine).
export function guideStep(action) {
  switch (action.type) {
    case "apply": return [[`apply:${action.card}`]];
    case "start": return [["start"]];
    case "drive": return [[`card:${action.card}`, `mode:${action.mode}`, ...(action.event ? [`event:${action.event}`] : []), "drive"]];
    default: return [[]];
  }
}

function symbolList(symbols) {
  return h("ul", { class: "symbols" }, symbols.map((s) =>
    h("li", { title: SYMBOLS[s][1] }, h("span", { "aria-hidden": "true" }, SYMBOLS[s][0]), ` ${s}`)));
}

// A symbol with its words for a screen reader: its accessible name is what it shows.
const spoken = (symbol, words) => [h("span", { "aria-hidden": "true" }, symbol), h("span", { class: "sr-only" }, words)];

// A card's face is also its accessible name. The symbols count only when a card is fitted
// to the car in the setup: in the hand during the race they are left off.
function cardFace(card, withSymbols) {
  if (card.kind === "event") {
    return [h("span", { class: "card-kind" }, `Event · ${card.colour}`, h("span", { class: "sr-only" }, ":")), h("strong", { class: "card-effect" }, EFFECTS[card.effect]), h("span", { class: "card-id" }, card.id)];
  }
  return [
    h("span", { class: "card-kind" }, cap(card.colour), h("span", { class: "sr-only" }, " card:")),
    h("span", { class: "card-values" }, h("span", {}, spoken("▲", "speed up"), ` +${card.speed_up}`), h("span", {}, spoken("▼", ", brake"), ` −${card.braking}`)),
    withSymbols ? symbolList(card.symbols) : null,
    h("span", { class: "card-id" }, card.id),
  ];
}

// stakes: lines saying what playing the card does, as the server says it.
// describedBy: the id of the words saying why the card is greyed out.
function cardButton(card, { pressed, focusKey, onclick, disabled, describedBy = null, primary, withSymbols = false, stakes = [] }) {
  return h("button", {
    type: "button", class: `card ${card.kind} ${card.colour}`,
    "aria-pressed": pressed === undefined ? null : String(pressed), "data-focus-key": focusKey,
    "data-primary": primary || null, disabled, "aria-describedby": describedBy, onclick,
  }, cardFace(card, withSymbols),
  stakes.length ? h("span", { class: "card-stakes" }, stakes.map((line) => h("span", { class: line.warn ? "warn" : null }, h("span", { class: "sr-only" }, "; "), line.text))) : null,
  pressed ? h("span", { class: "chosen" }, "✓ chosen") : null);
}

// Notes that cost the car something (body), rather than inform.
const WARNINGS = new Set(["purple", "clamp", "eliminated", "event"]);

function trackCard(card, extra = "") {
  const kind = card.colour === "red" ? "minimum" : "maximum";
  const label = `${extra}${card.colour} track card ${card.id}: ${kind} speed ${card.speed}, difficulty ${card.difficulty}, damage ${card.damage}${card.flag ? ", start flag" : ""}`;
  return h("div", { class: `track-card ${card.colour}`, role: "img", "aria-label": label },
    h("span", { class: "sign", "aria-hidden": "true" }, card.speed),
    h("span", { class: "sign-kind", "aria-hidden": "true" }, card.colour === "red" ? "min" : "max"),
    h("span", { class: "track-facts", "aria-hidden": "true" }, h("span", {}, `◆ ${card.difficulty} difficulty`), h("span", {}, `✖ ${card.damage} damage`)),
    card.flag ? h("span", { class: "flag", "aria-hidden": "true" }, "⚑") : null);
}

function stat(label, value, note) {
  return h("div", { class: "stat" }, h("span", {}, label), h("b", {}, value), note ? h("span", {}, note) : null);
}

function carSheet(view, scoreNow) {
  return h("div", { class: "panel car-sheet", role: "group", "aria-label": "Car sheet" },
    h("div", { class: "row spread" }, h("h2", {}, "Car sheet"), legendBox(legend())),
    h("div", { class: "stat-row" },
      stat("Max speed", view.car.max_speed),
      // A soft hyphen lets the longest label break inside its narrow box.
      stat("Manoeuvra\u00adbility", view.manoeuvrability, `of ${view.car.manoeuvrability}`),
      stat("Body", view.body, `of ${view.car.body}`),
      stat("Speed", view.speed),
      stat("Distance", view.distance),
      view.phase === "race" && scoreNow !== null ? stat("Score now", scoreNow, "distance + events kept") : null,
      stat("Track card", view.phase === "race" ? `${view.turn + 1}/${view.track_length}` : `${view.turn}/${view.track_length}`)));
}

// actor: who played, capitalised ("You", "The optimal line").
function lastTurn(last, actor) {
  if (!last) return null;
  const notes = [`${actor} played ${last.card} to ${last.mode}${last.event ? ` and event ${last.event}` : ""}.`];
  if (last.purple_damage) notes.push(`The purple card cost ${last.purple_damage} body.`);
  if (last.clamps) notes.push(`Above the maximum speed: cut back, ${last.clamps} body lost.`);
  if (last.too_fast) notes.push(`Too fast by ${last.too_fast}: slowed to ${last.track.speed}.`);
  if (last.too_slow) notes.push(`Too slow by ${last.too_slow}: pushed up to ${last.track.speed}.`);
  if (last.manoeuvrability_loss) notes.push(`Manoeuvrability −${last.manoeuvrability_loss}.`);
  if (last.crashed) notes.push(`Crash! Speed 0, body −${last.crash_damage}, manoeuvrability restored.`);
  if (last.event_drawn?.length) notes.push(`The event drew ${last.event_drawn.join(", ")} (playable from the next turn).`);
  if (last.event_redrawn?.length) notes.push(`That left no adjustment card in hand: ${last.event_redrawn.join(", ")} went to the discard and as many were drawn.`);
  notes.push(`Distance +${last.gained}.`);
  return h("div", { class: "panel last-turn", role: "group", "aria-label": "The revealed track card" },
    h("h2", {}, "Revealed track card"),
    h("div", { class: "row" }, trackCard(last.track, "revealed "), h("ul", { class: "log" }, notes.map((n) => h("li", {}, n)))));
}

// testRound: on a daily, {seen(), markSeen()} of its test round on this device (shown once).
// actor: who plays, as the board names them ("You", or in a replay "The optimal line");
// guide: the guided first game's panel, drawn with the step's controls so that its words
// stay on screen with the controls they point at.
export function createBoard(root, { interactive, onPlay, testRound = null, actor = "You", guide = null }) {
  let view = null;
  let legal = [];
  let notes = new Map(); // legal action -> what it does, as the server says (its stakes)
  let scoreNow = null;
  let choice = { card: null, mode: null, event: null };
  let previewTimer = null;
  let previewAt = null; // the track card the test round shows, once it has begun
  let busy = false;

  const act = (action) => { if (interactive && !busy) onPlay([action]); };
  const notesOf = (action) => (action && notes.get(action)) || [];
  const lines = (said) => said.map((n) => ({ text: n.text, warn: WARNINGS.has(n.kind) }));
  // What a card does played each way without an event: the speed after it and its costs.
  function handStakes(card) {
    const ways = ["accelerate", "brake"].map((mode) => drives().find((a) => a.card === card.id && a.mode === mode && a.event === null));
    return ways.filter(Boolean).map((action) => {
      const said = notesOf(action);
      const arrow = action.mode === "accelerate" ? "▲" : "▼";
      return { text: `${arrow} ${said.map((n) => n.text).join(", ")}`, warn: said.some((n) => WARNINGS.has(n.kind)) };
    });
  }
  const drives = () => legal.filter((a) => a.type === "drive");
  const offered = (key, partial) => [...new Set(drives().filter((a) =>
    Object.entries(partial).every(([k, v]) => a[k] === v)).map((a) => a[key]))];

  function setupPanel() {
    const { colour, pair, applied } = view.setup;
    return h("div", { class: "panel", role: "group", "aria-label": "Adjustment phase" },
      h("h2", {}, `Fit a ${colour} card to the car`),
      h("p", {}, "Its symbols improve the car for the whole race; the other card of the pair goes to your hand."),
      guide,
      h("div", { class: "hand" }, pair.map((card, i) => {
        const action = legal.find((a) => a.type === "apply" && a.card === card.id);
        return cardButton(card, { focusKey: `apply:${card.id}`, primary: i === 0, disabled: !interactive || !action, onclick: () => act(action), withSymbols: true, stakes: lines(notesOf(action)) });
      })),
      applied.length ? h("p", { class: "muted" }, `Fitted so far: ${applied.map((c) => c.id).join(", ")}.`) : null);
  }

  // The test round: card i face up, the cards before it already hidden again. It runs at a
  // fixed pace; a redraw meanwhile (a saved name, say) carries on where it was.
  function showPreviewCard(stage, i) {
    const track = view.track;
    previewAt = i;
    const strip = h("ol", { class: "preview-strip", "aria-hidden": "true" }, track.map((_, k) =>
      h("li", { class: k === i ? "now" : k < i ? "seen" : "" }, k + 1)));
    if (i >= track.length) {
      clear(stage, strip, h("p", { class: "hidden-track" }, "The track is hidden now. Remember it as you race!"));
      return;
    }
    clear(stage, strip, trackCard(track[i], `card ${i + 1} of ${track.length}: `), h("p", { class: "muted" }, `Card ${i + 1} of ${track.length}`));
    previewTimer = setTimeout(() => showPreviewCard(stage, i + 1), PREVIEW_MS);
  }

  // Whether the track may be shown (again): a daily's test round is shown once only, as
  // the rulebook's memory test forbids a second look (a reload included).
  function testRoundOpen() {
    if (!testRound) return true;
    if (previewAt !== null) return true;
    if (testRound.seen()) return false;
    testRound.markSeen();
    return true;
  }

  function previewPanel() {
    if (!interactive) {
      return h("div", { class: "panel", role: "group", "aria-label": "Test round" }, h("h2", {}, "Test round: the whole track"),
        h("div", { class: "track-row" }, view.track.map((card, i) => trackCard(card, `card ${i + 1}: `))));
    }
    const stage = h("div", { class: "preview-stage", "aria-live": "polite" });
    const start = legal.find((a) => a.type === "start");
    const open = testRoundOpen();
    const again = testRound ? null
      : h("button", { type: "button", "data-focus-key": "replay-preview", onclick: () => { clearTimeout(previewTimer); showPreviewCard(stage, 0); } }, "Show the track again");
    const panel = h("div", { class: "panel", role: "group", "aria-label": "Test round" },
      h("h2", {}, "Test round: memorise the track"),
      h("p", {}, testRound
        ? "Each of the fourteen track cards is shown once, in order, for a moment each, then hidden: on a daily the track is never shown again."
        : "Each of the fourteen track cards is shown briefly, in order, then hidden."),
      guide,
      stage,
      h("div", { class: "actions cr-actions" }, again,
        h("button", { type: "button", class: "primary", "data-primary": true, "data-focus-key": "start", disabled: !start, onclick: () => act(start) }, "Start the race")));
    if (open) showPreviewCard(stage, previewAt ?? 0);
    else clear(stage, h("p", { class: "hidden-track" }, "The track was shown once on this daily and stays hidden. Race it from memory!"));
    return panel;
  }

  function choiceButton(label, key, value, chosen, onclick) {
    return h("button", { type: "button", class: "choice", "aria-pressed": String(chosen), "data-focus-key": `${key}:${value}`, onclick }, chosen ? `✓ ${label}` : label);
  }

  function pick(key, value) {
    choice = { ...choice, [key]: value };
    if (key === "card") choice = { ...choice, mode: offered("mode", { card: value }).includes(choice.mode) ? choice.mode : null };
    const focusKey = `${key}:${value}`;
    draw();
    restoreFocus(root, focusKey);
  }

  // A guide's words stand with what they point at: before a card is chosen over the hand,
  // then with the step's buttons.
  function handPanel() {
    const chosenCard = view.hand.find((c) => c.id === choice.card);
    const modes = choice.card ? offered("mode", { card: choice.card }) : [];
    const events = choice.card && choice.mode ? offered("event", { card: choice.card, mode: choice.mode }) : [];
    const action = drives().find((a) => a.card === choice.card && a.mode === choice.mode && a.event === choice.event);
    const modeLabel = (mode) => mode === "accelerate" ? `Accelerate +${chosenCard.speed_up}` : `Brake −${chosenCard.braking}`;
    return h("div", { class: "panel", role: "group", "aria-label": "Your turn" },
      h("h2", {}, `Turn ${view.turn + 1}: play one adjustment card`),
      view.drawn.length ? h("p", { class: "muted" }, `Drawn this turn: ${view.drawn.join(", ")}${view.redrawn.length ? ` (the hand ${view.redrawn.join(", ")} had no adjustment card and was replaced)` : ""}.`) : null,
      choice.card ? null : guide,
      h("h3", { id: "hand-title" }, "Hand"),
      view.turn === 0 ? h("p", { class: "muted small" }, "Your hand starts with the three setup cards you did not fit: only their ▲ and ▼ count now.") : null,
      h("div", { class: "hand", role: "group", "aria-labelledby": "hand-title" }, view.hand.map((card, i) => {
        const playable = offered("card", {}).includes(card.id);
        return cardButton(card, { pressed: choice.card === card.id, focusKey: `card:${card.id}`, primary: i === 0, disabled: !interactive || !playable, onclick: () => pick("card", card.id), stakes: handStakes(card) });
      })),
      h("h3", { id: "events-title" }, "Event cards"),
      view.events.length
        ? h("div", { class: "hand", role: "group", "aria-labelledby": "events-title" },
          interactive ? choiceButton("No event", "event", "none", choice.event === null, () => pick("event", null)) : null,
          view.events.map((card) => cardButton(card, { pressed: interactive ? choice.event === card.id : undefined, focusKey: `event:${card.id}`,
            disabled: !interactive || !events.includes(card.id), describedBy: interactive && !events.includes(card.id) ? "events-why" : null, onclick: () => pick("event", card.id) })))
        : h("p", { class: "muted" }, `No event cards in hand. Each one kept to the end is worth ${points(view.event_bonus)}.`),
      interactive && view.events.some((card) => !events.includes(card.id))
        ? h("p", { class: "why-disabled", id: "events-why" }, `Event cards: one may follow the turn's card (CR-14): ${CHOOSE_FIRST}.`) : null,
      // The step's buttons, last: on a phone the page scrolls them into view with the chosen card.
      h("div", { class: "cr-actions" }, choice.card ? guide : null,
        interactive ? h("div", { class: "actions", role: "group", "aria-label": "Accelerate or brake" },
          modes.map((mode) => choiceButton(modeLabel(mode), "mode", mode, choice.mode === mode, () => pick("mode", mode)))) : null,
        action ? h("ul", { class: "log drive-stakes", "aria-label": "What this turn's cards do" }, notesOf(action).map((n) =>
          h("li", { "data-kind": n.kind, class: WARNINGS.has(n.kind) ? "warn" : null }, `${cap(n.text)}.`))) : null,
        interactive ? h("div", { class: "actions" },
          h("button", { type: "button", class: "primary", "data-focus-key": "drive", disabled: !action, "aria-describedby": action ? null : "drive-why", onclick: () => act(action) },
            action ? `Drive: ${describeAction(action, view)}` : "Drive"),
          action ? null : h("p", { class: "why-disabled", id: "drive-why" }, `Drive: ${CHOOSE_FIRST} (CR-11).`)) : null));
  }

  function overPanel() {
    return h("div", { class: "panel outcome", role: "group", "aria-label": "Race over" },
      h("h2", {}, view.outcome === "finished" ? `Score ${view.score}` : "No score"),
      h("p", {}, view.outcome === "finished" ? OUTCOMES.finished(view.event_bonus) : OUTCOMES[view.outcome]),
      guide);
  }

  function phasePanel() {
    if (view.phase === "setup") return setupPanel();
    if (view.phase === "preview") return previewPanel();
    if (view.phase === "race") return handPanel();
    return overPanel();
  }

  function draw() {
    clearTimeout(previewTimer);
    const panel = phasePanel();
    clear(root, h("div", { class: "cr-board" }, carSheet(view, scoreNow), lastTurn(view.last, actor), panel));
    keepInSight(panel);
  }

  // The control a guided game points at next: the first of its step's controls (the focus
  // keys the guide names in its data-next) that is drawn and not yet chosen.
  function guidedControl(panel) {
    const keys = guide?.dataset.next ? guide.dataset.next.split(" ") : [];
    return keys.map((k) => panel.querySelector(`[data-focus-key="${CSS.escape(k)}"]`))
      .find((node) => node && node.getAttribute("aria-pressed") !== "true") ?? null;
  }

  // On a phone the page scrolls as little as it takes to show the car sheet's figures, the
  // chosen card (or the first of the step's) and the step's buttons together. When they do
  // not fit: before a card is chosen, the sheet and the first card, where the turn starts;
  // once one is, the card and the buttons, or else the buttons. A guided game keeps the
  // guide's words and the control they point at in sight first, the figures and the
  // buttons with them where they fit; where even the two do not fit, from the top of the
  // words down.
  function keepInSight(panel) {
    if (!interactive || !keepsInSight(root.querySelector(".cr-board"))) return;
    const chosen = panel.querySelector('.card[aria-pressed="true"]');
    const card = chosen ?? panel.querySelector(".card") ?? panel;
    const buttons = panel.querySelector(".cr-actions") ?? panel;
    const sheet = root.querySelector(".car-sheet .stat-row");
    const next = guidedControl(panel);
    if (next) scrollToShow([[sheet, guide, next, buttons], [guide, next, buttons], [guide, next]]);
    else scrollToShow(chosen ? [[sheet, card, buttons], [card, buttons], [buttons]] : [[sheet, card, buttons], [sheet, card]]);
  }

  return {
    show(state) {
      const fresh = !view || view.turn !== state.view.turn || view.phase !== state.view.phase;
      view = state.view;
      if (view.phase !== "preview") previewAt = null;
      legal = state.legal_actions;
      notes = new Map(legal.map((action, i) => [action, state.stakes?.notes?.[i] || []]));
      scoreNow = state.stakes?.score_now ?? null;
      if (fresh) choice = { card: null, mode: null, event: null };
      draw();
    },
    setBusy(value) {
      busy = value;
      root.querySelectorAll("button").forEach((b) => { if (value) b.setAttribute("aria-disabled", "true"); else b.removeAttribute("aria-disabled"); });
    },
  };
}
