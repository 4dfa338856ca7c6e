// The guided first game: the page points at what to do next (the controls of the next
// move of its line, outlined) and says it in words. A game with a lesson has the words of
// every step from the server, worked out from the engine for that very position, and is
// led to the end of the race; any other is led through its first turns in its board's
// words (its guideStep), saying what the last move did in the words the server gave for
// it before it was made (its stakes).
import { clear, h } from "./ui.js";

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const DONE = "That is the guided start done: play on as you like. The board's ? explains every symbol.";

export function createGuide(panel, root, board) {
  const { steps, done } = JSON.parse(panel.dataset.guide);
  const line = steps.map((step) => step.action);
  const did = panel.querySelector("#guide-did");
  const next = panel.querySelector("#guide-next");
  // The words once the race is over go with its result, which the page shows then.
  const ending = document.getElementById("guide-done");
  let before = null; // the position the last move was made from, with its stakes
  let pointAt = [];

  // The board redraws itself as choices are made: the outline follows.
  function outline() {
    root.querySelectorAll(".guide-next").forEach((node) => node.classList.remove("guide-next"));
    for (const key of pointAt) root.querySelector(`[data-focus-key="${CSS.escape(key)}"]`)?.classList.add("guide-next");
  }
  new MutationObserver(outline).observe(root, { childList: true });

  // What the move just made did, in the words the server gave for it beforehand. A step
  // with words of its own said that already, before it was played.
  function explain(played) {
    const last = played[played.length - 1];
    const step = steps[played.length - 1];
    if (step?.text && same(step.action, last)) return "";
    const index = before ? before.legal_actions.findIndex((action) => same(action, last)) : -1;
    const notes = index >= 0 ? before.stakes?.notes?.[index] || [] : [];
    return notes.length ? `What that did: ${notes.map((n) => n.text).join("; ")}.` : "";
  }

  return {
    show(state, played) {
      const onLine = played.every((action, i) => i >= line.length || same(action, line[i]));
      const ended = Boolean(onLine && state.over && done && played.length >= line.length);
      ending.textContent = ended ? done : "";
      ending.hidden = !ended;
      panel.hidden = ended;
      did.textContent = played.length ? explain(played) : "";
      did.hidden = !did.textContent;
      if (!onLine) {
        pointAt = [];
        next.textContent = "You left the guided line: play on as you like, or start over to follow it again.";
      } else if (played.length >= line.length) {
        pointAt = [];
        next.textContent = done ?? DONE;
      } else {
        const step = steps[played.length];
        const [keys, words] = board.guideStep(step.action, state.view);
        pointAt = keys;
        clear(next, h("strong", {}, `Step ${played.length + 1} of ${line.length}: `), step.text ?? words);
      }
      // The board keeps the control pointed at in sight with the words, as it draws.
      panel.dataset.next = pointAt.join(" ");
      before = state;
      outline();
    },
  };
}
