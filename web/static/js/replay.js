// Step through a run: the board after each prefix of its actions, as the server replays
// it (one play request per step, each kept once fetched). play(actions) is the puzzle's
// play endpoint (see puzzleApi). A replay steps by move or by round (turn), plays itself
// at a chosen pace, and captions each move with what it did, in the third person for a
// line that is not the viewer's ("the optimal line played Y03 to brake").
import { clear, h, say } from "./ui.js";

const SPEEDS = [["0.5", "½×"], ["1", "1×"], ["2", "2×"], ["4", "4×"]];
const AUTOPLAY_MS = 1400; // one move at 1×

const capitalised = (text) => text.charAt(0).toUpperCase() + text.slice(1);

// actor: who played, as a caption names them mid-sentence ("you", "the optimal line", "Ada").
export function createReplay(container, { play, actions, boards, label, actor = "you" }) {
  const boardRoot = h("div", { class: "board replay", role: "group", "aria-label": `${label}: board` });
  const caption = h("p", { class: "step-label", "aria-live": "polite" });
  const range = h("input", { type: "range", min: 0, max: actions.length, value: 0, "aria-label": `${label}: step` });
  const board = boards.createBoard(boardRoot, { interactive: false, actor: capitalised(actor) });
  const turn = boards.TURN;
  // The round (turn) each step is in: a round ends with its drive.
  const rounds = [1];
  actions.forEach((action, i) => rounds.push(rounds[i] + (turn.ends(action) ? 1 : 0)));
  const lastRound = rounds[actions.length] - (actions.length && turn.ends(actions[actions.length - 1]) ? 1 : 0);
  const cache = new Map();
  const listeners = [];
  const marks = new Map(); // step -> a note shown in its caption
  let step = 0; // the step shown
  let wanted = 0; // the step last asked for: quick clicks count from it, and it wins
  let timer = null;

  const roundOf = (k) => Math.min(rounds[k], lastRound);
  // The first step of round r (the start of the line for round 1), or the end of the line.
  const roundStart = (r) => {
    if (r <= 1) return 0;
    const k = rounds.indexOf(r);
    return k < 0 ? actions.length : k;
  };

  const button = (symbol, words, to) =>
    h("button", { type: "button", onclick: () => { stop(); go(to()); } }, h("span", { "aria-hidden": "true" }, symbol), h("span", { class: "sr-only" }, words));
  const playButton = h("button", { type: "button", class: "primary", "aria-pressed": "false", onclick: () => (timer ? stop() : start()) }, "▶ Play");
  const speed = h("select", { "aria-label": `${label}: speed`, onchange: () => { if (timer) start(); } },
    SPEEDS.map(([value, text]) => h("option", { value, selected: value === "1" || null }, text)));
  const stepper = h("div", { class: "stepper", role: "group", "aria-label": `${label}: step controls` },
    button("«", "First step", () => 0),
    button("⇤", `Previous ${turn.name}`, () => roundStart(wanted > roundStart(roundOf(wanted)) ? roundOf(wanted) : roundOf(wanted) - 1)),
    button("‹", "Previous move", () => wanted - 1),
    range,
    button("›", "Next move", () => wanted + 1),
    button("⇥", `Next ${turn.name}`, () => roundStart(roundOf(wanted) + 1)),
    button("»", "Last step", () => actions.length));
  const autoplay = h("div", { class: "autoplay row", role: "group", "aria-label": `${label}: autoplay` },
    playButton, h("label", {}, "Speed ", speed));
  // Dragging the slider only asks the server once it is let go.
  range.addEventListener("change", () => { stop(); go(Number(range.value)); });

  async function stateAt(k) {
    if (!cache.has(k)) cache.set(k, await play(actions.slice(0, k)));
    return cache.get(k);
  }

  function stop() {
    clearTimeout(timer);
    timer = null;
    playButton.textContent = "▶ Play";
    playButton.setAttribute("aria-pressed", "false");
  }

  // Autoplay from here (from the start once at the end), one move at the chosen pace.
  function start() {
    clearTimeout(timer);
    playButton.textContent = "❚❚ Pause";
    playButton.setAttribute("aria-pressed", "true");
    const tick = async () => {
      if (step >= actions.length) {
        stop();
        return;
      }
      await go(step + 1);
      timer = timer && setTimeout(tick, AUTOPLAY_MS / Number(speed.value));
    };
    timer = setTimeout(step >= actions.length ? async () => { await go(0); tick(); } : tick, 0);
  }

  function captionOf(before, after) {
    if (step === 0) return `Start (0 of ${actions.length} moves).`;
    const action = actions[step - 1];
    const outcome = boards.describeOutcome(action, before, after.view);
    const where = `Move ${step} of ${actions.length}, ${turn.name} ${roundOf(step - 1)}`;
    const note = marks.get(step);
    return `${where}: ${actor} ${boards.describeMove(action, before)}.${outcome ? ` ${capitalised(outcome)}.` : ""}${note ? ` ${note}` : ""}`;
  }

  // quiet: a move made to follow the other replay, which is not passed on.
  async function go(k, quiet = false) {
    const target = Math.max(0, Math.min(actions.length, k));
    wanted = target;
    try {
      const state = await stateAt(target);
      const before = target > 0 ? (await stateAt(target - 1)).view : null;
      if (target !== wanted) return;
      step = target;
      range.value = String(step);
      board.show(state);
      caption.textContent = captionOf(before, state);
      if (!quiet) listeners.forEach((listener) => listener(step));
    } catch (error) {
      stop();
      say(`The replay could not be shown. ${error.message}`);
    }
  }

  clear(container, stepper, autoplay, caption, boardRoot);
  return {
    ready: go(0),
    go,
    roundOf,
    roundStart,
    get step() { return step; },
    onMove(listener) { listeners.push(listener); },
    mark(k, note) { marks.set(k, note); },
  };
}
