// The result page of a run: score beside the optimum, the day's histogram with
// the run's place, replays of the run and of the optimal line, and sharing.
// The run's own player is addressed as "you"; anyone else sees whose run it is
// and an invitation to play the puzzle. While today's daily runs, no one sees a line
// of play on it but their own: not the optimal line, not another player's moves, not
// practice of it (a second identity could play what the first one saw); the page says
// when they open.
import { api, puzzleApi } from "./api.js";
import { offerName } from "./name-form.js";
import { histogramOf, officialCount, placeOf } from "./puzzles.js";
import { compareLines } from "./compare.js";
import { leaderboardTable } from "./leaderboard.js";
import { showLine } from "./lines.js";
import { createReplay } from "./replay.js";
import { showShare } from "./share.js";
import { showStatsPanel } from "./stats.js";
import { loadBoard } from "./games.js";
import { tiebreakRule, tiebreakText } from "./tiebreaks.js";
import {
  clear, countDownTo, dailyUrl, gameTitle, h, lineHidden, optimumText, playUrl, puzzleLabel, say,
} from "./ui.js";

const page = document.getElementById("result");
const text = (id, value) => { document.getElementById(id).textContent = value; };
const hasScore = (run) => run.score !== null && run.score !== undefined;
const OPEN_NOW = "reload the page to see it.";

function verdict(run, puzzle, mine) {
  if (!hasScore(run)) return "Did not finish: no score.";
  if (puzzle.status !== "solved" || puzzle.optimum === null) return `Score ${run.score}.`;
  const gap = puzzle.optimum - run.score;
  if (gap > 0) return `${gap} ${gap === 1 ? "point" : "points"} short of the optimum.`;
  if (run.tiebreak === puzzle.tiebreak) return mine ? "Optimal: you matched the best possible run!" : "Optimal: the best possible run.";
  return "The optimum score (the optimal line wins the tie-break).";
}

// The puzzle as the API addresses it: a daily by its date (its seed may be secret).
const puzzleRef = (run) => (run.puzzle.date ? { game: run.game, date: run.puzzle.date } : { game: run.game, seed: run.seed });

function puzzleName(run) {
  const { number } = run.puzzle;
  return number ? `${gameTitle(run.game)} #${number}` : `${gameTitle(run.game)} practice seed ${run.seed}`;
}

// Where to play the run's puzzle: today's daily through an attempt, any other by its seed.
function puzzleUrl(run) {
  const { date } = run.puzzle;
  return date && !run.seed ? dailyUrl(run.game, date) : playUrl(run.game, run.seed);
}

// Every score from the lowest official one up to the optimum gets a column, empty or not,
// so the shape of the day shows (unless the range is too wide to draw).
const MAX_COLUMNS = 60;

function columns(bins, optimum) {
  const counts = new Map(bins);
  const scores = bins.map(([score]) => score);
  const low = Math.min(...scores);
  const high = Math.max(...scores, Number.isInteger(optimum) ? optimum : -Infinity);
  if (high - low >= MAX_COLUMNS) return bins;
  return Array.from({ length: high - low + 1 }, (_, i) => [low + i, counts.get(low + i) || 0]);
}

// The bar's height is set through the CSSOM: the CSP forbids style attributes in markup.
function barFill(share) {
  const fill = h("div", { class: "fill" });
  fill.style.height = `${Math.round(share * 100)}%`;
  return fill;
}

function histogram(board, run, puzzle, mine) {
  const bins = histogramOf(board);
  const root = document.getElementById("histogram");
  if (!bins.length) {
    clear(root, h("p", { class: "muted" }, "No official runs yet."));
    return;
  }
  const shown = columns(bins, puzzle.optimum);
  const tallest = Math.max(...shown.map(([, count]) => count));
  const bars = shown.map(([score, count]) => {
    const here = run.official && score === run.score;
    const whose = mine ? "yours" : "this run";
    return h("div", { class: `bar${here ? " mine" : ""}`, role: "listitem",
      "aria-label": `score ${score}: ${count} ${count === 1 ? "run" : "runs"}${here ? `, including ${whose}` : ""}${score === puzzle.optimum ? " (the optimum)" : ""}` },
      here ? h("span", { class: "you", "aria-hidden": "true" }, mine ? "▼ you" : "▼") : null,
      h("span", { class: "count", "aria-hidden": "true" }, count || ""),
      barFill(count / tallest));
  });
  clear(root,
    h("div", { class: "histogram-wrap" },
      h("div", { class: "histogram", role: "list", "aria-label": "Official scores of this puzzle" }, bars),
      h("div", { class: "histogram-axis", "aria-hidden": "true" }, shown.map(([score]) =>
        h("span", {}, score === puzzle.optimum ? `${score}★` : score)))),
    h("p", { class: "muted small" }, [
      run.official && !mine ? "▼ this run" : null,
      Number.isInteger(puzzle.optimum) ? "★ the optimum" : null,
    ].filter(Boolean).join(" · ")));
}

function place(board, run, mine) {
  const total = officialCount(board);
  if (!total) return "";
  const runs = `${total} official ${total === 1 ? "run" : "runs"}`;
  if (!run.official || !hasScore(run)) return `${runs} so far; this run is not one of them.`;
  return `${mine ? "Your place" : "Place"}: ${placeOf(board, run.score)} of ${runs}.`;
}

// A paragraph saying when today's lines open, kept up to date.
function opening(moment, sentence) {
  const paragraph = h("p", { class: "muted" });
  countDownTo(paragraph, moment, sentence);
  return paragraph;
}

async function showRunReplay(run, boards) {
  const root = document.getElementById("replay-run");
  if (run.actions === null) {
    clear(root, opening(run.puzzle.line_opens_at, (when) => (when
      ? `The moves of this run are shown to everyone once the day is over, at ${when}.`
      : `The moves of this run are open now: ${OPEN_NOW}`)),
    h("p", {}, h("a", { class: "button primary", href: puzzleUrl(run) }, "Play today's daily")));
    return null;
  }
  const play = (prefix) => api.runStep(run.id, prefix.length);
  const actor = run.yours ? "you" : run.name || "the player";
  const replay = createReplay(root, { play, actions: run.actions, boards, label: "This run", actor });
  await replay.ready;
  return { replay, actions: run.actions, actor };
}

// The viewer's own run: "your score", sharing and playing it again.
function showAsMine(run, puzzle) {
  text("result-title", puzzleName(run));
  text("score-label", "Your score");
  showShare(run.id).catch((error) => say(`The share text could not be made. ${error.message}`));
  if (puzzle.number) {
    showStatsPanel(document.getElementById("stats-panel"), run.game)
      .catch((error) => say(`Your stats could not be loaded. ${error.message}`));
  }
  offerName(document.getElementById("name-panel"));
  const again = document.getElementById("play-again");
  if (lineHidden(puzzle)) {
    // Practice of today's daily opens with its lines, to everyone at once.
    again.hidden = true;
    const note = document.getElementById("line-opens");
    note.hidden = false;
    countDownTo(note, puzzle.line_opens_at, (when) => (when
      ? `Playing it again (practice) and the optimal line open at ${when}, when the day is over for everyone.`
      : `Practice of this daily and its optimal line are open now: ${OPEN_NOW}`));
    return;
  }
  again.href = playUrl(run.game, run.seed);
  again.textContent = puzzle.date ? "Play again (practice)" : "Play again";
}

// Someone else's run, seen from a shared link: whose it is, and an invitation to play.
function showAsShared(run) {
  const who = run.name || "A player";
  const did = hasScore(run) ? `scored ${run.score} on` : "did not finish";
  clear(document.getElementById("result-title"), `${who} ${did} ${puzzleName(run)}: `,
    h("a", { href: puzzleUrl(run) }, "play it"));
  text("score-label", run.name ? `${run.name}'s score` : "Score");
  const play = document.getElementById("play-again");
  play.href = puzzleUrl(run);
  play.textContent = "Play it";
  play.classList.add("primary");
}

// Where the run stands on the leaderboard: a daily's attempt that did not finish, on its
// own day, is the player's attempt all the same, not a practice run.
function standing(run, puzzle) {
  if (run.official) return "Official run: it counts on the leaderboard.";
  if (puzzle.number && !run.finished && run.created_at.slice(0, 10) === puzzle.date) {
    return "The day's attempt, unfinished: it has no place on the leaderboard.";
  }
  return "Practice run: only each player's attempt on the day counts on the leaderboard.";
}

async function start() {
  try {
    const run = await api.run(page.dataset.run);
    const { puzzle } = run;
    const ref = puzzleRef(run);
    const mine = run.yours;
    const [board, boards] = await Promise.all([
      puzzleApi(ref).leaderboard().catch(() => ({})),
      loadBoard(run.game),
    ]);
    if (mine) showAsMine(run, puzzle);
    else showAsShared(run);
    text("result-label", puzzle.number ? `Daily ${puzzleLabel(puzzle)}` : `Practice · seed ${run.seed}`);
    text("your-score", run.score ?? "–");
    text("your-tiebreak", hasScore(run) ? tiebreakText(run.game, run.tiebreak) : "did not finish");
    text("optimum-score", optimumText(puzzle));
    text("optimum-tiebreak", puzzle.status === "solved" && puzzle.optimum !== null ? tiebreakText(run.game, puzzle.tiebreak) : "");
    text("tiebreak-rule", tiebreakRule(run.game));
    const howTo = document.getElementById("how-to-play");
    howTo.href = `/how-to-play/${encodeURIComponent(run.game)}`;
    howTo.hidden = false;
    text("verdict", verdict(run, puzzle, mine));
    text("official", standing(run, puzzle));
    text("place", place(board, run, mine));
    histogram(board, run, puzzle, mine);
    const table = leaderboardTable(board, run.game);
    if (table) clear(document.getElementById("leaderboard"), h("h3", {}, "Leaderboard"), table);
    const [runLine, bestLine] = await Promise.all([
      showRunReplay(run, boards),
      showLine(document.getElementById("replay-best"), "optimal", { puzzle, ref, boards }),
    ]);
    if (runLine && bestLine) compareLines(document.getElementById("compare"), runLine, bestLine, boards.TURN.name);
  } catch (error) {
    text("result-label", "This run could not be shown.");
    say(error.status === 404 ? "There is no run with this link." : error.message);
  } finally {
    page.setAttribute("aria-busy", "false");
  }
}

start();
