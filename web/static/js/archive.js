// Archive: every past daily, newest first, a week at a time.
import { api } from "./api.js";
import { dailyKey, seedKey, submittedRuns } from "./storage.js";
import { tiebreakRule } from "./tiebreaks.js";
import { clear, dailyUrl, gameTitle, gameTitles, h, optimumSummary, playUrl, say } from "./ui.js";

const rows = document.getElementById("archive-rows");
const older = document.getElementById("older");
const DAYS_PER_PAGE = 7;
const DAY_MS = 86400000;
let nextDay = null; // the newest day not shown yet
let firstDay = null; // puzzle number 1

// Beside each optimum stands its tie-break: what it is, and which way is better.
clear(document.getElementById("tiebreak-rules"), Object.entries(gameTitles()).map(([game, title]) =>
  h("li", {}, `${title}: ${tiebreakRule(game)}`)));

const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);

function cell(puzzle) {
  if (!puzzle) return h("td", {}, "–");
  // The official run of the day first, else a practice run submitted since.
  const runs = [...submittedRuns(dailyKey(puzzle.game, puzzle.date)), ...(puzzle.seed ? submittedRuns(seedKey(puzzle.game, puzzle.seed)) : [])];
  const mine = runs.find((run) => run.official) || runs[0];
  // A past daily's seed is public: it plays as practice by its seed.
  const href = puzzle.seed ? playUrl(puzzle.game, puzzle.seed) : dailyUrl(puzzle.game, puzzle.date);
  return h("td", {},
    h("a", { href, "aria-label": `Play ${gameTitle(puzzle.game)} #${puzzle.number}` }, `#${puzzle.number}`),
    h("div", { class: "muted" }, `Optimum ${optimumSummary(puzzle)}`),
    mine
      ? h("a", { class: "badge done", href: `/runs/${encodeURIComponent(mine.id)}` }, `✓ You: ${mine.score ?? "did not finish"}`)
      : h("span", { class: "badge todo" }, "○ Not played"));
}

function dayRow(daily) {
  const byGame = Object.fromEntries(daily.puzzles.map((p) => [p.game, p]));
  return h("tr", {},
    h("th", { scope: "row" }, h("time", { datetime: daily.date }, daily.date)),
    Object.keys(gameTitles()).map((game) => cell(byGame[game])));
}

async function showMore() {
  older.disabled = true;
  rows.setAttribute("aria-busy", "true");
  const days = [];
  for (let day = nextDay; day >= firstDay && days.length < DAYS_PER_PAGE; day -= DAY_MS) days.push(isoDay(day));
  try {
    const dailies = await Promise.all(days.map((day) => api.daily(day)));
    rows.append(...dailies.map(dayRow));
    nextDay -= days.length * DAY_MS;
  } catch (error) {
    say(`Past puzzles could not be loaded. ${error.message}`);
  } finally {
    rows.setAttribute("aria-busy", "false");
    older.disabled = false;
    older.hidden = nextDay < firstDay;
  }
}

async function start() {
  try {
    const today = await api.daily();
    const todayMs = Date.parse(`${today.date}T00:00:00Z`);
    const number = today.puzzles[0]?.number || 1;
    firstDay = todayMs - (number - 1) * DAY_MS;
    nextDay = todayMs - DAY_MS;
  } catch (error) {
    say(`Past puzzles could not be loaded. ${error.message}`);
    return;
  }
  if (nextDay < firstDay) {
    rows.append(h("tr", {}, h("td", { colspan: Object.keys(gameTitles()).length + 1 }, "No past dailies yet: today's are the first.")));
    older.hidden = true;
    return;
  }
  older.addEventListener("click", showMore);
  showMore();
}

start();
