// The result page's coaching: the run beside par (the expert's own run, played without
// foresight) and the optimum, the par line, and the run's graded decisions: the costliest
// ones, each with the board the player saw, what was chosen and what the expert would
// have chosen, and the gap to the optimum split into decision loss and luck. An analysis
// costs the server seconds of work, so it is computed when a reader asks for it (the
// button), once per run. It shows only what the run's viewer may see of its moves; the
// par line opens when the optimal line does.
import { api } from "./api.js";
import { clear, countDownTo, h, parFigure } from "./ui.js";
import { loadBoard } from "./games.js";
import { showLine } from "./lines.js";
import { tiebreakUnit } from "./tiebreaks.js";

const page = document.getElementById("result");
const root = document.getElementById("coach");
// How many decisions the page shows, the costliest first.
const SHOWN_DECISIONS = 3;
// How often, and how many times, a pending analysis is asked for again.
const POLL_MS = 2000;
const POLL_TIMES = 90;

// What "expected loss" means, in one sentence: measured by sampled futures, or computed
// exactly over the dice of the round (an analysis of 0 samples).
const EXPECTED_LOSS = "Expected loss: how much less the expert expects to score from a choice than from its own, on average over the dice and cards the player could not yet see.";
const EXACT_LOSS = "Expected loss: how much less the expert expects to score after a choice than after its own, summed over every way the dice of the round could still fall, with the rest of the race valued by what the expert's own play goes on to score from such a position, on average.";
const lossMeaning = (analysis) => (analysis.samples ? EXPECTED_LOSS : EXACT_LOSS);

const wait = (ms) => new Promise((done) => { setTimeout(done, ms); });
const puzzleRef = (run) => (run.puzzle.date ? { game: run.game, date: run.puzzle.date } : { game: run.game, seed: run.seed });

// An estimate shown to the precision its error allows: whole numbers while the 95%
// interval is a point wide or more, one decimal below that.
function rounded(value, error) {
  const decimals = error >= 1 ? 0 : 1;
  const shown = Math.abs(value) < 10 ** -decimals / 2 ? 0 : value;
  return shown.toFixed(decimals);
}

// An estimated loss can only be told apart from nothing when its whole 95% interval is
// above zero, and it shows as more than nothing; a sampled estimate below zero is noise
// around no loss, never a gain.
const measurable = (value, error) => value - error > 0 && Number(rounded(value, error)) > 0;

// "1.2 ± 0.4 points" for a sampled estimate, "1.2 points" for an exact one.
const estimate = (value, error, unit) => (error > 0
  ? `${rounded(value, error)} ± ${rounded(error, error)} ${unit}`
  : `${rounded(value, error)} ${unit}`);

function lossPart(value, error, unit) {
  return measurable(value, error) ? estimate(value, error, unit) : null;
}

// "1.2 ± 0.4 points, 0.8 ± 0.5 rounds", each part only when it is measurable; "no
// measurable loss" when neither is.
function lossText(game, pair) {
  // What a tie-break lost counts: Rallye Raser's is minus the rounds, so losing it is
  // taking more rounds.
  const parts = [
    lossPart(pair.points, pair.points_error, "points"),
    lossPart(pair.tiebreak, pair.tiebreak_error, tiebreakUnit(game)),
  ].filter(Boolean);
  return parts.length ? parts.join(", ") : "no measurable loss";
}

// The luck is the exact gap less the estimated loss: it may be either sign.
function luckText(game, pair) {
  const parts = [estimate(pair.points, pair.points_error, "points")];
  if (measurable(Math.abs(pair.tiebreak), pair.tiebreak_error)) {
    parts.push(estimate(pair.tiebreak, pair.tiebreak_error, tiebreakUnit(game)));
  }
  return parts.join(", ");
}

// Costliest first: points, then the tie-break.
const costlier = (a, b) => (b.loss.points - a.loss.points) || (b.loss.tiebreak - a.loss.tiebreak);
const costs = ({ loss }) => measurable(loss.points, loss.points_error) || measurable(loss.tiebreak, loss.tiebreak_error);

function showPar(run) {
  const { figure, note } = parFigure(run.puzzle, run.game);
  document.getElementById("par-score").textContent = figure;
  document.getElementById("par-tiebreak").textContent = note;
}

// Asks until the analysis is stored: while it is computed, and while the analyses
// waiting are over their caps (503 for everyone, 429 for this player), as told.
async function analysisOf(run, status) {
  for (let asked = 0; asked < POLL_TIMES; asked += 1) {
    try {
      const answer = await api.analysis(run.id);
      if (answer.status !== "pending") return answer;
      status.textContent = "The expert is grading each decision of this run…";
      await wait(POLL_MS);
    } catch (error) {
      if (error.status !== 429 && error.status !== 503) throw error;
      const seconds = Number(error.body?.retry_after) || POLL_MS / 1000;
      status.textContent = `Many analyses are waiting: asking again in ${seconds} seconds…`;
      await wait(seconds * 1000);
    }
  }
  return null;
}

// The board the player saw before the decision, drawn as the replay draws it.
async function decisionCard(run, boards, decision) {
  const seen = await api.runStep(run.id, decision.index);
  const boardRoot = h("div", { class: "board replay", "aria-label": `Board before move ${decision.index + 1}` });
  boards.createBoard(boardRoot, { interactive: false }).show(seen);
  return h("li", { class: "decision" },
    h("h4", {}, `Move ${decision.index + 1}`),
    h("dl", { class: "decision-facts" },
      h("dt", {}, "Chosen"), h("dd", {}, boards.describeAction(decision.action, seen.view)),
      h("dt", {}, "The expert"), h("dd", {}, boards.describeAction(decision.expert, seen.view)),
      h("dt", {}, "Expected loss"), h("dd", {}, lossText(run.game, decision.loss))),
    boardRoot);
}

// The gap is exact (the run against the proven optimum); its parts are estimates.
function gapText(game, gap) {
  // What a tie-break lost counts: Rallye Raser's is minus the rounds, so losing it is
  // taking more rounds.
  const unit = tiebreakUnit(game);
  const tiebreak = gap.tiebreak ? `, ${gap.tiebreak} ${unit}` : "";
  return `${gap.points} ${gap.points === 1 ? "point" : "points"}${tiebreak}`;
}

function splitText(run, analysis) {
  const lucky = analysis.luck.points < 0 || (analysis.luck.points === 0 && analysis.luck.tiebreak < 0);
  return [
    h("p", {}, `Gap to the optimum: ${gapText(run.game, analysis.gap)}, of which`),
    h("ul", { class: "split" },
      h("li", {}, h("b", {}, "Lost by decisions: "), lossText(run.game, analysis.decision_loss)),
      h("li", {}, h("b", {}, "Luck (the dice and the draw): "), luckText(run.game, analysis.luck),
        lucky ? " (below zero: the luck was on this run's side)" : "")),
    h("p", { class: "muted small" }, lossMeaning(analysis)),
  ];
}

async function showAnalysis(run, boards) {
  const box = document.getElementById("analysis");
  if (run.actions === null) {
    const note = h("p", { class: "muted" });
    countDownTo(note, run.puzzle.line_opens_at, (when) => (when
      ? `This run's graded decisions open with its moves, at ${when}.`
      : "This run's graded decisions are open now: reload the page to see them."));
    clear(box, note);
    return;
  }
  const status = h("p", { class: "muted", role: "status" });
  const ask = h("button", { type: "button", class: "primary", id: "grade" }, "Grade the decisions");
  clear(box, h("p", {}, "The expert replays this run and estimates what each decision cost, from what the player saw at that moment (it takes a few seconds)."), ask, status);
  await new Promise((clicked) => ask.addEventListener("click", clicked, { once: true }));
  ask.disabled = true;
  status.textContent = "Asking the expert…";
  try {
    const answer = await analysisOf(run, status);
    if (!answer) {
      status.textContent = "The analysis is taking longer than usual; reload the page later.";
      return;
    }
    if (answer.status === "failed") {
      status.textContent = `This run could not be analysed (${answer.error}).`;
      return;
    }
    const { analysis } = answer;
    const costly = analysis.decisions.filter(costs).sort(costlier).slice(0, SHOWN_DECISIONS);
    const cards = await Promise.all(costly.map((decision) => decisionCard(run, boards, decision)));
    clear(box, ...splitText(run, analysis),
      h("h3", {}, costly.length ? "The costliest decisions" : "No decision had a measurable loss: each was as good as the expert's, within the error."),
      costly.length ? h("ol", { class: "decisions" }, cards) : null,
      h("p", { class: "muted small" }, analysis.samples
        ? `${analysis.decisions.length} decisions graded on ${analysis.samples} sampled futures each, from what the player saw; ± is a 95% interval.`
        : `${analysis.decisions.length} decisions graded from what the player saw, each exactly over the dice of its round.`));
  } catch (error) {
    status.textContent = `The analysis could not be shown. ${error.message}`;
  }
}

async function start() {
  try {
    const run = await api.run(page.dataset.run);
    const boards = await loadBoard(run.game);
    showPar(run);
    await Promise.all([showAnalysis(run, boards), showLine(document.getElementById("replay-par"), "par", { puzzle: run.puzzle, ref: puzzleRef(run), boards })]);
  } catch {
    root.hidden = true; // result.js says why the run cannot be shown
  }
}

start();
