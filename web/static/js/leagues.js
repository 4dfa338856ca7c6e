// The leagues page: the player's leagues (from GET /api/v1/me) and the form that makes one.
import { history } from "./history.js";
import { leagues, leagueUrl } from "./league-api.js";
import { clear, h, say } from "./ui.js";

const list = document.getElementById("my-leagues");
const form = document.getElementById("make-league");
const yourName = document.getElementById("your-name");

function showLeagues(mine) {
  if (!mine.length) {
    clear(list, h("p", { class: "muted" }, "You are in no league yet. Make one below, or open an invite link a friend sent you."));
    return;
  }
  clear(list, h("ul", { class: "league-list" }, mine.map((league) => h("li", {},
    h("a", { href: leagueUrl(league.id) }, league.name),
    h("span", { class: "muted small" },
      ` · ${league.members} ${league.members === 1 ? "member" : "members"}${league.maker ? " · you made it" : ""}`)))));
}

async function start() {
  try {
    const me = await history.me();
    if (me.name && !yourName.value) yourName.value = me.name;
    showLeagues(me.leagues);
  } catch (error) {
    clear(list, h("p", { class: "muted" }, "Your leagues could not be loaded."));
    say(error.message);
  } finally {
    list.setAttribute("aria-busy", "false");
  }
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = document.getElementById("make-button");
  button.disabled = true;
  try {
    const made = await leagues.make(document.getElementById("league-name").value.trim(), yourName.value.trim());
    window.location.assign(leagueUrl(made.id));
  } catch (error) {
    say(error.message);
    button.disabled = false;
  }
});

start();
