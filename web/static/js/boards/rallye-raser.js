// Rallye Raser board: cards A and B (and the finish zone) as lanes and sections,
// the car, the dials, the white dice and the reserve, and the planned route.
// Only actions found in legal_actions are offered.
import { dieFace } from "../dice.js";
import { legendBox } from "../legend.js";
import { clear, h, keepsInSight, restoreFocus, scrollToShow, signed } from "../ui.js";

const LANES = ["L", "M", "R"];
const LANE_NAMES = { L: "left", M: "middle", R: "right" };
const LANE_DICE = { L: "1–2", M: "3–4", R: "5–6" };
// The notes that warn (a cost), rather than inform.
const WARNINGS = new Set(["loss_of_control", "gasfuss", "engine_damage", "timer_out"]);
const STATUS = {
  finished: "Finished! Score: 2 × timer + control.",
  timer_out: "The timer ran out: the car did not finish.",
  round_limit: "The round limit was reached: the car did not finish.",
};

// RR-8: what rerolling and driving wait for.
const PLACE_FIRST = "place a die of the latest roll on the road first (RR-8)";
// RR-7: the roll throws every white die not held in reserve.
const RESERVE_ROLL = "While you hold it, only the two other white dice are rolled.";

const fieldName = (row, lane) => `row ${row + 1}, ${LANE_NAMES[lane]} lane`;
const cap = (text) => text.charAt(0).toUpperCase() + text.slice(1);

// Everything drawn on the board, for its "?" and the "How to play" page.
export function legend() {
  return [
    [carIcon(), "Your car. It starts each round on card A; reaching card B moves the cards on and runs the gear check."],
    [h("span", { class: "limit-sign inline" }, "2"), "Speed limit: leave this field in this gear or lower, or the car stops here and the gear drops to the limit (Gasfuss). No step from one limit straight onto another."],
    [h("span", { class: "legend-target" }, "+"), "Where the selected die can go: next to the car, then next to the previous die, forwards or sideways. With no die selected, such a field shows the values of the roll that fit it (✗: none does); tapping it places that die, or asks which."],
    [h("span", { class: "legend-step" }, "1"), "Your route, in driving order."],
    ["L M R", "Lanes: a die fits the left lane with 1–2, the middle with 3–4, the right with 5–6. A die that does not fit is a loss of control: timer −1 and the round ends there."],
    [dieFace(6, "timer"), "Timer (0–6): at 0 the race ends without a score."],
    [dieFace(6, "control"), "Control (0–6): spend 1 to change a route die by 1, or to shift a second gear step."],
    [dieFace(1, "gear"), "Gear (1–3): how many dice the route takes. Fewer damages the engine: gear 1, no upshift next round."],
    [h("span", { class: "legend-absent" }), "Green hatched: no road, a field missing from this card. No die can go there."],
    [dieFace(3, "reserve"), `The reserve: one die kept for later, placed on the route or spent to raise or lower a route die by its value. ${RESERVE_ROLL}`],
    ["Finish", "The finish zone: driving onto it ends the race. All dice in the lane you started the round in, fitting it, as many as the gear: a perfect finish, timer +1; any other finish, timer −1."],
  ];
}

export function describeAction(action, before) {
  const pool = before?.pool || [];
  switch (action.type) {
    case "gear": return `shift to gear ${action.gear}`;
    case "roll": return "roll the dice";
    case "reroll": return "reroll the unused dice";
    case "place": return `place the ${pool[action.die] ?? "die"} on ${fieldName(action.row, action.lane)}`;
    case "reserve": return `reserve the ${pool[action.die] ?? "die"}`;
    case "place_reserve": return `place the reserved ${before?.reserve ?? "die"} on ${fieldName(action.row, action.lane)}`;
    case "modify": return `spend the reserve on route die ${action.step + 1} (${action.delta > 0 ? "up" : "down"} by ${before?.reserve ?? "its value"})`;
    case "control": return `spend 1 control: route die ${action.step + 1} ${signed(action.delta)}`;
    case "move": return "drive the route";
    default: return action.type;
  }
}

// The move in the past tense, without its subject: a replay says who ("you", "the
// optimal line") in front of it.
export function describeMove(action, before) {
  const pool = before?.pool || [];
  switch (action.type) {
    case "gear": return `shifted to gear ${action.gear}`;
    case "roll": return "rolled the dice";
    case "reroll": return "rerolled the unused dice";
    case "place": return `placed the ${pool[action.die] ?? "die"} on ${fieldName(action.row, action.lane)}`;
    case "reserve": return `reserved the ${pool[action.die] ?? "die"}`;
    case "place_reserve": return `placed the reserved ${before?.reserve ?? "die"} on ${fieldName(action.row, action.lane)}`;
    case "modify": return `spent the reserve on route die ${action.step + 1} (${action.delta > 0 ? "up" : "down"} by ${before?.reserve ?? "its value"})`;
    case "control": return `spent 1 control: route die ${action.step + 1} ${signed(action.delta)}`;
    case "move": return "drove the route";
    default: return action.type;
  }
}

// What a move did, from the views before and after it: "loss of control: timer 6 → 5".
export function describeOutcome(action, before, after) {
  if (action.type !== "move" || !before || !after) return "";
  const parts = after.last_round.map((event) => {
    switch (event.type) {
      case "loss_of_control": return `loss of control on ${fieldName(event.row, event.lane)}`;
      case "gasfuss": return `Gasfuss at speed limit ${event.limit}: gear ${event.limit}`;
      case "engine_damage": return "engine damage: gear 1";
      case "card_advance": return after.card_b ? "card B reached, a new card drawn" : "card B reached, no card left to draw";
      case "gear_check": return `gear check in gear ${event.gear}`;
      case "finish": return event.perfect ? "a perfect finish" : "an unclean finish";
      default: return event.type;
    }
  });
  if (after.timer !== before.timer) parts.push(`timer ${before.timer} → ${after.timer}`);
  if (after.control !== before.control) parts.push(`control ${before.control} → ${after.control}`);
  return parts.join("; ");
}

// The guided first game's step: the controls of a move, in the order they are used (as
// data-focus-key values). A gear's button rolls too, so a gear change and its roll are one step.
// What to do, in words, is the server's (its lesson, worked out from the engine).
export function guideStep(action) {
  switch (action.type) {
    case "gear": return [[`gear:${action.gear}`]];
    case "roll": return [["roll"]];
    case "reroll": return [["reroll"]];
    case "place": return [[`die:${action.die}`, `field:${action.row}:${action.lane}`]];
    case "reserve": return [[`die:${action.die}`, "reserve-die"]];
    case "place_reserve": return [["reserve", `field:${action.row}:${action.lane}`]];
    case "control": return [[`control:${action.step}:${action.delta}`]];
    case "modify": return [[`modify:${action.step}:${action.delta}`]];
    case "move": return [["move"]];
    default: return [[]];
  }
}

function lastRoundText(event, view) {
  switch (event.type) {
    case "gasfuss": return `Gasfuss on ${fieldName(event.row, event.lane)}: too fast for speed limit ${event.limit}; the car stopped and the gear dropped to ${event.limit}.`;
    case "loss_of_control": return `Loss of control on ${fieldName(event.row, event.lane)} with a ${event.value}: timer −1, the round ended there.`;
    case "engine_damage": return "Engine damage: fewer dice than the gear were placed; gear 1, no upshift this round.";
    case "card_advance": return view.card_b ? "The car reached card B: a new card was drawn." : "The car reached card B: no card was left to draw, the finish zone lies ahead.";
    case "gear_check": return `Gear check in gear ${event.gear}: timer ${signed(event.timer)}, control ${signed(event.control)}.`;
    case "finish": return event.perfect ? "Perfect finish: timer +1." : "Finish (not perfect): timer −1.";
    default: return event.type;
  }
}

function carIcon() {
  return h("svg:svg", { viewBox: "0 0 40 60", class: "car", "aria-hidden": "true", focusable: "false" },
    h("svg:rect", { x: 6, y: 4, width: 28, height: 52, rx: 10, class: "car-body" }),
    h("svg:rect", { x: 10, y: 14, width: 20, height: 10, rx: 3, class: "car-glass" }),
    h("svg:rect", { x: 10, y: 38, width: 20, height: 8, rx: 3, class: "car-glass" }),
    h("svg:rect", { x: 2, y: 10, width: 5, height: 12, rx: 2, class: "car-wheel" }),
    h("svg:rect", { x: 33, y: 10, width: 5, height: 12, rx: 2, class: "car-wheel" }),
    h("svg:rect", { x: 2, y: 40, width: 5, height: 12, rx: 2, class: "car-wheel" }),
    h("svg:rect", { x: 33, y: 40, width: 5, height: 12, rx: 2, class: "car-wheel" }));
}

function dial(label, value, tone, note) {
  return h("div", { class: "dial", role: "img", "aria-label": `${label} ${value}${note ? `, ${note}` : ""}` },
    dieFace(value, tone), h("span", { class: "dial-text", "aria-hidden": "true" }, h("b", {}, value), label, note ? h("small", {}, note) : null));
}

// Rows to draw, top (furthest) first: the finish zone, card B, card A.
function roadRows(view) {
  const rows = [];
  const cardRows = (card, name) => card.sections.map((s) => ({ row: s.row, fields: s.fields, card: name, cardName: card.name }));
  if (view.finish_rows) rows.push(...view.finish_rows.map((row) => ({ row, card: "finish", fields: LANES.map((lane) => ({ lane, kind: "road", limit: null })) })));
  if (view.card_b) rows.push(...cardRows(view.card_b, "B"));
  rows.push(...cardRows(view.card_a, "A"));
  const unique = new Map();
  for (const r of rows) if (!unique.has(r.row)) unique.set(r.row, r);
  return [...unique.values()].sort((a, b) => b.row - a.row);
}

// actor: who plays, as the board names them ("You", or in a replay "The optimal line");
// guide: the guided first game's panel, drawn at the head of the deck so that its words
// stay on screen with the controls they point at.
export function createBoard(root, { interactive, onPlay, actor = "You", guide = null }) {
  let view = null;
  let legal = [];
  let notes = new Map(); // legal action -> what it costs, as the server says (its stakes)
  let scoreNow = null; // the score if the run finished now
  let confirming = false; // a drive that damages the engine waits for "Drive anyway"
  let selected = null; // {source: "pool", die} or {source: "reserve"}
  let picking = null; // {row, lane}: a field tapped first, its dice offered to choose from
  let busy = false;
  let carShownAt = null; // where the car was last drawn

  // Actions play in order; a missing one (a control drawn disabled) plays nothing.
  const act = (...actions) => { if (interactive && !busy && actions.every(Boolean)) onPlay(actions); };
  const ofType = (type) => legal.filter((a) => a.type === type);
  const placeActions = () => {
    if (!selected) return [];
    return selected.source === "reserve" ? ofType("place_reserve") : ofType("place").filter((a) => a.die === selected.die);
  };

  // A chosen die moves the focus to its first target on the road that keeps control, so
  // the keyboard goes straight on to placing it (the arrow keys then move between the
  // targets). Never to one that loses control: a reflexive Enter there would cost a timer
  // point, so when every target does, the focus stays on the die.
  function select(next) {
    selected = next;
    picking = null;
    draw();
    const first = placeActions().find((action) => !losesControl(action));
    if (next && first) restoreFocus(root, `field:${first.row}:${first.lane}`);
    else restoreFocus(root, next ? (next.source === "reserve" ? "reserve" : `die:${next.die}`) : "start");
  }

  // The arrow keys move the focus to the nearest target in their direction on the road.
  const ARROWS = { ArrowUp: [0, 1], ArrowDown: [0, -1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };

  // Among the dice that can be chosen (the roll's and the reserve's), the arrow keys move
  // the focus to the next or the previous one, round the tray.
  function moveBetweenDice(event) {
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    if (!step) return;
    event.preventDefault();
    const dice = [...root.querySelectorAll("button.die-button:not(:disabled)")];
    const at = dice.indexOf(event.currentTarget);
    dice[(at + step + dice.length) % dice.length]?.focus();
  }

  function moveBetweenTargets(event) {
    const step = ARROWS[event.key];
    const from = event.target.closest?.("button.target");
    if (!step || !from) return;
    event.preventDefault();
    const at = (cell) => [LANES.indexOf(cell.dataset.lane), Number(cell.dataset.row)];
    const [x, y] = at(from);
    const ahead = [...root.querySelectorAll("button.target")].map((cell) => {
      const [cx, cy] = at(cell);
      const along = (cx - x) * step[0] + (cy - y) * step[1];
      const across = Math.abs((cx - x) * step[1]) + Math.abs((cy - y) * step[0]);
      return { cell, along, distance: along + 2 * across };
    }).filter((c) => c.along > 0).sort((a, b) => a.distance - b.distance);
    ahead[0]?.cell.focus();
  }

  const notesOf = (action) => notes.get(action) || [];
  const losesControl = (action) => notesOf(action).some((n) => n.kind === "loss_of_control");
  const valueOf = (action) => (action.type === "place_reserve" ? view.reserve : view.pool[action.die]);
  const offerName = (action) => (action.type === "place_reserve" ? `the reserved ${view.reserve}` : `the ${valueOf(action)}`);

  // Of actions on the roll's dice, the first for each value: dice showing one value are one choice.
  const firstOfEachValue = (actions) => {
    const seen = new Set();
    return actions.filter((a) => !seen.has(view.pool[a.die]) && seen.add(view.pool[a.die]));
  };

  // With no die chosen, a field offers what may go there: the dice of the roll (one per
  // value) and the reserve that fit its lane (RR-16), or when none fits, all of them, each
  // a loss of control. A single offer is placed by tapping the field; a field with more asks
  // which. Any die may still be chosen first and placed on any field.
  function offersFor(row, lane) {
    if (selected || !interactive) return [];
    const here = (a) => a.row === row && a.lane === lane;
    const all = [...firstOfEachValue(ofType("place").filter(here)), ...ofType("place_reserve").filter(here)];
    const fitting = all.filter((a) => !losesControl(a));
    return fitting.length ? fitting : all;
  }

  // What a target field holds for the selected die, drawn in the field: it fits (+), it
  // loses control (✗), and whether it reaches card B (gear check) or the finish.
  function targetMark(said, sign = said.some((n) => n.kind === "loss_of_control") ? "✗" : "+", size = "") {
    const has = (kind) => said.some((n) => n.kind === kind);
    return h("span", { class: `target-mark ${size}`.trim(), "aria-hidden": "true" },
      sign,
      has("gear_check") ? h("small", { class: "mark-note" }, "gear check") : null,
      has("gasfuss") ? h("small", { class: "mark-note" }, "too fast") : null,
      has("finish") ? h("small", { class: "mark-note" }, said.find((n) => n.kind === "finish").text.startsWith("finish: a perfect") ? "perfect" : "timer −1") : null);
  }

  // The stakes of the field under the pointer or the focus, in words.
  function showStakes(text, bad) {
    const line = root.querySelector(".rr-stakes");
    if (!line) return;
    line.textContent = text;
    line.classList.toggle("bad", bad);
  }

  function fieldCell(row, field) {
    const { lane } = field;
    const routeIndex = view.route.findIndex((d) => d.row === row && d.lane === lane);
    const isCar = view.car.row === row && view.car.lane === lane;
    const target = placeActions().find((a) => a.row === row && a.lane === lane);
    const said = target ? notesOf(target) : [];
    const kindText = field.kind === "absent" ? "no road" : field.kind === "limit" ? `speed limit ${field.limit}` : "road";
    const parts = [fieldName(row, lane), kindText];
    if (isCar) parts.push(actor === "You" ? "your car" : "the car");
    if (routeIndex >= 0) parts.push(`route die ${routeIndex + 1} showing ${view.route[routeIndex].value}`);
    const content = [
      field.kind === "limit" ? h("span", { class: "limit-sign", "aria-hidden": "true" }, field.limit) : null,
      isCar ? carIcon() : null,
      routeIndex >= 0 ? h("span", { class: "route-die", "aria-hidden": "true" }, dieFace(view.route[routeIndex].value, view.route[routeIndex].source === "reserve" ? "reserve" : "white"), h("span", { class: "step" }, routeIndex + 1)) : null,
      target ? targetMark(said) : null,
    ];
    const misfit = Boolean(target) && losesControl(target);
    const cls = `cell ${field.kind}${isCar ? " has-car" : ""}${routeIndex >= 0 ? " on-route" : ""}${target ? " target" : ""}${misfit ? " misfit" : ""}`;
    if (target && interactive) {
      const words = said.map((n) => n.text).join("; ");
      const show = () => showStakes(`${cap(fieldName(row, lane))}: ${words}.`, misfit);
      return h("button", { type: "button", class: cls, "aria-label": `Place the selected die on ${parts.join(", ")}: ${words}`, "data-focus-key": `field:${row}:${lane}`,
        "data-row": row, "data-lane": lane, "data-stakes": said.map((n) => n.kind).join(" "),
        onclick: () => act(target), onkeydown: moveBetweenTargets, onfocus: show, onmouseenter: show }, content);
    }
    const offers = offersFor(row, lane);
    if (offers.length) return offerCell(row, lane, offers, `${cls} target offer`, parts, content);
    return h("div", { class: cls, role: "img", "aria-label": parts.join(", ") }, content);
  }

  // A field offering dice, marked with their values and what placing one there does (the
  // same for each: all of them fit the lane, or none does).
  function offerCell(row, lane, offers, cls, parts, content) {
    const one = offers.length === 1 ? offers[0] : null;
    const said = notesOf(offers[0]);
    const misfit = losesControl(offers[0]);
    const words = said.map((n) => n.text).join("; ");
    const names = offers.map(offerName).join(" or ");
    const what = one ? `Place ${names} on ${parts.join(", ")}` : `Choose ${names} for ${parts.join(", ")}`;
    const show = () => showStakes(`${cap(fieldName(row, lane))}: ${names}, ${words}.`, misfit);
    // Three values or more are set smaller, a line free to break after each slash (a
    // zero-width space), so that they stay inside a phone's field.
    const values = offers.map(valueOf).join(offers.length > 2 ? "/\u200b" : "/");
    return h("button", { type: "button", class: `${cls}${misfit ? " misfit" : ""}`, "aria-label": `${what}: ${words}`, "data-focus-key": `field:${row}:${lane}`,
      "data-row": row, "data-lane": lane, "data-stakes": said.map((n) => n.kind).join(" "),
      "data-places": one ? (one.type === "place_reserve" ? "reserve" : `die:${one.die}`) : null,
      onclick: () => (one ? act(one) : pick(row, lane)), onkeydown: moveBetweenTargets, onfocus: show, onmouseenter: show },
    content, targetMark(said, `${misfit ? "✗" : ""}${values}`, offers.length > 2 ? "many" : ""));
  }

  const pickKey = (action) => (action.type === "place_reserve" ? "pick:reserve" : `pick:die:${action.die}`);

  // A field with several dice to offer: they are listed below the dice, each with its
  // stakes. The focus goes to the first that keeps control, or else to "Cancel".
  function pick(row, lane) {
    picking = { row, lane };
    draw();
    const first = offersFor(row, lane).find((action) => !losesControl(action));
    restoreFocus(root, first ? pickKey(first) : "pick-cancel");
  }

  function chooser() {
    const offers = picking ? offersFor(picking.row, picking.lane) : [];
    if (!offers.length) return null;
    const where = fieldName(picking.row, picking.lane);
    const back = () => { const at = picking; picking = null; draw(); restoreFocus(root, `field:${at.row}:${at.lane}`); };
    return h("div", { class: "actions chooser", role: "group", "aria-label": `Dice for ${where}` },
      h("p", { class: "hint" }, `${cap(where)}: which die?`),
      offers.map((a) => h("button", { type: "button", class: "pick", "data-focus-key": pickKey(a),
        onclick: () => act(a) }, dieFace(valueOf(a), a.type === "place_reserve" ? "reserve" : "white"),
      `Place ${offerName(a)}`, h("small", {}, ` (${notesOf(a).map((n) => n.text).join("; ")})`))),
      h("button", { type: "button", "data-focus-key": "pick-cancel", onclick: back }, "Cancel"));
  }

  function road() {
    const rows = roadRows(view);
    const grid = h("div", { class: "road", role: "group", "aria-label": "The road: furthest section at the top" });
    let previousCard = null;
    for (const r of rows) {
      if (r.card !== previousCard) {
        const title = r.card === "finish" ? "Finish zone" : `Card ${r.card} · ${r.cardName}`;
        grid.append(h("div", { class: `card-label ${r.card === "finish" ? "finish" : ""}` }, title));
        previousCard = r.card;
      }
      grid.append(h("div", { class: "row-label", "aria-hidden": "true" }, r.row + 1), ...LANES.map((lane) => fieldCell(r.row, r.fields.find((f) => f.lane === lane))));
    }
    grid.append(h("div", { class: "row-label", "aria-hidden": "true" }),
      ...LANES.map((lane) => h("div", { class: "lane-label" }, h("b", {}, lane), h("small", {}, LANE_DICE[lane]))));
    return h("div", { class: "road-wrap" }, legendBox(legend()), grid);
  }

  // What the road's symbols mean and what is left of the deck: under the road on a wide
  // screen, below the step's controls on a phone, so nothing comes between the road and them.
  function roadNotes() {
    return h("div", { class: "rr-notes" },
      h("p", { class: "muted small" }, `${view.cards_remaining} ${view.cards_remaining === 1 ? "card" : "cards"} still in the deck. A die drives the left lane with 1–2, the middle with 3–4, the right with 5–6.`),
      h("ul", { class: "legend small", "aria-hidden": "true" },
        h("li", {}, h("span", { class: "limit-sign inline" }, "2"), " speed limit"),
        h("li", {}, h("span", { class: "legend-target" }, "+"), " where the selected die can go"),
        h("li", {}, h("span", { class: "legend-step" }, "1"), " your route, in driving order")));
  }

  function dials() {
    return h("div", { class: "dials rr-dials" },
      dial("Timer", view.timer, "timer"), dial("Control", view.control, "control"), dial("Gear", view.gear, "gear", view.no_upshift ? "no upshift" : null),
      roundDial(), scoreDial());
  }

  // The score if the race finished now (2 × timer + control), as the server counts it.
  function scoreDial() {
    if (view.over || scoreNow === null) return null;
    return h("div", { class: "stat score-now" }, h("span", {}, "Score now"), h("b", {}, scoreNow), h("span", {}, "if you finished"));
  }

  // Once the race is over there is no next round: the dial counts the rounds it took.
  function roundDial() {
    const [label, value, note] = view.over
      ? ["Rounds", view.rounds_played, "played"]
      : ["Round", view.round, `of at most ${view.max_rounds}`];
    return h("div", { class: "stat round-dial" }, h("span", {}, label), h("b", {}, value), h("span", {}, note));
  }

  // The gear is chosen and rolled with one tap: a roll button for each gear the rules allow
  // (RR-5), each saying beforehand what its shift costs. The board sends the gear, then the
  // roll.
  function shiftControls() {
    const roll = legal.find((a) => a.type === "roll");
    const rolls = [
      { gear: view.gear, actions: [roll], key: "roll", note: "no shift" },
      ...ofType("gear").map((a) => ({ gear: a.gear, actions: [a, roll], key: `gear:${a.gear}`, note: notesOf(a)[0]?.text ?? "a free shift" })),
    ].sort((a, b) => a.gear - b.gear);
    return h("div", { class: "panel" },
      h("h2", {}, `Round ${view.round}: roll in a gear`),
      h("p", { class: "muted" }, `Gear ${view.gear} now. One step is free, each further step costs 1 control; the gear is how many dice the route takes.`),
      view.reserve !== null ? reserveSlot() : null,
      interactive ? h("div", { class: "actions", role: "group", "aria-label": "Roll in a gear" }, rolls.map((r) => h("button", {
        type: "button", class: r.key === "roll" ? "primary" : null, "data-primary": r.key === "roll" || null, "data-focus-key": r.key,
        onclick: () => act(...r.actions) }, `Roll in gear ${r.gear}`, h("small", {}, ` (${r.note})`)))) : null);
  }

  function poolDie(value, die) {
    const usable = legal.some((a) => (a.type === "place" || a.type === "reserve") && a.die === die);
    const pressed = selected?.source === "pool" && selected.die === die;
    return h("button", { type: "button", class: "die-button", "aria-pressed": String(pressed), "data-focus-key": `die:${die}`, "data-primary": die === 0 || null,
      "aria-label": `White die ${die + 1} showing ${value}${pressed ? ", selected" : ""}`, disabled: !interactive || !usable,
      "aria-describedby": interactive && !usable ? "dice-why" : null,
      onclick: () => select(pressed ? null : { source: "pool", die }), onkeydown: moveBetweenDice }, dieFace(value), pressed ? h("span", { class: "chosen" }, "✓") : null);
  }

  function reserveSlot() {
    const canPlace = ofType("place_reserve").length > 0;
    const pressed = selected?.source === "reserve";
    const face = view.reserve === null
      ? h("span", { class: "empty-slot" }, "empty")
      : h("button", { type: "button", class: "die-button", "aria-pressed": String(pressed), "data-focus-key": "reserve",
        "aria-label": `Reserved die showing ${view.reserve}${canPlace ? ": select to place it on the route" : ""}`, disabled: !interactive || !canPlace,
        "aria-describedby": interactive && !canPlace ? "reserve-why" : null,
        onclick: () => select(pressed ? null : { source: "reserve" }), onkeydown: moveBetweenDice }, dieFace(view.reserve, "reserve"), pressed ? h("span", { class: "chosen" }, "✓") : null);
    const rule = view.reserve !== null && view.phase !== "dice" ? h("p", { class: "muted" }, RESERVE_ROLL) : null;
    // The chosen die may go here instead of on the road: its button beside the slot.
    const reserve = selected?.source === "pool" && interactive ? legal.find((a) => a.type === "reserve" && a.die === selected.die) : null;
    // With no die chosen, each value of the roll the reserve may take has its own button, so
    // keeping a die is one tap, as placing one on a field is.
    const keep = !selected && interactive ? firstOfEachValue(ofType("reserve")) : [];
    const why = interactive && view.reserve !== null && !canPlace ? h("p", { class: "why-disabled", id: "reserve-why" }, `Reserve: ${whyNoPlace()}.`) : null;
    return [h("div", { class: "reserve" }, h("span", { class: "tray-label" }, "Reserve"), face,
      reserve ? h("button", { type: "button", "data-focus-key": "reserve-die", onclick: () => act(reserve) }, "Reserve this die") : null,
      keep.map((a) => h("button", { type: "button", class: "small-button", "data-focus-key": `reserve-die:${a.die}`, onclick: () => act(a) }, `Reserve ${view.pool[a.die]}`))),
    why, rule];
  }

  function selectedHelp() {
    if (!selected || !interactive) return null;
    const count = placeActions().length;
    return h("div", { class: "actions" },
      h("p", { class: "hint" }, count ? `Choose a field marked + (${count} ${count === 1 ? "choice" : "choices"}; arrow keys move between them). ✗: the die does not fit its lane, a loss of control.` : "This die cannot go on the route now."),
      count ? h("p", { class: "rr-stakes", "aria-live": "polite" }, "Point at a field to see what placing the die there does.") : null);
  }

  function routeList() {
    if (!view.route.length) return h("p", { class: "muted" }, `Route: empty. The gear asks for ${view.dice_to_place} ${view.dice_to_place === 1 ? "die" : "dice"}.`);
    // Each button says what it spends: control (1 point) or the reserve die.
    const adjust = (type, step, delta, text) => {
      const action = legal.find((a) => a.type === type && a.step === step && a.delta === delta);
      const spends = notesOf(action || {}).map((n) => n.text).join("; ");
      return action && interactive ? h("button", { type: "button", class: `small-button spend-${type}`, title: spends, "data-focus-key": `${type}:${step}:${delta}`, onclick: () => act(action) },
        text, h("span", { class: "sr-only" }, ` on route die ${step + 1}: ${spends}`)) : null;
    };
    return h("div", {},
      h("h3", {}, "Planned route"),
      h("ul", { class: "route-list" }, view.route.map((d, step) => h("li", {},
        h("span", {}, `Die ${step + 1}: ${LANE_NAMES[d.lane]} lane, row ${d.row + 1}, showing `, h("b", {}, d.value), d.source === "reserve" ? " (the reserve)" : ""),
        h("span", { class: "adjusters" },
          adjust("control", step, -1, "Control −1"),
          adjust("control", step, 1, "Control +1"),
          adjust("modify", step, -1, `Reserve −${view.reserve}`),
          adjust("modify", step, 1, `Reserve +${view.reserve}`))))),
      view.dice_to_place > 0 ? h("p", { class: "muted" }, `${view.dice_to_place} more ${view.dice_to_place === 1 ? "die is" : "dice are"} expected by the gear; driving with fewer damages the engine.`) : null);
  }

  function diceTray() {
    return h("div", { class: "panel" },
      h("h2", {}, `Round ${view.round}: place the dice`),
      h("div", { class: "tray" },
        h("div", { class: "pool", role: "group", "aria-label": "White dice" }, h("span", { class: "tray-label" }, "Dice"),
          view.pool.length ? view.pool.map(poolDie) : h("span", { class: "empty-slot" }, "none left")),
        reserveSlot(),
        interactive && view.pool.length && !legal.some((a) => a.type === "place" || a.type === "reserve")
          ? h("p", { class: "why-disabled", id: "dice-why" }, `Dice: ${whyNoDie()}`) : null),
      selected ? selectedHelp() : chooser(),
      driveControls(),
      offersHelp());
  }

  // With no die chosen, how the fields offer theirs, and the stakes of the field pointed at:
  // below the step's buttons, which a phone keeps in view with the road.
  function offersHelp() {
    const offered = ofType("place").length > 0 || ofType("place_reserve").length > 0;
    if (selected || picking || !interactive || !offered) return null;
    return h("p", { class: "rr-stakes", "aria-live": "polite" }, "Tap a die, then a field; or tap a field to place the die it shows.");
  }

  // Reroll and Drive, then what driving now would do (as the engine resolves it): the
  // buttons first, right below the dice, so a phone shows them with the road.
  function driveControls() {
    const reroll = legal.find((a) => a.type === "reroll");
    const move = legal.find((a) => a.type === "move");
    const drive = move ? notesOf(move) : [];
    const damaging = drive.some((n) => n.kind === "engine_damage");
    // Why each is greyed out, beside them: one line when the reason is the same (a die of
    // the roll to place first), which keeps the deck short on a phone.
    const noReroll = reroll ? null : whyNoReroll();
    const noMove = move ? null : `${PLACE_FIRST}.`;
    const same = noReroll !== null && noReroll === noMove;
    return [
      interactive && confirming && damaging ? h("div", { class: "confirm", role: "group", "aria-label": "Drive with a short route?" },
        h("p", {}, view.route.length ? `Drive with ${view.route.length} of ${view.gear} dice? The engine is damaged: gear 1, no upshift next round.` : "Drive without placing a die? The engine is damaged: gear 1, no upshift next round."),
        h("button", { type: "button", class: "primary", "data-focus-key": "move-confirm", onclick: () => act(move) }, "Drive anyway"),
        h("button", { type: "button", "data-focus-key": "move-cancel", onclick: () => { confirming = false; draw(); restoreFocus(root, "move"); } }, "Keep placing")) : null,
      interactive ? h("div", { class: "actions step-actions" },
        h("button", { type: "button", "data-focus-key": "reroll", disabled: !reroll, "aria-describedby": noReroll ? "reroll-why" : null,
          onclick: () => act(reroll) }, `Reroll (${view.rerolls_left} left)`),
        h("button", { type: "button", class: "primary", "data-focus-key": "move", disabled: !move, "aria-describedby": noMove ? (same ? "reroll-why" : "move-why") : null,
          onclick: () => (damaging ? askBeforeDriving() : act(move)) }, "Drive the route"),
        same ? h("p", { class: "why-disabled", id: "reroll-why" }, `Reroll and Drive: ${noReroll}`) : [
          noReroll ? h("p", { class: "why-disabled", id: "reroll-why" }, `Reroll: ${noReroll}`) : null,
          noMove ? h("p", { class: "why-disabled", id: "move-why" }, `Drive: ${noMove}`) : null]) : null,
      drive.length ? h("div", { class: "drive-stakes" }, h("h3", {}, "If you drive now"),
        h("ul", { class: "log" }, drive.map((n) => h("li", { "data-kind": n.kind, class: WARNINGS.has(n.kind) ? "warn" : null }, `${cap(n.text)}.`)))) : null,
    ];
  }

  // Why the engine refuses a reroll now, in its words (RR-8).
  function whyNoReroll() {
    if (view.rerolls_left === 0) return "at most two rerolls per round (RR-8).";
    if (!view.pool.length) return "no white die is left to reroll (RR-8).";
    if (!legal.some((a) => a.type === "place")) return "none of this roll can be placed now: drive on (RR-8).";
    return `${PLACE_FIRST}.`;
  }

  // Why no die can go on the route now, in the engine's words (RR-7, RR-9, RR-10).
  function whyNoPlace() {
    if (view.phase !== "dice") return "it goes on the route after the roll (RR-7)";
    if (view.route.length >= view.gear) return "the route holds as many dice as the gear shows (RR-9)";
    return "no open field lies ahead of or beside the car or the last placed die (RR-10)";
  }

  // Why the dice of the roll cannot be chosen: neither placed nor reserved (RR-12).
  function whyNoDie() {
    const reserve = view.reserve === null ? "none may be reserved now" : "the reserve holds a die already";
    return `${whyNoPlace()}; ${reserve} (RR-12).`;
  }

  function routePanel() {
    if (view.over || view.phase !== "dice") return null;
    return h("div", { class: "panel rr-route" }, routeList());
  }

  // "Drive" asks first when the route is empty or shorter than the gear.
  function askBeforeDriving() {
    confirming = true;
    draw();
    restoreFocus(root, "move-confirm");
  }

  function overPanel() {
    return h("div", { class: "panel outcome" },
      h("h2", {}, view.status === "finished" ? `Score ${view.score}` : "No score"),
      h("p", {}, STATUS[view.status] || ""),
      h("p", { class: "muted" }, `Rounds played: ${view.rounds_played}.`));
  }

  function lastRound() {
    if (!view.last_round?.length) return null;
    return h("div", { class: "panel rr-last" }, h("h3", {}, "Last round"),
      h("ul", { class: "log" }, view.last_round.map((e) => h("li", {}, lastRoundText(e, view)))));
  }

  function controls() {
    if (view.over) return overPanel();
    return view.phase === "shift" ? shiftControls() : diceTray();
  }

  // The dice and the buttons of the step form one deck, under the dials beside the road on
  // a wide screen. On a phone the dials stand beside the road, and the route and the deck
  // follow below it: nothing is drawn over the road.
  function draw() {
    clear(root, h("div", { class: "rr-board" },
      h("div", { class: "rr-road" }, road()),
      dials(),
      h("div", { class: "rr-tray" }, guide, controls()),
      routePanel(),
      lastRound(),
      roadNotes()));
    keepInSight();
  }

  // Keep the car, the fields it can reach and the dice of its route on screen, scrolling
  // as little as that takes. On a phone, together with the dials beside the road, the route
  // and its adjusters below it and the deck below that, so the fields and the controls that
  // act on them are seen at once; when that is taller than the screen, as much as fits of
  // what the step needs: with a die chosen, the dice and the reserve; otherwise the deck's
  // buttons, or else the route's adjusters. On a wide screen, where the deck stands beside
  // the road, only once the car has moved, so the page does not jump on load; never in a
  // replay, whose reader may be looking elsewhere on the page.
  function keepInSight() {
    const position = `${view.car.row}:${view.car.lane}`; // rows count from the start of the race
    const moved = carShownAt !== null && position !== carShownAt;
    carShownAt = position;
    const car = root.querySelector(".has-car");
    if (!interactive || !car) return;
    const fields = [car, ...root.querySelectorAll(".cell.target, .cell.on-route")];
    const smooth = moved && !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (!keepsInSight(root.querySelector(".rr-board"))) {
      if (moved) scrollToShow([fields], smooth);
      return;
    }
    const near = [...fields, root.querySelector(".rr-dials")];
    const whole = [...near, root.querySelector(".rr-tray")];
    if (selected || picking) {
      scrollToShow([whole, [...near, root.querySelector(".rr-tray .tray")], fields], smooth);
    } else {
      const buttons = [...near, root.querySelector(".rr-tray .step-actions")];
      const route = [...near, root.querySelector(".rr-route")];
      scrollToShow([whole, buttons, route, fields], smooth);
    }
  }

  return {
    show(state) {
      view = state.view;
      legal = state.legal_actions;
      notes = new Map(legal.map((action, i) => [action, state.stakes?.notes?.[i] || []]));
      scoreNow = state.stakes?.score_now ?? null;
      selected = null;
      picking = null;
      confirming = false;
      draw();
    },
    setBusy(value) {
      busy = value;
    },
  };
}
