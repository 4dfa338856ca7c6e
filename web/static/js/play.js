// The play page: renders the view and legal actions the server sends, and sends
// back the action list with the player's choice appended. No rules live here.
import { api } from "./api.js";
import { forgetActions, recordRun, saveActions, savedActions } from "./storage.js";
import { clear, h, optimumSummary, puzzleLabel, rememberFocus, restoreFocus, say, unsay } from "./ui.js";

const root = document.getElementById("board");
const { game, seed } = root.dataset;
const finish = document.getElementById("finish");
const PENDING_POLL_MS = 5000;

let actions = savedActions(game, seed);
let board = null;
let busy = false;

async function showPuzzle() {
  try {
    const puzzle = await api.puzzle(game, seed);
    document.getElementById("puzzle-label").textContent =
      puzzle.number ? `Daily ${puzzleLabel(puzzle)}` : `Practice · seed ${seed}`;
    document.getElementById("optimum").textContent = optimumSummary(puzzle);
    if (puzzle.status === "pending") setTimeout(showPuzzle, PENDING_POLL_MS);
  } catch (error) {
    document.getElementById("optimum").textContent = "unknown for now";
    if (error.status !== 404) say(`The puzzle's details could not be loaded. ${error.message}`);
  }
}

function setBusy(value) {
  busy = value;
  root.setAttribute("aria-busy", String(value));
  board?.setBusy(value);
}

// Ask the server for the position after `next`; keep `next` only once it answered.
async function advance(next) {
  if (busy) return;
  const focusKey = rememberFocus();
  setBusy(true);
  try {
    const state = await api.play(game, seed, next);
    actions = next;
    saveActions(game, seed, actions);
    unsay();
    draw(state, focusKey);
  } catch (error) {
    say(error.message);
  } finally {
    setBusy(false);
  }
}

function draw(state, focusKey) {
  board.show(state);
  document.getElementById("progress").textContent =
    actions.length === 1 ? "1 move played" : `${actions.length} moves played`;
  showFinish(state);
  if (!state.over) restoreFocus(root, focusKey || "start");
}

function showFinish(state) {
  finish.hidden = !state.over;
  if (!state.over) return;
  document.getElementById("finish-summary").textContent = state.finished
    ? `You finished with a score of ${state.score}. Submit the run to see where it stands against the optimum.`
    : "The race ended without reaching the finish, so this run has no score. You can still submit it and study the optimal line, or start over.";
  document.getElementById("finish-title").focus();
}

async function submit(event) {
  event.preventDefault();
  const button = document.getElementById("submit-run");
  const name = document.getElementById("player-name").value.trim();
  button.disabled = true;
  try {
    const run = await api.submit(game, seed, actions, name || undefined);
    recordRun(game, seed, run);
    forgetActions(game, seed);
    window.location.assign(`/runs/${encodeURIComponent(run.id)}`);
  } catch (error) {
    say(`Your run was not submitted. ${error.message}`);
    button.disabled = false;
  }
}

function restart() {
  if (!actions.length || !window.confirm("Start this race over from the beginning?")) return;
  forgetActions(game, seed);
  advance([]);
}

// A saved run the server now refuses (its rules changed) continues from the last legal step.
async function resume() {
  try {
    const state = await api.play(game, seed, actions);
    draw(state, "start");
  } catch (error) {
    if (error.status === 422 && Number.isInteger(error.body?.index)) {
      actions = actions.slice(0, error.body.index);
      saveActions(game, seed, actions);
      say(`Your saved run could not continue past move ${error.body.index + 1}; it resumes from there.`, "info");
      return resume();
    }
    clear(root, h("p", {}, "The race could not be loaded."),
      h("button", { type: "button", class: "primary", onclick: () => location.reload() }, "Try again"));
    say(error.message);
  } finally {
    setBusy(false);
  }
}

async function start() {
  showPuzzle();
  const { createBoard } = await import(`./boards/${game}.js`);
  board = createBoard(root, { interactive: true, onAction: (action) => advance([...actions, action]) });
  document.getElementById("submit-form").addEventListener("submit", submit);
  document.getElementById("restart").addEventListener("click", restart);
  setBusy(true);
  await resume();
}

start();
