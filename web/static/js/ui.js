import { serverNow } from "./api.js";
import { tiebreakText } from "./tiebreaks.js";

// Small DOM helpers shared by every page.

// h("button", {class: "primary", onclick: f}, "Roll") builds an element.
export function h(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:")
    ? document.createElementNS("http://www.w3.org/2000/svg", tag.slice(4))
    : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

const messages = () => document.getElementById("messages");

// A message in plain words; kind is "error", "info" or "ok".
export function say(text, kind = "error") {
  const box = messages();
  const close = h("button", { class: "close", type: "button", "aria-label": "Dismiss message" }, "×");
  const message = h("div", { class: `message ${kind}` }, h("span", {}, text), close);
  close.addEventListener("click", () => message.remove());
  clear(box, message);
}

export function unsay() {
  clear(messages());
}

export { gameTitle, gameTitles } from "./games.js";

// A change or a difference with its sign, the minus a true minus: "+2", "−3", "±0".
export const signed = (n) => (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "±0");

export function puzzleLabel(puzzle) {
  return puzzle && puzzle.number ? `#${puzzle.number} · ${puzzle.date}` : "Practice";
}

export function optimumText(puzzle) {
  if (!puzzle) return "unknown";
  if (puzzle.status === "solved") return puzzle.optimum === null ? "no finishing run exists" : String(puzzle.optimum);
  if (puzzle.status === "failed") return "could not be computed";
  return "being computed…";
}

// The optimum with its tie-break ("18 (in 17 rounds)"): for Rallye Raser the rounds are
// what differ between seeds, so the score alone says little.
export function optimumSummary(puzzle) {
  const text = optimumText(puzzle);
  if (puzzle?.status !== "solved" || puzzle.optimum === null) return text;
  const tiebreak = tiebreakText(puzzle.game, puzzle.tiebreak);
  return tiebreak ? `${text} (${tiebreak})` : text;
}

// Par, the expert's score playing without foresight, with its tie-break ("16 (in 22
// rounds)"): the target to beat, shown as a number during the day as after it, never its line.
export function parSummary(puzzle) {
  if (!puzzle) return "unknown";
  if (!Number.isInteger(puzzle.par)) return puzzle.par_computed ? "the expert did not finish" : "being computed…";
  const tiebreak = tiebreakText(puzzle.game, puzzle.par_tiebreak);
  return tiebreak ? `${puzzle.par} (${tiebreak})` : String(puzzle.par);
}

// Par as a score card shows it: its figure ("–" until known) and, under it, its
// tie-break or why there is none.
export function parFigure(puzzle, game) {
  if (Number.isInteger(puzzle.par)) return { figure: String(puzzle.par), note: tiebreakText(game, puzzle.par_tiebreak) };
  return { figure: "–", note: puzzle.par_computed ? "the expert did not finish" : "not computed yet" };
}

// A daily's lines of play (its optimal line, other players' moves, practice of it) stay
// hidden from everyone until its day is over: true while they do.
export const lineHidden = (puzzle) => Boolean(puzzle?.date && puzzle.line_opens_at && !puzzle.seed);

function waitText(ms) {
  const minutes = Math.ceil(ms / 60000);
  if (minutes <= 1) return "in less than a minute";
  const hours = Math.floor(minutes / 60);
  return hours ? `in ${hours} h ${minutes % 60} min` : `in ${minutes} min`;
}

// When a moment the server gave comes, in words: "00:00 UTC, in 7 h 12 min"; null once
// it has come. The wait is counted on the server's clock, not this device's.
export function opensText(moment) {
  const at = new Date(moment);
  const left = at.getTime() - serverNow();
  if (!(left > 0)) return null;
  const time = `${String(at.getUTCHours()).padStart(2, "0")}:${String(at.getUTCMinutes()).padStart(2, "0")} UTC`;
  return `${time}, ${waitText(left)}`;
}

// Keep node saying sentence(when) until the moment comes (updated each minute), then
// sentence(null).
export function countDownTo(node, moment, sentence) {
  const show = () => {
    const when = opensText(moment);
    node.textContent = sentence(when);
    if (when) setTimeout(show, 60000 - (serverNow() % 60000) + 50);
  };
  show();
}

export function playUrl(game, seed) {
  return `/play/${encodeURIComponent(game)}/${encodeURIComponent(seed)}`;
}

// A daily's play page: today's is the player's one attempt, a past one is practice.
export function dailyUrl(game, date) {
  return `/daily/${encodeURIComponent(date)}/${encodeURIComponent(game)}`;
}

// A daily's own page in the archive: its optimum, par, leaderboard and lines.
export function archiveDayUrl(game, date) {
  return `/archive/${encodeURIComponent(date)}/${encodeURIComponent(game)}`;
}

// Keep keyboard focus on "the same" control across a re-render: controls carry
// data-focus-key, and after drawing we focus the one with the remembered key.
export function rememberFocus() {
  const active = document.activeElement;
  return active && active.dataset ? active.dataset.focusKey || null : null;
}

// The focus moves without scrolling: the board scrolls itself to keep the car and the
// step's controls in view (keepInSight). A control gone from the board hands the focus to
// the one it marks primary, wherever it stands, and only then to its first button (on the
// Rallye Raser road, a field can come before the dice, and a field can cost a timer point).
// Nor does it stay on a control the new position made costly: one reflexive Enter there
// would lose control.
export function restoreFocus(root, key) {
  if (!key) return;
  const safe = (control) => control && !(control.dataset.stakes || "").includes("loss_of_control");
  const next = [
    root.querySelector(`[data-focus-key="${CSS.escape(key)}"]:not(:disabled)`),
    root.querySelector("[data-primary]:not(:disabled)"),
    ...root.querySelectorAll("button:not(:disabled)"),
  ].find(safe);
  next?.focus({ preventScroll: true });
}

// Whether the layout asks a board to keep its step in view itself (site.css: on a phone).
export const keepsInSight = (board) => getComputedStyle(board).getPropertyValue("--keep-in-sight").trim() === "on";

// Scrolls the page as little as it takes to show the first of spans (lists of elements,
// the most wanted first) that fits on the screen whole; when none does, the last from its top.
export function scrollToShow(spans, smooth = false) {
  const margin = 8;
  const room = window.innerHeight - 2 * margin;
  const extent = (span) => {
    const boxes = span.filter(Boolean).map((element) => element.getBoundingClientRect());
    return [Math.min(...boxes.map((box) => box.top)), Math.max(...boxes.map((box) => box.bottom))];
  };
  const fitting = spans.map(extent).find(([top, bottom]) => bottom - top <= room);
  const [top, bottom] = fitting ?? extent(spans[spans.length - 1]);
  const over = bottom - (window.innerHeight - margin);
  const shift = fitting && over > 0 ? over : top < margin || !fitting ? top - margin : 0;
  if (shift) window.scrollBy({ top: shift, behavior: smooth ? "smooth" : "auto" });
}
