// Sharing a run: the text the server composes (GET /api/v1/runs/{id}/share: game, number,
// score against the optimum, a spoiler-free strip, the link) handed to the native share
// sheet where there is one, else copied to the clipboard.
import { history } from "./history.js";
import { h, clear } from "./ui.js";

// True when text reached the clipboard.
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

// The share sheet, else the clipboard, else the text selected for copying by hand.
async function shareOrCopy(text, status, area) {
  if (navigator.share) {
    try {
      await navigator.share({ text });
      status.textContent = "Shared.";
      return;
    } catch (error) {
      if (error.name === "AbortError") return;
    }
  }
  if (await copyText(text)) {
    status.textContent = "Copied to the clipboard: paste it anywhere.";
    return;
  }
  area.focus();
  area.select();
  status.textContent = "Copying was not allowed here: the text is selected, press Ctrl+C (or ⌘C) to copy it.";
}

// The whole text in sight: as many rows as it takes at this width, no scrolling inside.
function fitRows(area) {
  area.style.height = "auto";
  area.style.height = `${area.scrollHeight + 4}px`;
}

// A choice of the player's leagues under the share text: the text then ends with an
// invitation to the one chosen (its invite link), asked of the server.
async function leagueChoice(runId, area, status) {
  const me = await history.me().catch(() => null);
  if (!me?.leagues.length) return;
  const select = h("select", { id: "share-league" },
    h("option", { value: "" }, "No league"),
    me.leagues.map((league) => h("option", { value: league.id }, league.name)));
  select.addEventListener("change", async () => {
    try {
      area.value = (await history.share(runId, select.value || null)).text;
      fitRows(area);
    } catch (error) {
      status.textContent = `The invitation could not be added. ${error.message}`;
    }
  });
  area.after(h("div", { class: "field share-league" },
    h("label", { for: "share-league" }, "Invite to one of your leagues"), select));
}

// Fill the result page's share box (#share-box, #share-text, #share-status, #share-legend)
// and its button (#share) with the run's share.
export async function showShare(runId) {
  const shared = await history.share(runId);
  const area = document.getElementById("share-text");
  const status = document.getElementById("share-status");
  area.value = shared.text;
  document.getElementById("share-box").hidden = false;
  fitRows(area);
  window.addEventListener("resize", () => fitRows(area));
  clear(document.getElementById("share-legend"),
    shared.legend.map((entry) => h("span", { class: "legend-entry" }, `${entry.symbol} ${entry.words}`)));
  const button = document.getElementById("share");
  button.hidden = false;
  // What is shared is the text as it stands, a league's invitation included.
  button.addEventListener("click", () => shareOrCopy(area.value, status, area));
  leagueChoice(runId, area, status);
  return shared;
}
