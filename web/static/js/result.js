// The result page of a run: score beside the optimum, the day's histogram with
// the run's place, replays of the run and of the optimal line, and sharing.
import { api } from "./api.js";
import { histogramOf, officialCount, placeOf } from "./puzzles.js";
import { createReplay } from "./replay.js";
import { submittedRuns } from "./storage.js";
import { clear, gameTitle, h, optimumText, playUrl, puzzleLabel, say } from "./ui.js";

const page = document.getElementById("result");
const HIDDEN_SOLUTION = "Today's optimal line is shown to players who have submitted a finished run, and to everyone once the day is over.";
const text = (id, value) => { document.getElementById(id).textContent = value; };

function verdict(run, puzzle) {
  if (run.score === null || run.score === undefined) return "Did not finish: no score.";
  if (puzzle.status !== "solved" || puzzle.optimum === null) return `Score ${run.score}.`;
  const gap = puzzle.optimum - run.score;
  if (gap > 0) return `${gap} ${gap === 1 ? "point" : "points"} short of the optimum.`;
  if (run.tiebreak === puzzle.tiebreak) return "Optimal: you matched the best possible run!";
  return "You reached the optimum score (the optimal line wins the tie-break).";
}

function shareText(run, puzzle) {
  const what = puzzle.number ? `${gameTitle(run.game)} #${puzzle.number} (${puzzle.date})` : `${gameTitle(run.game)} practice seed ${run.seed}`;
  const score = run.score === null || run.score === undefined ? "did not finish" : `${run.score} points`;
  const optimum = puzzle.status === "solved" && puzzle.optimum !== null ? `, optimum ${puzzle.optimum}` : "";
  const url = run.share_url || `${location.origin}/runs/${encodeURIComponent(run.id)}`;
  return `Rally Daily · ${what}: ${score}${optimum}. ${url}`;
}

async function share(message) {
  const status = document.getElementById("share-status");
  if (navigator.share) {
    try {
      await navigator.share({ text: message });
      status.textContent = "Shared.";
      return;
    } catch (error) {
      if (error.name === "AbortError") return;
    }
  }
  try {
    await navigator.clipboard.writeText(message);
    status.textContent = "Copied to the clipboard: paste it anywhere.";
  } catch {
    const area = document.getElementById("share-text");
    area.focus();
    area.select();
    status.textContent = "Copying was not allowed here: the text is selected, press Ctrl+C (or ⌘C) to copy it.";
  }
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

function histogram(board, run, puzzle) {
  const bins = histogramOf(board);
  const root = document.getElementById("histogram");
  if (!bins.length) {
    clear(root, h("p", { class: "muted" }, "No official runs yet."));
    return;
  }
  const shown = columns(bins, puzzle.optimum);
  const tallest = Math.max(...shown.map(([, count]) => count));
  const bars = shown.map(([score, count]) => {
    const mine = run.official && score === run.score;
    return h("div", { class: `bar${mine ? " mine" : ""}`, role: "listitem",
      "aria-label": `score ${score}: ${count} ${count === 1 ? "run" : "runs"}${mine ? ", including yours" : ""}${score === puzzle.optimum ? " (the optimum)" : ""}` },
      mine ? h("span", { class: "you", "aria-hidden": "true" }, "▼ you") : null,
      h("span", { class: "count", "aria-hidden": "true" }, count || ""),
      h("div", { class: "fill", style: `height:${Math.round((count / tallest) * 100)}%` }));
  });
  clear(root,
    h("div", { class: "histogram-wrap" },
      h("div", { class: "histogram", role: "list", "aria-label": "Official scores of this puzzle" }, bars),
      h("div", { class: "histogram-axis", "aria-hidden": "true" }, shown.map(([score]) =>
        h("span", {}, score === puzzle.optimum ? `${score}★` : score)))),
    Number.isInteger(puzzle.optimum) ? h("p", { class: "muted small" }, "★ the optimum") : null);
}

function place(board, run) {
  const total = officialCount(board);
  if (!total) return "";
  if (!run.official || run.score === null || run.score === undefined) return `${total} official ${total === 1 ? "run" : "runs"} so far; this run is not one of them.`;
  return `Your place: ${placeOf(board, run.score)} of ${total} official ${total === 1 ? "run" : "runs"}.`;
}

function leaderboardTable(board, boards) {
  const entries = board.entries || [];
  if (!entries.length) return null;
  return h("table", {},
    h("caption", { class: "sr-only" }, "Leaderboard"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      h("th", { scope: "col" }, "Score"), h("th", { scope: "col" }, "Tie-break"))),
    h("tbody", {}, entries.slice(0, 10).map((entry) => h("tr", {},
      h("td", {}, entry.rank),
      h("td", {}, h("a", { href: `/runs/${encodeURIComponent(entry.run_id)}` }, entry.name || "anonymous")),
      h("td", {}, entry.score), h("td", {}, boards.tiebreakText(entry.tiebreak))))));
}

// Today's optimal line is public once the day is over, or to whoever finished a run of it;
// a line the server would refuse is not asked for.
function solutionIsOpen(puzzle) {
  const today = new Date().toISOString().slice(0, 10);
  return !puzzle.date || puzzle.date < today || submittedRuns(puzzle.game, puzzle.seed).some((r) => r.score !== null);
}

async function showSolution(run, boards) {
  const root = document.getElementById("replay-best");
  if (!solutionIsOpen(run.puzzle)) {
    clear(root, h("p", { class: "muted" }, HIDDEN_SOLUTION));
    return;
  }
  try {
    const solution = await api.solution(run.game, run.seed);
    if (!solution.actions) {
      const why = solution.status === "failed"
        ? "The optimum of this seed could not be computed."
        : "The optimum is still being computed; come back in a moment.";
      clear(root, h("p", { class: "muted" }, why));
      return;
    }
    await createReplay(root, { game: run.game, seed: run.seed, actions: solution.actions, boards, label: "Optimal line" });
  } catch (error) {
    const why = error.status === 403 ? HIDDEN_SOLUTION : `The optimal line could not be loaded. ${error.message}`;
    clear(root, h("p", { class: "muted" }, why));
  }
}

async function start() {
  try {
    const run = await api.run(page.dataset.run);
    const puzzle = run.puzzle;
    const [board, boards] = await Promise.all([
      api.leaderboard(run.game, run.seed).catch(() => ({})),
      import(`./boards/${run.game}.js`),
    ]);
    text("result-title", `${gameTitle(run.game)} ${puzzle.number ? `#${puzzle.number}` : "practice"}`);
    text("result-label", puzzle.number ? `Daily ${puzzleLabel(puzzle)}` : `Practice · seed ${run.seed}`);
    text("your-score", run.score ?? "–");
    text("your-tiebreak", run.score === null || run.score === undefined ? "did not finish" : boards.tiebreakText(run.tiebreak));
    text("optimum-score", optimumText(puzzle));
    text("optimum-tiebreak", puzzle.status === "solved" && puzzle.optimum !== null ? boards.tiebreakText(puzzle.tiebreak) : "");
    text("verdict", verdict(run, puzzle));
    text("official", run.official ? "Official run: it counts on the leaderboard." : "Practice run: only a player's first finished run on the day counts on the leaderboard.");
    text("place", place(board, run));
    document.getElementById("play-again").href = playUrl(run.game, run.seed);
    const message = shareText(run, puzzle);
    document.getElementById("share-text").value = message;
    document.getElementById("share").addEventListener("click", () => share(message));
    histogram(board, run, puzzle);
    const table = leaderboardTable(board, boards);
    if (table) clear(document.getElementById("leaderboard"), h("h3", {}, "Leaderboard"), table);
    await Promise.all([
      createReplay(document.getElementById("replay-run"), { game: run.game, seed: run.seed, actions: run.actions, boards, label: "This run" }),
      showSolution(run, boards),
    ]);
  } catch (error) {
    text("result-label", "This run could not be shown.");
    say(error.status === 404 ? "There is no run with this link." : error.message);
  } finally {
    page.setAttribute("aria-busy", "false");
  }
}

start();
