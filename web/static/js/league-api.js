// Leagues and the weekend rally through the API (GET /api/v1/leagues/{id} and the writes
// beside it, GET /api/v1/rallies/{friday}): what the league, join and rally pages share.
import { request } from "./api.js";

const part = encodeURIComponent;

export const leagues = {
  make: (name, displayName) => request("POST", "/leagues", { name, display_name: displayName }),
  // The token travels in the invite link's fragment; it is sent only when the player confirms.
  join: (token, displayName) => request("POST", "/leagues/join", { token, display_name: displayName }),
  get: (id) => request("GET", `/leagues/${part(id)}`),
  leave: (id) => request("POST", `/leagues/${part(id)}/leave`, {}),
  renewInvite: (id) => request("POST", `/leagues/${part(id)}/invite`, {}),
  remove: (id, member) => request("POST", `/leagues/${part(id)}/remove`, { member }),
  // A removed player may join again (by the current link) once the maker lets them back in.
  readmit: (id, member) => request("POST", `/leagues/${part(id)}/readmit`, { member }),
  rally: (friday, league) =>
    request("GET", `/rallies/${part(friday)}${league ? `?league=${part(league)}` : ""}`),
};

export const leagueUrl = (id) => `/leagues/${part(id)}`;

export const rallyUrl = (friday, league) =>
  `/rallies/${part(friday)}${league ? `?league=${part(league)}` : ""}`;

// The Friday (YYYY-MM-DD) of the latest rally to have started by day, a YYYY-MM-DD date.
export function rallyStartOf(day) {
  const date = new Date(`${day}T00:00:00Z`);
  const back = (date.getUTCDay() + 2) % 7; // Friday is day 5: 0 days back on a Friday
  date.setUTCDate(date.getUTCDate() - back);
  return date.toISOString().slice(0, 10);
}

export function shiftDays(day, days) {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

// How a member stands on a daily without an official result, in words.
export const STATUS_WORDS = {
  playing: "playing now",
  did_not_finish: "did not finish",
  not_played: "not played yet",
};

// A member's name as the pages show it (the API gives null for a member without one).
export const shownName = (name) => name || "(no name)";
