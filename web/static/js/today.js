// The home page's card of a daily the player has played today: their result and its share
// in place of the big "Play" (from GET /api/v1/me and the run's share, not this device).
import { history } from "./history.js";
import { copyText } from "./share.js";
import { h, say } from "./ui.js";

// The player's attempt of the game's daily today, from the /me answer (null if none).
export const attemptOf = (me, game) => me?.attempts.find((attempt) => attempt.game === game) ?? null;

export function statusBadge(attempt) {
  if (attempt?.over) {
    return h("a", { href: `/runs/${encodeURIComponent(attempt.run)}`, class: "badge done" },
      `✓ Played: ${attempt.score ?? "did not finish"}`);
  }
  if (attempt) return h("span", { class: "badge todo" }, "◐ In progress");
  return h("span", { class: "badge todo" }, "○ Not played yet");
}

// Your result, the share text with its strip, and the buttons to share it and see the run.
export function todayResult(attempt) {
  const text = h("pre", { class: "today-share", "aria-label": "Your share text" }, "…");
  const status = h("p", { class: "muted small", role: "status", "aria-live": "polite" });
  const share = h("button", { type: "button", class: "primary", disabled: true }, "Share result");
  history.share(attempt.run).then((shared) => {
    text.textContent = shared.text;
    share.disabled = false;
    share.addEventListener("click", async () => {
      if (navigator.share) {
        try {
          await navigator.share({ text: shared.text });
          return;
        } catch (error) {
          if (error.name === "AbortError") return;
        }
      }
      status.textContent = (await copyText(shared.text)) ? "Copied to the clipboard." : "Select the text above to copy it.";
    });
  }).catch((error) => say(`Your share text could not be loaded. ${error.message}`));
  const score = attempt.score === null ? "did not finish" : `${attempt.score} points`;
  return h("div", { class: "today-result" },
    h("p", { class: "big" }, `Your result: ${score}`),
    text,
    h("div", { class: "row" },
      share,
      h("a", { class: "button", href: `/runs/${encodeURIComponent(attempt.run)}` }, "See your run")),
    status);
}
