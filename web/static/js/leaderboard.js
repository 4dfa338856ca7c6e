// A puzzle's leaderboard as a table: its best ten official runs, each linked to its result
// page, a look-alike name marked with its player's tag.
import { tiebreakHeading, tiebreakText } from "./tiebreaks.js";
import { h } from "./ui.js";

// The table of board (a leaderboard as the API answers it) of game; null when no one played.
export function leaderboardTable(board, game) {
  const entries = board.entries || [];
  if (!entries.length) return null;
  return h("table", {},
    h("caption", { class: "sr-only" }, "Leaderboard"),
    h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Player"),
      h("th", { scope: "col" }, "Score"), h("th", { scope: "col" }, tiebreakHeading(game)))),
    h("tbody", {}, entries.slice(0, 10).map((entry) => h("tr", {},
      h("td", {}, entry.rank),
      h("td", {}, h("a", { href: `/runs/${encodeURIComponent(entry.run_id)}` }, entry.name || "anonymous"),
        entry.tag ? h("span", { class: "name-tag", title: "Another name on this board looks the same: this mark tells the players apart" }, ` #${entry.tag}`) : null),
      h("td", {}, entry.score), h("td", {}, tiebreakText(game, entry.tiebreak))))));
}
