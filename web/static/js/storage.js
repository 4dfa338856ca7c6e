// What the browser keeps between visits: the action list of every run in
// progress (so a reload never loses a run) and the runs this device submitted.
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
    return false; // storage full or disabled: the run still plays, it just won't survive a reload
  }
}

const actionsKey = (game, seed) => `actions:${game}:${seed}`;
const runsKey = (game, seed) => `runs:${game}:${seed}`;

export function savedActions(game, seed) {
  const actions = read(actionsKey(game, seed), []);
  return Array.isArray(actions) ? actions : [];
}

export function saveActions(game, seed, actions) {
  return write(actionsKey(game, seed), actions);
}

export function forgetActions(game, seed) {
  try {
    localStorage.removeItem(PREFIX + actionsKey(game, seed));
  } catch {
    /* nothing kept, nothing to forget */
  }
}

export function submittedRuns(game, seed) {
  const runs = read(runsKey(game, seed), []);
  return Array.isArray(runs) ? runs : [];
}

export function recordRun(game, seed, run) {
  const entry = { id: run.id, score: run.score, official: Boolean(run.official), at: Date.now() };
  write(runsKey(game, seed), [...submittedRuns(game, seed), entry]);
}

// Every game+seed with a run in progress on this device, for the practice page.
export function runsInProgress() {
  const found = [];
  try {
    for (let i = 0; i < localStorage.length; i += 1) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(PREFIX + "actions:")) continue;
      const [, , game, ...rest] = key.split(":");
      const actions = read(key.slice(PREFIX.length), []);
      if (actions.length) found.push({ game, seed: rest.join(":"), steps: actions.length });
    }
  } catch {
    /* storage disabled */
  }
  return found;
}
