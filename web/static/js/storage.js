// What the browser keeps between visits: the action list of every practice race in
// progress (so a reload never loses one), the name it plays under and the test rounds
// it has shown. A daily's own moves live on the server, in its attempt, and a player's
// runs, results and streaks too (GET /api/v1/me).
const PREFIX = "rally-daily:";

function read(key, fallback) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
    return true;
  } catch {
    return false; // storage full or disabled: the race still plays, it just won't survive a reload
  }
}

function forget(key) {
  try {
    localStorage.removeItem(PREFIX + key);
  } catch {
    /* nothing kept, nothing to forget */
  }
}

// The key of a puzzle on this device: a daily by game and date (its seed may be secret),
// any other puzzle by game and seed. "@" never occurs in a seed, so the two cannot meet.
export const seedKey = (game, seed) => `${game}:${seed}`;
export const dailyKey = (game, date) => `${game}@${date}`;

export function savedActions(key) {
  const actions = read(`actions:${key}`, []);
  return Array.isArray(actions) ? actions : [];
}

export function saveActions(key, actions) {
  return write(`actions:${key}`, actions);
}

export function forgetActions(key) {
  forget(`actions:${key}`);
}

// The name this device puts on the leaderboard.
export function savedName() {
  const name = read("name", "");
  return typeof name === "string" ? name : "";
}

export function saveName(name) {
  write("name", name);
}

// Whether this device has shown a daily's test round (its track is shown once only).
export function testRoundSeen(key) {
  return Boolean(read(`test-round:${key}`, false));
}

export function recordTestRound(key) {
  write(`test-round:${key}`, true);
}

// Every practice race with moves in progress on this device, for the practice page (a
// daily whose day is over is practised by its seed).
export function runsInProgress() {
  const found = [];
  try {
    for (let i = 0; i < localStorage.length; i += 1) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(`${PREFIX}actions:`)) continue;
      const puzzle = key.slice(`${PREFIX}actions:`.length);
      const steps = savedActions(puzzle).length;
      const practice = puzzle.indexOf(":");
      if (!steps || puzzle.includes("@")) continue;
      found.push({ game: puzzle.slice(0, practice), seed: puzzle.slice(practice + 1), steps });
    }
  } catch {
    /* storage disabled */
  }
  return found;
}
