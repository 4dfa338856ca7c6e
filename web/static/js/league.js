// A league's page (GET /api/v1/leagues/{id}): each game's standings today and yesterday,
// with the daily's optimum and par beside them, the week's table, the invite link and the
// members. Scores only: no move of anyone's run shows before its day is over.
import { leagues, rallyStartOf, rallyUrl, shownName, STATUS_WORDS } from "./league-api.js";
import { copyText } from "./share.js";
import { tiebreakHeading, tiebreakText } from "./tiebreaks.js";
import { clear, gameTitle, h, optimumSummary, parSummary, say } from "./ui.js";

const root = document.getElementById("league");
const id = root.dataset.league;
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
let league = null;

const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

function puzzleOf(day, game) {
  return day?.puzzles.find((puzzle) => puzzle.game === game) || null;
}

function targets(puzzle) {
  if (!puzzle) return "No daily that day.";
  return `#${puzzle.number} · optimum ${optimumSummary(puzzle)} · par ${parSummary(puzzle)}`;
}

function nameCell(entry) {
  const you = entry.member === league.you;
  return h("td", {}, shownName(entry.name), you ? h("span", { class: "you-mark" }, " (you)") : null);
}

function dayTable(game, entries, caption, over) {
  return h("div", { class: "table-wrap" }, h("table", { class: "league-table" },
    h("caption", { class: "sr-only" }, caption),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      h("th", { scope: "col" }, "Score"), h("th", { scope: "col" }, tiebreakHeading(game)))),
    h("tbody", {}, entries.map((entry) => h("tr", { class: entry.member === league.you ? "you" : null },
      h("td", {}, entry.rank ?? "–"),
      nameCell(entry),
      entry.status === "finished"
        ? [h("td", {}, h("a", { href: `/runs/${encodeURIComponent(entry.run)}` }, String(entry.score))),
          h("td", {}, tiebreakText(game, entry.tiebreak))]
        : h("td", { class: "muted", colspan: 2 }, statusWords(entry.status, over)))))));
}

function statusWords(status, over) {
  return over && status === "not_played" ? "did not play" : STATUS_WORDS[status];
}

function dayStandings(target, standings, day, when, over) {
  const games = Object.keys(standings).sort();
  clear(target, games.map((game) => {
    const puzzle = puzzleOf(day, game);
    return h("section", { class: "league-game", dataset: { game } },
      h("h3", {}, gameTitle(game)),
      h("p", { class: "muted small" }, targets(puzzle)),
      dayTable(game, standings[game], `${gameTitle(game)}, ${when}`, over));
  }));
}

function weekTable(game, rows, days) {
  // Focusable, so that a keyboard can scroll it where long names make it wider than the screen.
  const label = `${gameTitle(game)}, points of the week`;
  return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": label }, h("table", { class: "league-table week-table" },
    h("caption", { class: "sr-only" }, `${gameTitle(game)}, points of the week`),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      days.map((day, index) => h("th", { scope: "col", class: "day", abbr: `${WEEKDAYS[index]} ${day}` },
        h("span", { "aria-hidden": "true" }, WEEKDAYS[index].slice(0, 1)),
        h("span", { class: "sr-only" }, `${WEEKDAYS[index]} ${day}`))),
      h("th", { scope: "col" }, "Points"), h("th", { scope: "col" }, "Days"), h("th", { scope: "col" }, "Streak"))),
    h("tbody", {}, rows.map((row) => h("tr", { class: row.member === league.you ? "you" : null },
      h("td", {}, row.rank),
      nameCell(row),
      row.days.map((points) => h("td", { class: "day" }, points ?? "·")),
      h("td", {}, h("b", {}, row.points)),
      h("td", {}, row.days_played),
      h("td", {}, row.current_streak))))));
}

function showWeek() {
  const week = league.week;
  document.getElementById("week-dates").textContent =
    `Monday ${week.start} to Sunday ${week.end} (UTC): the points are each day's official score; the streak counts days in a row with one.`;
  clear(document.getElementById("week"), Object.keys(week.games).sort().map((game) =>
    h("section", { class: "league-game", dataset: { game } },
      h("h3", {}, gameTitle(game)), weekTable(game, week.games[game], week.days))));
}

// A button that asks once more before it acts: its words change to the question.
function confirming(button, question, act) {
  const words = button.textContent;
  let armed = false;
  button.addEventListener("click", async () => {
    if (!armed) {
      armed = true;
      button.textContent = question;
      return;
    }
    button.disabled = true;
    try {
      await act();
    } catch (error) {
      say(error.message);
      button.disabled = false;
      button.textContent = words;
      armed = false;
    }
  });
}

function showMembers() {
  const maker = league.maker === league.you;
  clear(document.getElementById("members"), league.members.map((member) => {
    const removable = maker && member.member !== league.you;
    const remove = removable ? h("button", { type: "button", class: "small-button" }, `Remove ${shownName(member.name)}`) : null;
    if (remove) confirming(remove, `Really remove ${shownName(member.name)}?`, async () => show(await leagues.remove(id, member.member)));
    return h("li", {},
      h("span", {}, shownName(member.name)),
      member.member === league.maker ? h("span", { class: "maker-badge" }, " maker") : null,
      member.member === league.you ? h("span", { class: "muted" }, " (you)") : null,
      remove);
  }));
}

// The players the maker removed (the API lists them to the maker only), each with the
// button that lets them back in.
function showRemoved() {
  const removed = league.removed || [];
  document.getElementById("removed-panel").hidden = league.maker !== league.you || removed.length === 0;
  clear(document.getElementById("removed"), removed.map((player) => {
    const name = shownName(player.name);
    const readmit = h("button", { type: "button", class: "small-button" }, `Let ${name} back in`);
    confirming(readmit, `Really let ${name} back in?`, async () => show(await leagues.readmit(id, player.member)));
    return h("li", {}, h("span", {}, name), h("span", { class: "muted" }, ` removed ${player.removed_at.slice(0, 10)}`), readmit);
  }));
}

function showInvite() {
  document.getElementById("invite-url").value = league.invite_url;
  document.getElementById("maker-tools").hidden = league.maker !== league.you;
}

function show(answer) {
  league = answer;
  document.title = `${league.name} · Rally Daily`;
  document.getElementById("league-name").textContent = league.name;
  const maker = league.members.find((member) => member.member === league.maker);
  document.getElementById("league-summary").textContent =
    `${plural(league.members.length, "member")} · made by ${league.maker === league.you ? "you" : shownName(maker?.name)}`;
  const today = league.dailies.today;
  dayStandings(document.getElementById("today"), league.today, today, "today", false);
  if (league.dailies.yesterday) {
    dayStandings(document.getElementById("yesterday"), league.yesterday, league.dailies.yesterday, "yesterday, final", true);
  } else {
    clear(document.getElementById("yesterday"), h("p", { class: "muted" }, "There was no daily yesterday."));
  }
  showWeek();
  showInvite();
  showMembers();
  showRemoved();
  if (today) document.getElementById("rally-link").href = rallyUrl(rallyStartOf(today.date), id);
}

async function start() {
  try {
    show(await leagues.get(id));
  } catch (error) {
    document.getElementById("league-summary").textContent = error.status === 404 ? "No such league." : "The league could not be loaded.";
    say(error.message);
  } finally {
    root.setAttribute("aria-busy", "false");
  }
}

document.getElementById("copy-invite").addEventListener("click", async () => {
  const status = document.getElementById("invite-status");
  status.textContent = (await copyText(league.invite_url)) ? "Link copied." : "Select the link above to copy it.";
});
document.getElementById("renew-invite").addEventListener("click", async () => {
  try {
    show(await leagues.renewInvite(id));
    document.getElementById("invite-status").textContent = "A new link: the old one no longer works.";
  } catch (error) {
    say(error.message);
  }
});
confirming(document.getElementById("leave"), "Really leave the league?", async () => {
  await leagues.leave(id);
  window.location.assign("/leagues");
});

start();
