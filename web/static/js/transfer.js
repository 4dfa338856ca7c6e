// A transfer link's page: the token travels in the fragment (never sent to the server
// with the page) and is spent only when the player confirms.
import { history } from "./history.js";
import { h, clear, say } from "./ui.js";

const token = location.hash.slice(1);
const button = document.getElementById("redeem-button");
const done = document.getElementById("redeemed");

async function redeem() {
  button.disabled = true;
  try {
    const answer = await history.redeem(token);
    // The token is spent: it leaves the address bar and the page's history entry.
    forgetToken();
    document.getElementById("redeem").hidden = true;
    const who = answer.name ? `as ${answer.name}` : "as the link's player";
    clear(done, `Done: this browser now plays ${who}. `, h("a", { href: "/me" }, "See your stats"), ".");
    done.hidden = false;
  } catch (error) {
    say(error.status === 404 ? "This transfer link was used already or has expired. Ask for a new one on the other device (Your stats, Play on another device)." : error.message);
    button.disabled = false;
  }
}

function forgetToken() {
  window.history.replaceState(null, "", location.pathname);
}

if (!token) {
  button.disabled = true;
  say("This link is incomplete: copy the whole transfer link, with the part after #.");
} else {
  button.addEventListener("click", redeem);
}
