// An invite link's page: the token travels in the fragment (never sent to the server with
// the page) and is sent only when the player confirms, under the name they give.
import { history } from "./history.js";
import { leagues, leagueUrl } from "./league-api.js";
import { say } from "./ui.js";

const token = location.hash.slice(1);
const form = document.getElementById("join-form");
const button = document.getElementById("join-button");
const yourName = document.getElementById("your-name");

async function join(event) {
  event.preventDefault();
  button.disabled = true;
  try {
    const league = await leagues.join(token, yourName.value.trim());
    // The token leaves the address bar and the page's history entry.
    window.history.replaceState(null, "", location.pathname);
    window.location.assign(leagueUrl(league.id));
  } catch (error) {
    say(error.status === 404
      ? "This invite link does not open any league: it was renewed, or it is incomplete. Ask a member of the league for the current link. (If the league's maker removed you, no link of it lets you in until they let you back in.)"
      : error.message);
    button.disabled = false;
  }
}

if (!token) {
  button.disabled = true;
  say("This link is incomplete: copy the whole invite link, with the part after #.");
} else {
  form.addEventListener("submit", join);
  history.me().then((me) => {
    if (me.name && !yourName.value) yourName.value = me.name;
  }).catch(() => {});
}
