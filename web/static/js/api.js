// The API client. Every call answers parsed JSON or throws an ApiError whose
// message is written for the player (rate limit, server down, refused run).
const BASE = "/api/v1";

class ApiError extends Error {
  constructor(message, status, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

function plainWords(status, body, retryAfter) {
  if (status === 0) {
    return "The server cannot be reached right now. Check your connection and try again; your run is kept on this device.";
  }
  if (status === 429) {
    const wait = retryAfter ? `${retryAfter} seconds` : "a few seconds";
    return `Too many requests in a short time. Please wait ${wait} and try again; your run is kept on this device.`;
  }
  if (status >= 500) {
    return "The server had a problem and could not answer. Your run is kept on this device; please try again in a moment.";
  }
  const detail = body && (body.message || body.error);
  return detail ? String(detail) : `The server refused the request (HTTP ${status}).`;
}

async function request(method, path, payload) {
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
  let body = null;
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
  leaderboard: (game, seed) => request("GET", `/puzzles/${part(game)}/${part(seed)}/leaderboard`),
  solution: (game, seed) => request("GET", `/puzzles/${part(game)}/${part(seed)}/solution`),
  play: (game, seed, actions) => request("POST", `/play/${part(game)}/${part(seed)}`, { actions }),
  submit: (game, seed, actions, name) =>
    request("POST", `/puzzles/${part(game)}/${part(seed)}/runs`, name ? { actions, name } : { actions }),
  run: (id) => request("GET", `/runs/${part(id)}`),
};
