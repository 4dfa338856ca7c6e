// The play page: draws the view and legal actions the server sends and sends back
// the player's choices. No rules live here. Two kinds of race share the page:
// - "daily": today's daily, the player's one attempt, held by the server (no undo,
//   no start over; a reload, another tab or another device continues it);
// - "practice": any seed, its action list kept on this device and replayed by the server.
// A daily whose day is over has a public seed, so its page becomes that seed's practice.
// "daily-practice" (Play again) is that practice, asked for before the day is over: the
// page then says when it opens, since no one may replay today's daily before then.
import { api, puzzleApi } from "./api.js";
import {
  dailyKey, forgetActions, recordTestRound, saveActions, saveName, savedActions, savedName,
  seedKey, testRoundSeen,
} from "./storage.js";
import { loadBoard } from "./games.js";
import { tiebreakRule, tiebreakText } from "./tiebreaks.js";
import {
  clear, countDownTo, dailyUrl, h, optimumSummary, parSummary, playUrl, puzzleLabel, rememberFocus, restoreFocus, say, unsay,
} from "./ui.js";

const root = document.getElementById("board");
const { game, seed, date, mode } = root.dataset;
const finish = document.getElementById("finish");
const PENDING_POLL_MS = 5000;
// A request lost on the way (no answer, or a proxy's 502-504) is sent again as it was.
const RETRY_DELAYS_MS = [400, 1500];

let session = null;
let board = null;
let guide = null; // the guided first game's guide, on its page only
let busy = false;

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });
const lostOnTheWay = (error) => error.status === 0 || (error.status >= 502 && error.status <= 504);

async function withRetries(call) {
  for (let retry = 0; ; retry += 1) {
    try {
      return await call();
    } catch (error) {
      if (!lostOnTheWay(error) || retry >= RETRY_DELAYS_MS.length) throw error;
      await sleep(RETRY_DELAYS_MS[retry]);
    }
  }
}

// A practice race: the action list is this device's; the server replays it at each step.
function practiceSession(key, play) {
  let actions = savedActions(key);
  const keep = (next) => {
    actions = next;
    saveActions(key, actions);
  };
  return {
    get played() { return actions.length; },
    get actions() { return actions; },
    // A saved race the server now refuses (its rules changed) continues from its last legal step.
    async resume() {
      try {
        return await play(actions);
      } catch (error) {
        if (error.status !== 422 || !Number.isInteger(error.body?.index)) throw error;
        keep(actions.slice(0, error.body.index));
        say(`Your saved race could not continue past move ${error.body.index + 1}; it resumes from there.`, "info");
        return this.resume();
      }
    },
    async send(more) {
      const next = [...actions, ...more];
      const state = await withRetries(() => play(next));
      keep(next);
      return state;
    },
    async restart() {
      const state = await play([]);
      forgetActions(key);
      actions = [];
      return state;
    },
  };
}

// Today's daily: the attempt lives on the server. Every send says how many actions this
// page has seen played, so a request sent again after a lost answer is never applied
// twice, and moves made meanwhile elsewhere come back as a 409 with the current state.
function attemptSession() {
  let id = null;
  let played = 0;
  const adopt = (state) => {
    id = state.attempt;
    played = state.played;
    return state;
  };
  return {
    get played() { return played; },
    async resume() {
      return adopt(await withRetries(() => api.attempt(date, game, savedName())));
    },
    // The answer is the attempt as it stands, also when it is a 409 or the answer to a
    // resent request: moves played elsewhere meanwhile are shown, and said.
    async send(more, name) {
      const expected = played + more.length;
      let answer;
      try {
        answer = await withRetries(() => api.append(id, played, more, name));
      } catch (error) {
        if (error.status !== 409 || !error.body?.attempt) throw error;
        answer = error.body;
      }
      adopt(answer);
      if (played !== expected) {
        say("This attempt went on in another tab or on another device: here is where it stands now.", "info");
      }
      return answer;
    },
    // The name applies to the run to come. A 409 (moves made elsewhere) applied nothing,
    // so the name goes again with the count the page now knows.
    async rename(name) {
      for (let tries = 0; tries < 2; tries += 1) {
        const seen = played;
        const state = await this.send([], name);
        if (played === seen) return state;
      }
      throw new Error("The attempt keeps moving on elsewhere; please try again.");
    },
  };
}

function setBusy(value) {
  busy = value;
  root.setAttribute("aria-busy", String(value));
  board?.setBusy(value);
}

async function advance(more) {
  if (busy || !more.length) return;
  const focusKey = rememberFocus();
  unsay();
  setBusy(true);
  try {
    draw(await session.send(more), focusKey || "start");
  } catch (error) {
    say(error.message);
  } finally {
    setBusy(false);
  }
}

// focusKey: the control to focus afterwards (none: the focus stays where it is).
// The guide's words first: a board that holds the guide keeps them in sight as it draws.
function draw(state, focusKey) {
  guide?.show(state, session.actions);
  board.show(state);
  const played = session.played;
  document.getElementById("progress").textContent = played === 1 ? "1 move played" : `${played} moves played`;
  showFinish(state);
  if (!state.over && focusKey) restoreFocus(root, focusKey);
}

function scoreText(state) {
  const tiebreak = tiebreakText(game, state.tiebreak);
  return tiebreak ? `${state.score} (${tiebreak})` : String(state.score);
}

const link = (href, text, primary) => h("a", { class: primary ? "button primary" : "button", href }, text);

// When the optimal line and practice of today's daily open to everyone (its day over).
const opening = (when) => (when
  ? `The optimal line and practice of this daily open at ${when}.`
  : "The optimal line and practice of this daily are open now.");

// What the end of a race offers depends on its kind: the official run's result, or a
// practice race's submission. summary is a sentence, or a function of the sentence
// saying when the day's lines open (kept up to date while the page stays open).
const FINISHES = {
  daily(state) {
    const outcome = state.finished
      ? `Your official run scored ${scoreText(state)}. See where it stands.`
      : "The race ended without reaching the finish, so your official run has no score.";
    return {
      summary: (when) => `${outcome} ${opening(when)}`,
      links: [state.run ? link(`/runs/${encodeURIComponent(state.run)}`, "See your result", true) : null],
    };
  },
  practice(state) {
    return {
      summary: state.finished
        ? `You finished with a score of ${state.score}. Submit the run to see where it stands against the optimum.`
        : "The race ended without reaching the finish, so this run has no score. You can still submit it and study the optimal line, or start over.",
      links: [],
    };
  },
};

function showFinish(state) {
  const wasHidden = finish.hidden;
  finish.hidden = !state.over;
  // A name given now would only apply to later runs, and this attempt's run exists.
  const nameForm = document.getElementById("name-form");
  if (nameForm) nameForm.hidden = state.over;
  if (!state.over) return;
  const { summary, links } = FINISHES[mode](state);
  const summaryNode = document.getElementById("finish-summary");
  if (typeof summary === "function") countDownTo(summaryNode, state.puzzle.line_opens_at, summary);
  else summaryNode.textContent = summary;
  clear(document.getElementById("finish-links"), links);
  // The whole panel in sight, not only its title: a guided game's last words are in it.
  if (wasHidden) {
    document.getElementById("finish-title").focus({ preventScroll: true });
    finish.scrollIntoView({ block: "nearest" });
  }
}

// The official run takes the name the player has when it ends.
async function rename(event) {
  event.preventDefault();
  if (busy) return;
  const name = document.getElementById("player-name").value.trim();
  const status = document.getElementById("name-status");
  if (!name) {
    status.textContent = "Type a name to save it.";
    return;
  }
  unsay();
  setBusy(true);
  try {
    draw(await session.rename(name));
    saveName(name);
    status.textContent = `Saved: your run will show as ${name}.`;
  } catch (error) {
    say(`The name was not saved. ${error.message}`);
  } finally {
    setBusy(false);
  }
}

async function submit(event) {
  event.preventDefault();
  const button = document.getElementById("submit-run");
  const name = document.getElementById("player-name").value.trim();
  saveName(name);
  button.disabled = true;
  try {
    const run = await api.submit(game, seed, session.actions, name || undefined);
    forgetActions(seedKey(game, seed));
    window.location.assign(`/runs/${encodeURIComponent(run.id)}`);
  } catch (error) {
    say(`Your run was not submitted. ${error.message}`);
    button.disabled = false;
  }
}

async function restart() {
  if (busy || !session.played || !window.confirm("Start this race over from the beginning?")) return;
  setBusy(true);
  try {
    draw(await session.restart(), "start");
  } catch (error) {
    say(error.message);
  } finally {
    setBusy(false);
  }
}

function showPuzzle(puzzle) {
  document.getElementById("puzzle-label").textContent =
    puzzle.number ? `Daily ${puzzleLabel(puzzle)}` : `Practice · seed ${seed}`;
  document.getElementById("optimum").textContent = optimumSummary(puzzle);
  document.getElementById("par").textContent = parSummary(puzzle);
  document.getElementById("tiebreak-rule").textContent = tiebreakRule(game);
}

// The puzzle's number and optimum, asked again while the optimum is being computed. A
// practice seed is asked for on the first visit (which records it and queues its solve).
let asked = false;

async function puzzleInfo() {
  if (!date) {
    const ask = asked ? api.puzzle : api.askPuzzle;
    asked = true;
    return ask(game, seed);
  }
  const daily = await api.daily(date);
  const puzzle = daily.puzzles.find((entry) => entry.game === game);
  if (!puzzle) throw Object.assign(new Error("There is no such daily."), { status: 404 });
  return puzzle;
}

async function watchOptimum() {
  try {
    const puzzle = await puzzleInfo();
    showPuzzle(puzzle);
    // A daily's par follows its solve in the same job; a practice seed's waits behind
    // every solve, so its page is not kept asking.
    const parComing = puzzle.number && !puzzle.par_computed && puzzle.status !== "failed";
    if (puzzle.status === "pending" || parComing) setTimeout(watchOptimum, PENDING_POLL_MS);
    return puzzle;
  } catch (error) {
    document.getElementById("optimum").textContent = "unknown for now";
    document.getElementById("par").textContent = "unknown for now";
    if (error.status !== 404) say(`The puzzle's details could not be loaded. ${error.message}`);
    return null;
  }
}

function newSession() {
  return mode === "daily" ? attemptSession() : practiceSession(seedKey(game, seed), puzzleApi({ game, seed }).play);
}

// Today's daily shows its test round once (the rulebook's memory test); practice, freely.
function dailyTestRound() {
  if (mode !== "daily") return null;
  const key = dailyKey(game, date);
  return { seen: () => testRoundSeen(key), markSeen: () => recordTestRound(key) };
}

function cannotPlay(error) {
  const why = error.status === 404 && date ? "There is no such daily (yet)." : error.message;
  clear(root, h("p", {}, why),
    h("button", { type: "button", class: "primary", onclick: () => window.location.reload() }, "Try again"));
  say(why);
}

// Practice of today's daily, asked for before its day is over: when it opens.
function practiceNotOpenYet(puzzle) {
  const why = h("p", {});
  if (puzzle) {
    countDownTo(why, puzzle.line_opens_at, (when) => (when
      ? `Practice of this daily opens to everyone once its day is over, at ${when}. Until then no one may replay it, so that no one can pass its line to a second player.`
      : "Practice of this daily is open now: reload the page to play it."));
  } else {
    why.textContent = "This daily could not be loaded.";
  }
  clear(root, why, h("p", {}, h("a", { class: "button primary", href: dailyUrl(game, date) }, "Back to the daily")));
  root.setAttribute("aria-busy", "false");
}

async function start() {
  const puzzle = await watchOptimum();
  // A daily whose day is over is a practice puzzle like any other, addressed by its seed.
  if (date && puzzle?.seed) {
    window.location.replace(playUrl(game, puzzle.seed));
    return;
  }
  if (mode === "daily-practice") {
    practiceNotOpenYet(puzzle);
    return;
  }
  session = newSession();
  const boards = await loadBoard(game);
  const guidePanel = document.getElementById("guide");
  board = boards.createBoard(root, { interactive: true, onPlay: advance, testRound: dailyTestRound(), guide: guidePanel });
  if (guidePanel) guide = (await import("./guide.js")).createGuide(guidePanel, root, boards);
  document.getElementById("submit-form")?.addEventListener("submit", submit);
  document.getElementById("name-form")?.addEventListener("submit", rename);
  const nameInput = document.getElementById("player-name");
  if (nameInput) nameInput.value = savedName();
  document.getElementById("restart")?.addEventListener("click", restart);
  setBusy(true);
  try {
    draw(await session.resume(), "start");
  } catch (error) {
    cannotPlay(error);
  } finally {
    setBusy(false);
  }
}

start();
