// A daily's own page in the archive: its optimum and par, its leaderboard and the replays
// of its optimal and par lines side by side, before any practice of it, which is a
// further choice. While the daily's day runs its lines stay hidden (lines.js): the page
// then offers today's attempt instead of practice.
import { api, puzzleApi } from "./api.js";
import { compareLines } from "./compare.js";
import { loadBoard } from "./games.js";
import { leaderboardTable } from "./leaderboard.js";
import { showLine } from "./lines.js";
import { officialCount } from "./puzzles.js";
import { tiebreakRule, tiebreakText } from "./tiebreaks.js";
import { clear, dailyUrl, gameTitle, h, lineHidden, optimumText, parFigure, playUrl, say } from "./ui.js";

const page = document.getElementById("archive-day");
const { game, date } = page.dataset;
const ref = { game, date };
// How often a day whose optimum or par is still being computed is asked for again.
const POLL_MS = 10000;
const text = (id, value) => { document.getElementById(id).textContent = value; };

function showTargets(puzzle) {
  text("day-title", `${gameTitle(game)} #${puzzle.number} · ${date}`);
  const solved = puzzle.status === "solved" && puzzle.optimum !== null;
  text("optimum-score", optimumText(puzzle));
  text("optimum-tiebreak", solved ? tiebreakText(game, puzzle.tiebreak) : "");
  const { figure, note } = parFigure(puzzle, game);
  text("par-score", figure);
  text("par-tiebreak", note);
  text("tiebreak-rule", tiebreakRule(game));
}

// Today's daily is played through the player's one attempt; a past one is practised by its
// now public seed.
function showChoices(puzzle) {
  const choice = lineHidden(puzzle)
    ? h("a", { class: "button primary", href: dailyUrl(game, date) }, "Play today's daily")
    : h("a", { class: "button", href: playUrl(game, puzzle.seed) }, "Practise this puzzle");
  clear(document.getElementById("day-actions"), choice);
}

async function showLeaderboard() {
  const board = await puzzleApi(ref).leaderboard();
  const official = officialCount(board);
  const players = `${board.players} ${board.players === 1 ? "player" : "players"}`;
  text("players", board.players
    ? `Played by ${players}; ${official} official ${official === 1 ? "run" : "runs"}, made on the day.`
    : "No one has played it yet.");
  const table = leaderboardTable(board, game);
  if (table) clear(document.getElementById("leaderboard"), table);
}

// The lines drawn so far, by kind: one still being computed is drawn once it is known.
const drawn = { optimal: null, par: null };

async function showLines(puzzle, boards) {
  const missing = ["optimal", "par"].filter((kind) => !drawn[kind]);
  const lines = await Promise.all(missing.map((kind) => showLine(document.getElementById(`replay-${kind}`), kind, { puzzle, ref, boards })));
  missing.forEach((kind, i) => { drawn[kind] = lines[i]; });
  if (missing.length && drawn.optimal && drawn.par) compareLines(document.getElementById("compare"), drawn.par, drawn.optimal, boards.TURN.name);
}

// A past daily whose optimum or par is still being computed (a fresh install's archive).
const computing = (puzzle) => !lineHidden(puzzle) && (puzzle.status === "pending" || (puzzle.status === "solved" && !puzzle.par_computed));

const failed = (error) => say(`This daily could not be shown. ${error.message}`);

// The day as the API tells it now, asked for again while its optimum or par is computed,
// so they show without a reload.
async function show(boards) {
  const puzzle = (await api.daily(date)).puzzles.find((p) => p.game === game);
  showTargets(puzzle);
  showChoices(puzzle);
  await showLines(puzzle, boards);
  if (computing(puzzle)) setTimeout(() => show(boards).catch(failed), POLL_MS);
}

async function start() {
  try {
    await Promise.all([showLeaderboard(), loadBoard(game).then(show)]);
  } catch (error) {
    failed(error);
  } finally {
    page.setAttribute("aria-busy", "false");
  }
}

start();
