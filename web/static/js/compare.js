// The run and the optimal line side by side: where they first part, and both replays
// stepped together, aligned by round (turn), when the reader asks for it.
import { h } from "./ui.js";

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// The index of the first move where two lines differ (the shorter's length if one is a
// prefix of the other), or null when they are the same line.
function partingMove(one, other) {
  const shared = Math.min(one.length, other.length);
  for (let i = 0; i < shared; i += 1) if (!same(one[i], other[i])) return i;
  return one.length === other.length ? null : shared;
}

export function compareLines(box, run, best, turnName) {
  const parting = partingMove(run.actions, best.actions);
  const together = h("input", { type: "checkbox", id: "compare-together" });
  let following = false;
  const follow = (from, to) => from.onMove((step) => {
    if (!together.checked || following) return;
    following = true;
    to.go(to.roundStart(from.roundOf(step)), true).finally(() => { following = false; });
  });
  follow(run.replay, best.replay);
  follow(best.replay, run.replay);
  let summary;
  if (parting === null) {
    summary = h("p", {}, `The two lines are the same, move for move: ${run.actor} played the optimal line.`);
  } else {
    const round = run.replay.roundOf(parting);
    const note = "← the two lines part here.";
    run.replay.mark(parting + 1, note);
    best.replay.mark(parting + 1, note);
    summary = h("p", {},
      `The two lines part at move ${parting + 1}, in ${turnName} ${round}. `,
      h("button", { type: "button", "data-focus-key": "show-parting",
        onclick: () => Promise.all([run.replay.go(parting + 1, true), best.replay.go(parting + 1, true)]) }, "Show where they part"));
  }
  box.append(summary, h("p", { class: "row" }, together, h("label", { for: "compare-together" }, `Step both replays together, by ${turnName}`)));
  box.hidden = false;
}
