// Step through a run: the board after each prefix of its actions, as the server
// replays it (one play request per step, each kept once fetched). play(actions) is
// the puzzle's play endpoint (see puzzleApi).
import { clear, h, say } from "./ui.js";

export function createReplay(container, { play, actions, boards, label }) {
  const boardRoot = h("div", { class: "board replay", "aria-live": "polite", "aria-label": `${label}: board` });
  const caption = h("p", { class: "step-label" });
  const range = h("input", { type: "range", min: 0, max: actions.length, value: 0, "aria-label": `${label}: step` });
  const board = boards.createBoard(boardRoot, { interactive: false });
  const cache = new Map();
  let step = 0;

  const button = (text, aria, to) =>
    h("button", { type: "button", "aria-label": aria, onclick: () => go(to()) }, text);
  const stepper = h("div", { class: "stepper", role: "group", "aria-label": `${label}: step controls` },
    button("«", "First step", () => 0),
    button("‹", "Previous step", () => step - 1),
    range,
    button("›", "Next step", () => step + 1),
    button("»", "Last step", () => actions.length));
  // Dragging the slider only asks the server once it is let go.
  range.addEventListener("change", () => go(Number(range.value)));

  async function stateAt(k) {
    if (!cache.has(k)) cache.set(k, await play(actions.slice(0, k)));
    return cache.get(k);
  }

  async function go(k) {
    const target = Math.max(0, Math.min(actions.length, k));
    try {
      const state = await stateAt(target);
      const before = target > 0 ? (await stateAt(target - 1)).view : null;
      step = target;
      range.value = String(step);
      board.show(state);
      caption.textContent = step === 0
        ? `Start (0 of ${actions.length} moves).`
        : `Move ${step} of ${actions.length}: ${boards.describeAction(actions[step - 1], before)}.`;
    } catch (error) {
      say(`The replay could not be shown. ${error.message}`);
    }
  }

  clear(container, stepper, caption, boardRoot);
  return go(0);
}
