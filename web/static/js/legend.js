// The "?" on every board: a legend of what is drawn on it, opened on demand, and the same
// legend on each game's "How to play" page.
import { h } from "./ui.js";

// entries: [symbol (a node or text, hidden from screen readers), words] pairs.
export function legendList(entries) {
  return h("ul", { class: "legend-list" }, entries.map(([symbol, words]) =>
    h("li", {}, h("span", { class: "legend-symbol", "aria-hidden": "true" }, symbol), h("span", {}, words))));
}

export function legendBox(entries) {
  return h("details", { class: "legend-box" },
    h("summary", {}, h("span", { "aria-hidden": "true" }, "?"), h("span", { class: "sr-only" }, "What is on this board")),
    legendList(entries));
}
