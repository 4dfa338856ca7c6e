// The weekend rally's page (GET /api/v1/rallies/{friday}): its three stages, the sums of
// their optima and pars, and the standings of everyone or of one of the player's leagues.
import { history } from "./history.js";
import { leagues, rallyUrl, shiftDays, shownName } from "./league-api.js";
import { tiebreakText } from "./tiebreaks.js";
import { clear, dailyUrl, h, optimumSummary, say } from "./ui.js";

const GAME = "crazy-rally";
const root = document.getElementById("rally");
const day = root.dataset.day;
const league = new URLSearchParams(location.search).get("league") || "";
const STAGE_WORDS = { over: "over", today: "today", upcoming: "to come" };
const STATUS_WORDS = { complete: "complete", running: "still in", out: "out" };

function stageRow(stage) {
  const puzzle = stage.puzzle;
  return h("tr", {},
    h("th", { scope: "row" }, `Stage ${stage.stage}`),
    h("td", {}, h("a", { href: dailyUrl(GAME, stage.date) }, stage.date)),
    h("td", {}, STAGE_WORDS[stage.status]),
    h("td", {}, puzzle ? optimumSummary(puzzle) : "–"),
    h("td", {}, puzzle && puzzle.par !== null ? String(puzzle.par) : "–"));
}

function showStages(rally) {
  clear(document.getElementById("stages"), h("div", { class: "table-wrap" }, h("table", {},
    h("caption", { class: "sr-only" }, "The rally's stages"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Stage"), h("th", { scope: "col" }, "Daily"),
      h("th", { scope: "col" }, "Day"), h("th", { scope: "col" }, "Optimum"), h("th", { scope: "col" }, "Par"))),
    h("tbody", {}, rally.stages.map(stageRow)))));
  const optimum = rally.optimum === null ? "known once every stage's day has come and it is solved" : `${rally.optimum} (${tiebreakText(GAME, rally.optimum_tiebreak)})`;
  const par = rally.par === null ? "known once every stage's par is" : String(rally.par);
  clear(document.getElementById("targets"), `The rally's optimum, the sum of the stages': ${optimum}. Its par: ${par}.`);
}

function stageCell(result) {
  return h("td", { class: "day" }, result
    ? h("a", { href: `/runs/${encodeURIComponent(result.run)}` }, String(result.score))
    : "·");
}

function showStandings(rally) {
  const note = rally.league
    ? `${rally.league.name}: the members who started the first stage (${rally.entrants}).`
    : `The best ${rally.standings.length} still in, of ${rally.entrants} who finished the first stage.`;
  document.getElementById("standings-note").textContent = note;
  const target = document.getElementById("standings");
  if (!rally.standings.length) {
    const none = rally.status === "over" ? "Nobody finished this rally." : "Nobody is in this rally yet: it starts with Friday's Crazy Rally daily.";
    clear(target, h("p", { class: "muted" }, none));
    return;
  }
  clear(target, h("div", { class: "table-wrap" }, h("table", { class: "league-table" },
    h("caption", { class: "sr-only" }, "Rally standings"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      [1, 2, 3].map((n) => h("th", { scope: "col", class: "day" },
        h("span", { "aria-hidden": "true" }, `S${n}`), h("span", { class: "sr-only" }, `Stage ${n}`))),
      h("th", { scope: "col" }, "Score"),
      h("th", { scope: "col" }, h("span", { "aria-hidden": "true" }, "Speed"),
        h("span", { class: "sr-only" }, "Final speed of the last stage finished")))),
    h("tbody", {}, rally.standings.map((entry) => h("tr", { class: entry.you ? "you" : null },
      // A player out of the rally has no rank: the column says so.
      h("td", {}, entry.rank ?? STATUS_WORDS[entry.status]),
      h("td", {}, shownName(entry.name), entry.you ? h("span", { class: "you-mark" }, " (you)") : null),
      entry.stages.map(stageCell),
      h("td", {}, h("b", {}, entry.score)),
      h("td", {}, entry.tiebreak ?? "–")))))));
}

// The next rally: a link once it has started, else when it starts.
function showNext(rally) {
  const friday = shiftDays(day, 7);
  const next = document.getElementById("next-rally");
  next.href = rallyUrl(friday, league);
  next.hidden = friday > rally.today;
  document.getElementById("next-start").textContent = rally.status === "over" && next.hidden
    ? `The next rally starts on Friday ${friday}, with that day's Crazy Rally daily.`
    : "";
}

async function fillLeagues() {
  const select = document.getElementById("rally-league");
  try {
    const me = await history.me();
    for (const mine of me.leagues) select.append(h("option", { value: mine.id }, mine.name));
  } catch {
    // Without your leagues, everyone's standings still show.
  }
  select.value = league;
  select.addEventListener("change", () => window.location.assign(rallyUrl(day, select.value)));
}

async function start() {
  document.getElementById("previous-rally").href = rallyUrl(shiftDays(day, -7), league);
  try {
    const [rally] = await Promise.all([leagues.rally(day, league), fillLeagues()]);
    document.getElementById("rally-dates").textContent = `Friday ${rally.start} to Sunday ${rally.end}${rally.status === "over" ? ": over" : ""}`;
    showStages(rally);
    showStandings(rally);
    showNext(rally);
  } catch (error) {
    say(error.message);
  } finally {
    root.setAttribute("aria-busy", "false");
  }
}

start();
