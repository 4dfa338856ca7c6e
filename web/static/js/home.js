// Home: today's puzzle of each game and the countdown to the next ones.
import { api } from "./api.js";
import { history } from "./history.js";
import { attemptOf, statusBadge, todayResult } from "./today.js";
import { tiebreakRule } from "./tiebreaks.js";
import { clear, dailyUrl, gameTitle, h, optimumSummary, parSummary, say } from "./ui.js";
import { playerCount } from "./puzzles.js";

const section = document.getElementById("today");

// Fill the game's card (drawn by the page) with today's puzzle. Your attempt, as the
// server knows it, decides the rest: over, your result and its share; started,
// "Continue"; else "Play".
function showPuzzle(puzzle, players, attempt) {
  const card = section.querySelector(`.puzzle-card[data-game="${puzzle.game}"]`);
  if (!card) return;
  const verb = attempt ? "Continue" : "Play";
  const title = gameTitle(puzzle.game);
  clear(card.querySelector(".status"), statusBadge(attempt));
  clear(card.querySelector(".puzzle-body"),
    h("dl", { class: "facts" },
      h("dt", {}, "Puzzle"), h("dd", {}, `#${puzzle.number}`),
      h("dt", {}, "Date"), h("dd", {}, h("time", { datetime: puzzle.date }, puzzle.date)),
      h("dt", {}, "Optimum"), h("dd", { "data-optimum": "" }, optimumSummary(puzzle)),
      h("dt", {}, "Par"), h("dd", { "data-par": "" }, parSummary(puzzle)),
      h("dt", {}, "Tie-break"), h("dd", {}, tiebreakRule(puzzle.game).replace("Tie-break: ", "")),
      h("dt", {}, "Played by"), h("dd", { "data-players": "" }, players === null ? "–" : playersText(players))),
    attempt?.over ? todayResult(attempt) : null,
    h("div", { class: "row" },
      attempt?.over ? null : h("a", { class: "button primary", href: dailyUrl(puzzle.game, puzzle.date), "aria-label": `${verb}: ${title} #${puzzle.number}` }, verb),
      h("a", { class: "button", href: `/how-to-play/${puzzle.game}`, "aria-label": `How to play ${title}` }, "How to play")));
}

function playersText(count) {
  return count === 1 ? "1 player" : `${count} players`;
}

async function showToday() {
  try {
    // Without an answer about you, the cards still show the puzzles (and "Play").
    const [daily, me] = await Promise.all([api.daily(), history.me().catch(() => null)]);
    const counts = await Promise.all(daily.puzzles.map((p) => playerCount(p).catch(() => null)));
    daily.puzzles.forEach((puzzle, i) => showPuzzle(puzzle, counts[i], attemptOf(me, puzzle.game)));
  } catch (error) {
    say(`Today's puzzles could not be loaded. ${error.message}`);
  } finally {
    section.setAttribute("aria-busy", "false");
  }
}

function untilMidnightUtc(now) {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return next - now.getTime();
}

function twoDigits(n) {
  return String(n).padStart(2, "0");
}

function startCountdown() {
  const clock = document.getElementById("countdown");
  let day = new Date().getUTCDate();
  const tick = () => {
    const now = new Date();
    const left = Math.max(0, Math.floor(untilMidnightUtc(now) / 1000));
    clock.textContent = `${twoDigits(Math.floor(left / 3600))}:${twoDigits(Math.floor(left / 60) % 60)}:${twoDigits(left % 60)}`;
    clock.setAttribute("aria-label", `${Math.floor(left / 3600)} hours ${Math.floor(left / 60) % 60} minutes until the next puzzles`);
    if (now.getUTCDate() !== day) {
      day = now.getUTCDate();
      showToday();
    }
  };
  tick();
  setInterval(tick, 1000);
}

showToday();
startCountdown();
