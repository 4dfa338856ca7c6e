// The API client. Every call answers parsed JSON or throws an ApiError whose
// message is written for the player (rate limit, server down, refused run).
const BASE = "/api/v1";
// How far the server's clock is ahead of this device's, from the Date of its last
// answer: a countdown to a moment the server gave is counted on the server's clock.
let serverAheadMs = 0;

export const serverNow = () => Date.now() + serverAheadMs;

function readServerClock(response) {
  const stamp = Date.parse(response.headers.get("Date") || "");
  if (Number.isFinite(stamp)) serverAheadMs = stamp - Date.now();
}

class ApiError extends Error {
  constructor(message, status, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

function plainWords(status, body, retryAfter) {
  if (status === 0) {
    return "The server cannot be reached right now. Check your connection and try again; nothing you played is lost.";
  }
  if (status === 429) {
    const wait = retryAfter ? `${retryAfter} seconds` : "a few seconds";
    return `Too many requests in a short time. Please wait ${wait} and try again; nothing you played is lost.`;
  }
  if (status >= 500) {
    return "The server had a problem and could not answer. Nothing you played is lost; please try again in a moment.";
  }
  const detail = body && (body.message || body.error);
  return detail ? String(detail) : `The server refused the request (HTTP ${status}).`;
}

// Exported for the modules that keep their own calls (history.js).
export async function request(method, path, payload) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (payload !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(payload);
  }
  let response;
  try {
    response = await fetch(BASE + path, init);
  } catch {
    throw new ApiError(plainWords(0), 0, null);
  }
  readServerClock(response);
  let body;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    throw new ApiError(plainWords(response.status, body, response.headers.get("Retry-After")), response.status, body);
  }
  return body;
}

const part = encodeURIComponent;

export const api = {
  daily: (date) => request("GET", date ? `/daily/${part(date)}` : "/daily"),
  puzzle: (game, seed) => request("GET", `/puzzles/${part(game)}/${part(seed)}`),
  // A practice seed's first visit records it and queues its solve (a write: no GET does).
  askPuzzle: (game, seed) => request("POST", `/puzzles/${part(game)}/${part(seed)}`, {}),
  submit: (game, seed, actions, name) =>
    request("POST", `/puzzles/${part(game)}/${part(seed)}/runs`, name ? { actions, name } : { actions }),
  run: (id) => request("GET", `/runs/${part(id)}`),
  // What the run's player saw after its first `step` actions (its replay).
  runStep: (id, step) => request("GET", `/runs/${part(id)}/steps/${step}`),
  // The run's graded decisions: status "pending" (HTTP 202) until computed, on first asking.
  analysis: (id) => request("GET", `/runs/${part(id)}/analysis`),
  // The daily's one attempt per player: started or resumed, then extended on the server.
  attempt: (date, game, name) =>
    request("POST", `/daily/${part(date)}/${part(game)}/attempt`, name ? { name } : {}),
  append: (id, played, actions, name) =>
    request("POST", `/attempts/${part(id)}/actions`, name ? { played, actions, name } : { played, actions }),
};

// What can be asked about one puzzle: a daily is addressed by its date (its seed may
// still be secret), any other puzzle by its seed.
export function puzzleApi({ game, date, seed }) {
  const base = date ? `/daily/${part(date)}/${part(game)}` : `/puzzles/${part(game)}/${part(seed)}`;
  return {
    leaderboard: () => request("GET", `${base}/leaderboard`),
    solution: () => request("GET", `${base}/solution`),
    par: () => request("GET", `${base}/par`),
    play: (actions) => request("POST", date ? `${base}/play` : `/play/${part(game)}/${part(seed)}`, { actions }),
  };
}
