// The stats page: the player's history from the server, and the transfer link.
import { history } from "./history.js";
import { say } from "./ui.js";
import { showStats } from "./stats.js";
import { copyText } from "./share.js";

const stats = document.getElementById("stats");
const make = document.getElementById("make-transfer");
const box = document.getElementById("transfer-link");
const field = document.getElementById("transfer-url");

async function makeLink() {
  make.disabled = true;
  try {
    const link = await history.transferLink();
    field.value = link.url;
    const until = new Date(link.expires_at);
    document.getElementById("transfer-expiry").textContent = `Valid once, until ${until.toISOString().slice(11, 16)} UTC.`;
    box.hidden = false;
    field.select();
  } catch (error) {
    say(error.status === 404 ? "This browser has no player yet: play a daily or a practice race first." : error.message);
  } finally {
    make.disabled = false;
  }
}

make.addEventListener("click", makeLink);
document.getElementById("copy-transfer").addEventListener("click", async () => {
  say(await copyText(field.value) ? "Link copied." : "Copy the link from the box.", "info");
});

async function start() {
  try {
    showStats(stats, await history.me());
  } catch (error) {
    say(`Your stats could not be loaded. ${error.message}`);
  } finally {
    stats.setAttribute("aria-busy", "false");
  }
}

start();
