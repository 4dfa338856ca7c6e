// Practice: play any seed of either game, and continue races left in progress.
import { runsInProgress } from "./storage.js";
import { clear, gameTitle, h, playUrl, say } from "./ui.js";

const form = document.getElementById("practice-form");
const seedInput = document.getElementById("practice-seed");
const gameSelect = document.getElementById("practice-game");
const SEED_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789";

function randomSeed() {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return "p-" + Array.from(bytes, (b) => SEED_ALPHABET[b % SEED_ALPHABET.length]).join("");
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const seed = seedInput.value.trim();
  if (!seedInput.checkValidity() || !seed) {
    seedInput.setAttribute("aria-invalid", "true");
    say("A seed is 1 to 64 letters, digits, hyphens or underscores.");
    seedInput.focus();
    return;
  }
  window.location.assign(playUrl(gameSelect.value, seed));
});

document.getElementById("random-seed").addEventListener("click", () => {
  seedInput.value = randomSeed();
  seedInput.removeAttribute("aria-invalid");
  seedInput.focus();
});

const wanted = new URLSearchParams(location.search).get("game");
if (wanted && [...gameSelect.options].some((option) => option.value === wanted)) gameSelect.value = wanted;

const list = document.getElementById("in-progress");
const runs = runsInProgress();
if (runs.length) {
  clear(list, runs.map((run) => h("li", {},
    h("a", { href: playUrl(run.game, run.seed) }, `${gameTitle(run.game)}, seed ${run.seed}`),
    ` (${run.steps} moves played)`)));
}
