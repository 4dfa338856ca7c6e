// The archive as a calendar, a month at a time and a game at a time: each past daily with
// your official score (or "not played") from GET /api/v1/me and its optimum from
// GET /api/v1/daily/{date}; a past day leads to its own page (archive-day.js). A daily
// whose optimum is still being computed is asked for again until it is known, so its day
// updates without a reload.
import { api } from "./api.js";
import { history } from "./history.js";
import { archiveDayUrl, clear, dailyUrl, gameTitle, h, optimumText, parSummary, say } from "./ui.js";

const DAY_MS = 86400000;
const POLL_MS = 10000;
const isoDay = (ms) => new Date(ms).toISOString().slice(0, 10);
const monthStart = (ms) => { const d = new Date(ms); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1); };
const nextMonth = (ms) => { const d = new Date(ms); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1); };
const previousMonth = (ms) => { const d = new Date(ms); return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1); };
const monthName = (ms) => new Date(ms).toLocaleDateString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" });

export function createCalendar(root, { onError = say } = {}) {
  let today = null; // ms of today (UTC)
  let first = null; // ms of the first daily
  let shownMonth = null;
  let game = null;
  let mine = new Map(); // "game@date" -> the official run
  const puzzles = new Map(); // date -> {game: puzzle}
  let timer = null;

  function dayCell(ms) {
    const date = isoDay(ms);
    if (ms < first || ms > today) return h("td", { class: "cal-day empty" }, h("span", { class: "cal-date" }, new Date(ms).getUTCDate()));
    const puzzle = puzzles.get(date)?.[game];
    const run = mine.get(`${game}@${date}`);
    const optimum = puzzle ? optimumText(puzzle) : "…";
    const score = run ? String(run.score) : "–";
    const par = puzzle ? `, par ${parSummary(puzzle)}` : "";
    // Today's daily is played; a past one opens its own page first (its lines, then practice).
    const verb = ms === today ? "Play" : "See";
    const words = `${verb} ${gameTitle(game)}${puzzle ? ` #${puzzle.number}` : ""} (${date}): ${run ? `your score ${run.score}` : "not played"}, optimum ${optimum}${par}`;
    const href = ms === today ? dailyUrl(game, date) : archiveDayUrl(game, date);
    return h("td", { class: `cal-day ${run ? "played" : "unplayed"}${ms === today ? " today" : ""}`, dataset: { date } },
      h("a", { href, "aria-label": words, title: words },
        h("span", { class: "cal-date" }, new Date(ms).getUTCDate()),
        h("span", { class: "cal-score" }, score),
        h("span", { class: "cal-optimum", dataset: { optimum: puzzle?.status ?? "unknown" } },
          puzzle?.status === "solved" && puzzle.optimum !== null ? `/${puzzle.optimum}` : puzzle?.status === "failed" ? "" : "…")));
  }

  function render() {
    const month = shownMonth;
    const end = nextMonth(month);
    const lead = (new Date(month).getUTCDay() + 6) % 7; // Monday first
    const cells = [];
    for (let i = 0; i < lead; i += 1) cells.push(h("td", { class: "cal-day empty" }));
    for (let ms = month; ms < end; ms += DAY_MS) cells.push(dayCell(ms));
    const rows = [];
    for (let i = 0; i < cells.length; i += 7) rows.push(h("tr", {}, cells.slice(i, i + 7)));
    clear(root.querySelector("tbody"), rows);
    root.querySelector("#month-title").textContent = monthName(month);
    root.querySelector("#older-month").disabled = previousMonth(month) < monthStart(first);
    root.querySelector("#newer-month").disabled = nextMonth(month) > today;
  }

  async function loadMonth() {
    const days = [];
    for (let ms = Math.max(shownMonth, first); ms < nextMonth(shownMonth) && ms <= today; ms += DAY_MS) days.push(isoDay(ms));
    const answers = await Promise.all(days.filter((day) => !puzzles.has(day) || pending(day)).map((day) => api.daily(day)));
    for (const answer of answers) puzzles.set(answer.date, Object.fromEntries(answer.puzzles.map((p) => [p.game, p])));
  }

  // A day shown whose optimum is still being computed.
  const pending = (day) => Object.values(puzzles.get(day) || {}).some((p) => p.status === "pending");

  async function show() {
    root.setAttribute("aria-busy", "true");
    try {
      await loadMonth();
      render();
    } catch (error) {
      onError(`The archive could not be loaded. ${error.message}`);
    } finally {
      root.setAttribute("aria-busy", "false");
    }
    clearTimeout(timer);
    if ([...puzzles.keys()].some(pending)) timer = setTimeout(show, POLL_MS);
  }

  async function start(chosenGame) {
    game = chosenGame;
    const [todays, me] = await Promise.all([api.daily(), history.me()]);
    today = Date.parse(`${todays.date}T00:00:00Z`);
    first = today - ((todays.puzzles[0]?.number || 1) - 1) * DAY_MS;
    mine = new Map(me.runs.map((run) => [`${run.game}@${run.date}`, run]));
    // The month of the latest past daily (yesterday's), where the archive's news is.
    shownMonth = monthStart(Math.max(first, today - DAY_MS));
    root.querySelector("#older-month").addEventListener("click", () => { shownMonth = previousMonth(shownMonth); show(); });
    root.querySelector("#newer-month").addEventListener("click", () => { shownMonth = nextMonth(shownMonth); show(); });
    await show();
  }

  function choose(chosenGame) {
    game = chosenGame;
    render();
  }

  return { start, choose };
}
