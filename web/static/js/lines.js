// A puzzle's two lines of play, each as a replay: the solver's optimal line and the
// expert's par line (its own run, played without foresight). While a daily's day runs
// neither is asked for, whoever looks: the box says when they open to everyone.
import { puzzleApi } from "./api.js";
import { createReplay } from "./replay.js";
import { clear, countDownTo, h, lineHidden } from "./ui.js";

const LINES = {
  optimal: {
    name: "optimal line",
    label: "Optimal line",
    actor: "the optimal line",
    fetch: (puzzle) => puzzle.solution(),
    opens: (when) => (when
      ? `The optimal line opens to everyone at ${when}: come back then to see how the best possible run was played.`
      : "The optimal line is open now: reload the page to see it."),
    missing: (answer) => (answer.status === "failed"
      ? "The optimum of this puzzle could not be computed."
      : "The optimum is still being computed; come back in a moment."),
  },
  par: {
    name: "par line",
    label: "Par line",
    actor: "the expert",
    fetch: (puzzle) => puzzle.par(),
    opens: (when) => (when
      ? `The par line opens with the optimal line, at ${when}.`
      : "The par line is open now: reload the page to see it."),
    missing: () => "The par of this puzzle is still being computed; come back in a moment.",
  },
};

// Draw the line of kind ("optimal" or "par") of puzzle (as the API answers it; ref
// addresses it, see puzzleApi) in box; its replay, actions and actor once drawn, else null.
export async function showLine(box, kind, { puzzle, ref, boards }) {
  const line = LINES[kind];
  if (lineHidden(puzzle)) {
    const note = h("p", { class: "muted" });
    countDownTo(note, puzzle.line_opens_at, line.opens);
    clear(box, note);
    return null;
  }
  try {
    const answer = await line.fetch(puzzleApi(ref));
    if (!answer.actions) {
      clear(box, h("p", { class: "muted" }, line.missing(answer)));
      return null;
    }
    const replay = createReplay(box, {
      play: puzzleApi(ref).play, actions: answer.actions, boards, label: line.label, actor: line.actor,
    });
    await replay.ready;
    return { replay, actions: answer.actions, actor: line.actor };
  } catch (error) {
    clear(box, h("p", { class: "muted" }, `The ${line.name} could not be loaded. ${error.message}`));
  }
  return null;
}
