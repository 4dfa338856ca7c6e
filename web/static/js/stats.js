// The player's stats from GET /api/v1/me, game by game: days played, current and best
// streak, and how far below the optimum (and par) their official runs scored.
import { history } from "./history.js";
import { gameTitle, h, clear, signed } from "./ui.js";

const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

function figure(label, value) {
  return h("div", { class: "stat-figure" }, h("b", {}, String(value)), h("span", {}, label));
}

function mean(distances) {
  return distances.mean === null ? "–" : distances.mean.toFixed(1);
}

// A score's place against a target, from its distance below it (negative: above it).
const against = (distance) => (distance === 0 ? "=" : signed(-distance));

function meanAgainst(distances) {
  return distances.mean === null ? "–" : against(Number(distances.mean.toFixed(1)));
}

function binLabel(distance, target) {
  if (distance === 0) return `at ${target}`;
  return distance > 0 ? `${distance} below ${target}` : `${-distance} above ${target}`;
}

// Runs by distance as horizontal bars, the smallest distance (0: the optimum) first.
function distanceBars(distances, target) {
  if (!distances.histogram.length) return h("p", { class: "muted" }, "Not known yet for your runs.");
  const most = Math.max(...distances.histogram.map((bin) => bin.runs));
  return h("ol", { class: "distance-bars", "aria-label": `Your official runs by points against ${target}` },
    distances.histogram.map((bin) => {
      const bar = h("span", { class: "distance-fill" }, String(bin.runs));
      bar.style.width = `${Math.max(8, Math.round((bin.runs / most) * 100))}%`;
      return h("li", { "aria-label": `${plural(bin.runs, "run")} ${binLabel(bin.distance, target)}` },
        h("span", { class: "distance-label" }, against(bin.distance)), bar);
    }));
}

// One game's stats as a panel section.
export function gameStats(game, stats, heading = gameTitle(game), ...after) {
  return h("section", { class: "panel game-stats", "aria-label": `${gameTitle(game)} stats`, dataset: { game } },
    h("h2", {}, heading),
    h("div", { class: "stat-figures" },
      figure("days played", stats.days_played),
      figure("current streak", stats.current_streak),
      figure("best streak", stats.best_streak),
      figure("mean below optimum", mean(stats.to_optimum))),
    stats.days_played
      ? [h("h3", {}, "Points below the optimum"), distanceBars(stats.to_optimum, "the optimum")]
      : h("p", { class: "muted" }, "No daily finished on its day yet: your streak starts with today's."),
    stats.to_par.histogram.length ? [h("h3", {}, `Points against par (mean ${meanAgainst(stats.to_par)})`), distanceBars(stats.to_par, "par")] : null,
    after);
}

// Every game's stats (or only games) into root.
export function showStats(root, me, games = Object.keys(me.games)) {
  clear(root, games.map((game) => gameStats(game, me.games[game])));
}

// The stats panel after a daily: the player's stats of its game, from the server.
export async function showStatsPanel(root, game) {
  const me = await history.me();
  clear(root, gameStats(game, me.games[game], `Your ${gameTitle(game)} stats`,
    h("p", {}, h("a", { href: "/me" }, "All your stats"))));
  root.hidden = false;
}
