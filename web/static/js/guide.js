// The guided first game: for its first turns the page points at what to do next (the
// controls of the next move of a good line, outlined) and says what the last move did,
// in the words the server gave for it before it was made (its stakes).
import { clear, h } from "./ui.js";

const LANE_NAMES = { L: "left", M: "middle", R: "right" };
const LANE_DICE = { L: "1 or 2", M: "3 or 4", R: "5 or 6" };
const field = (a) => `row ${a.row + 1}, ${LANE_NAMES[a.lane]} lane`;
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// The controls of a move, in the order they are used (as data-focus-key values), and what
// to do in words. A gear change travels with the roll, so the two are one step.
const STEPS = {
  "rallye-raser": (action, view, next) => {
    switch (action.type) {
      case "gear": return [[`gear:${action.gear}`, "roll"],
        `Shift to gear ${action.gear}, then roll: the gear is how many dice your route takes this round (one step up or down is free).`];
      case "roll": return [["roll"], "Roll the three dice."];
      case "reroll": return [["reroll"], "Reroll the dice you have not used."];
      case "place": {
        const value = view.pool[action.die];
        return [[`die:${action.die}`, `field:${action.row}:${action.lane}`],
          `Choose the ${value}, then the field marked + on ${field(action)}: a ${value} fits the ${LANE_NAMES[action.lane]} lane, which takes ${LANE_DICE[action.lane]}.`];
      }
      case "reserve": return [[`die:${action.die}`, "reserve-die"], `Choose the ${view.pool[action.die]}, then "Reserve this die": it waits for a later round.`];
      case "place_reserve": return [["reserve", `field:${action.row}:${action.lane}`], `Choose the reserved die, then the field marked + on ${field(action)}.`];
      case "control": return [[`control:${action.step}:${action.delta}`],
        `Spend 1 control on route die ${action.step + 1} (${action.delta > 0 ? "+1" : "−1"}) so that it fits its lane.`];
      case "modify": return [[`modify:${action.step}:${action.delta}`], `Spend the reserve on route die ${action.step + 1} so that it fits its lane.`];
      case "move": return [["move"], "Drive the route: the car follows your dice in order. Every die fits its lane, so nothing is lost."];
      default: return [[], next];
    }
  },
  "crazy-rally": (action) => {
    switch (action.type) {
      case "apply": return [[`apply:${action.card}`],
        `Fit ${action.card} to the car: its symbols improve the car for the whole race (◎ maximum speed, ✇ manoeuvrability, ⬢ body); the other card of the pair goes to your hand.`];
      case "start": return [["start"],
        "Watch the fourteen track cards as they are shown, then start the race. A white card is the highest speed to pass it at, a red one the lowest."];
      case "drive": return [[`card:${action.card}`, `mode:${action.mode}`, ...(action.event ? [`event:${action.event}`] : []), "drive"],
        `Choose ${action.card}, then ${action.mode === "accelerate" ? "Accelerate" : "Brake"}${action.event ? `, then the event ${action.event}` : ""}, then Drive. Each card in your hand says the speed it leaves you at.`];
      default: return [[], ""];
    }
  },
};

export function createGuide(panel, root, game) {
  const line = JSON.parse(panel.dataset.line);
  const did = panel.querySelector("#guide-did");
  const next = panel.querySelector("#guide-next");
  let before = null; // the position the last move was made from, with its stakes
  let pointAt = [];

  // The board redraws itself as choices are made: the outline follows.
  function outline() {
    root.querySelectorAll(".guide-next").forEach((node) => node.classList.remove("guide-next"));
    for (const key of pointAt) root.querySelector(`[data-focus-key="${CSS.escape(key)}"]`)?.classList.add("guide-next");
  }
  new MutationObserver(outline).observe(root, { childList: true });

  // What the move just made did, in the words the server gave for it beforehand.
  function explain(played) {
    const last = played[played.length - 1];
    const index = before ? before.legal_actions.findIndex((action) => same(action, last)) : -1;
    const notes = index >= 0 ? before.stakes?.notes?.[index] || [] : [];
    return notes.length ? `What that did: ${notes.map((n) => n.text).join("; ")}.` : "";
  }

  return {
    show(state, played) {
      const onLine = played.every((action, i) => i >= line.length || same(action, line[i]));
      did.textContent = played.length ? explain(played) : "";
      if (!onLine) {
        pointAt = [];
        next.textContent = "You left the guided line: play on as you like, or start over to follow it again.";
      } else if (played.length >= line.length) {
        pointAt = [];
        next.textContent = "That is the guided start done: play on as you like. The board's ? explains every symbol.";
      } else {
        const [keys, words] = STEPS[game](line[played.length], state.view);
        pointAt = keys;
        clear(next, h("strong", {}, `Step ${played.length + 1} of ${line.length}: `), words);
      }
      before = state;
      outline();
    },
  };
}
