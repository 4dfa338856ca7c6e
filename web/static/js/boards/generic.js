// The generic board, for a game without a board of its own: the view as readable data
// and each legal action as a button, with what the server says it costs or does (its
// stakes). It knows no rule and no game: it reads only the shape of the JSON it is sent.
import { legendBox } from "../legend.js";
import { clear, h } from "../ui.js";

const words = (key) => key.replaceAll("_", " ");
const scalar = (value) => value === null || typeof value !== "object";

function scalarText(value) {
  if (value === null || value === undefined) return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  return String(value);
}

// A value of the view as text, a list or a list of named values, at any depth.
function valueNode(value) {
  if (Array.isArray(value)) {
    if (!value.length) return "none";
    if (value.every(scalar)) return value.map(scalarText).join(", ");
    return h("ol", { class: "view-list" }, value.map((item) => h("li", {}, valueNode(item))));
  }
  if (!scalar(value)) {
    return h("dl", { class: "view-data" }, Object.entries(value).map(([key, item]) =>
      h("div", {}, h("dt", {}, words(key)), h("dd", {}, valueNode(item)))));
  }
  return scalarText(value);
}

// Everything drawn on the board, for its "?" and the "How to play" page.
export function legend() {
  return [
    ["≡", "What you see: everything the rules show you now, by name; nothing still hidden."],
    ["▶", "A move: each move the rules allow now is a button, with what it costs or does."],
  ];
}

// {"type": "take", "count": 2} reads "take (count 2)".
export function describeAction(action) {
  const fields = Object.entries(action).filter(([key]) => key !== "type");
  const details = fields.map(([key, value]) => `${words(key)} ${scalarText(value)}`).join(", ");
  return details ? `${words(action.type)} (${details})` : words(action.type);
}

export const describeMove = (action) => `played ${describeAction(action)}`;

export const describeOutcome = () => "";

// An action's control, named by its fields in name order: [["effort",2],["type","push"]].
const focusKey = (action) => `action:${JSON.stringify(Object.entries(action).sort(([a], [b]) => (a < b ? -1 : 1)))}`;

export const guideStep = (action) => [[focusKey(action)], `Choose "${describeAction(action)}".`];

export function createBoard(root, { interactive, onPlay }) {
  let busy = false;

  const act = (action) => { if (interactive && !busy) onPlay([action]); };

  function seen(state) {
    const scoreNow = state.stakes?.score_now;
    return h("div", { class: "panel", role: "group", "aria-label": "What you see" },
      h("div", { class: "row spread" }, h("h2", {}, "What you see"), legendBox(legend())),
      valueNode(state.view),
      !state.over && Number.isInteger(scoreNow) ? h("p", { class: "muted" }, `Score if the race finished now: ${scoreNow}.`) : null);
  }

  function move(action, notes, first) {
    const said = notes.map((note) => h("span", { class: note.kind }, h("span", { class: "sr-only" }, "; "), note.text));
    if (!interactive) return h("li", {}, describeAction(action), said.length ? h("span", { class: "card-stakes" }, said) : null);
    return h("li", {}, h("button", {
      type: "button", "data-focus-key": focusKey(action), "data-primary": first || null, onclick: () => act(action),
    }, h("span", {}, describeAction(action)), said.length ? h("span", { class: "card-stakes" }, said) : null));
  }

  function moves(state) {
    if (state.over) {
      return h("div", { class: "panel outcome", role: "group", "aria-label": "Race over" },
        h("h2", {}, state.finished ? `Score ${state.score}` : "No score"),
        h("p", {}, state.finished ? "Finished!" : "The race ended without reaching the finish."));
    }
    const notes = state.stakes?.notes || [];
    return h("div", { class: "panel", role: "group", "aria-label": "Your moves" },
      h("h2", {}, interactive ? "Your moves" : "The moves allowed"),
      h("ul", { class: "generic-moves" }, state.legal_actions.map((action, i) => move(action, notes[i] || [], i === 0))));
  }

  return {
    show(state) {
      clear(root, h("div", { class: "generic-board" }, seen(state), moves(state)));
    },
    setBusy(value) {
      busy = value;
      root.querySelectorAll("button").forEach((b) => { if (value) b.setAttribute("aria-disabled", "true"); else b.removeAttribute("aria-disabled"); });
    },
  };
}
