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

export const gameTitles = () => JSON.parse(document.body.dataset.games || "{}");

export const gameTitle = (game) => gameTitles()[game] || game;

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

export function playUrl(game, seed) {
  return `/play/${encodeURIComponent(game)}/${encodeURIComponent(seed)}`;
}

// A daily's play page: today's is the player's one attempt, a past one is practice.
export function dailyUrl(game, date) {
  return `/daily/${encodeURIComponent(date)}/${encodeURIComponent(game)}`;
}

// Practice of a daily whose attempt is over ("Play again"), never stored as a run.
export function dailyPracticeUrl(game, date) {
  return `${dailyUrl(game, date)}/practice`;
}

// Keep keyboard focus on "the same" control across a re-render: controls carry
// data-focus-key, and after drawing we focus the one with the remembered key.
export function rememberFocus() {
  const active = document.activeElement;
  return active && active.dataset ? active.dataset.focusKey || null : null;
}

export function restoreFocus(root, key) {
  if (!key) return;
  const same = root.querySelector(`[data-focus-key="${CSS.escape(key)}"]:not(:disabled)`);
  const fallback = root.querySelector("[data-primary]:not(:disabled), button:not(:disabled)");
  (same || fallback)?.focus();
}
