// The guided first game: for its first turns the page points at what to do next (the
// controls of the next move of a good line, outlined) and says what the last move did,
// in the words the server gave for it before it was made (its stakes). Which controls
// make a move, and what to say of it, is the board's (its guideStep).
import { clear, h } from "./ui.js";

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

export function createGuide(panel, root, board) {
  const line = JSON.parse(panel.dataset.line);
  const did = panel.querySelector("#guide-did");
  const next = panel.querySelector("#guide-next");
  let before = null; // the position the last move was made from, with its stakes
  let pointAt = [];

  // The board redraws itself as choices are made: the outline follows.
  function outline() {
    root.querySelectorAll(".guide-next").forEach((node) => node.classList.remove("guide-next"));
    for (const key of pointAt) root.querySelector(`[data-focus-key="${CSS.escape(key)}"]`)?.classList.add("guide-next");
  }
  new MutationObserver(outline).observe(root, { childList: true });

  // What the move just made did, in the words the server gave for it beforehand.
  function explain(played) {
    const last = played[played.length - 1];
    const index = before ? before.legal_actions.findIndex((action) => same(action, last)) : -1;
    const notes = index >= 0 ? before.stakes?.notes?.[index] || [] : [];
    return notes.length ? `What that did: ${notes.map((n) => n.text).join("; ")}.` : "";
  }

  return {
    show(state, played) {
      const onLine = played.every((action, i) => i >= line.length || same(action, line[i]));
      did.textContent = played.length ? explain(played) : "";
      if (!onLine) {
        pointAt = [];
        next.textContent = "You left the guided line: play on as you like, or start over to follow it again.";
      } else if (played.length >= line.length) {
        pointAt = [];
        next.textContent = "That is the guided start done: play on as you like. The board's ? explains every symbol.";
      } else {
        const [keys, words] = board.guideStep(line[played.length], state.view);
        pointAt = keys;
        clear(next, h("strong", {}, `Step ${played.length + 1} of ${line.length}: `), words);
      }
      before = state;
      outline();
    },
  };
}
