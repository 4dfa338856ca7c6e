// The player's own history from the server (GET /api/v1/me) and transfer links: what the
// stats page, the stats panel after a daily, the home page and the archive share.
import { request } from "./api.js";

export const history = {
  me: () => request("GET", "/me"),
  // A one-time link that sets the same player cookie in another browser.
  transferLink: () => request("POST", "/me/transfer", {}),
  redeem: (token) => request("POST", "/transfer", { token }),
  // A run's share text with its spoiler-free strip.
  // With a league of the player's, the text ends with an invitation to it.
  share: (runId, league) => request("GET",
    `/runs/${encodeURIComponent(runId)}/share${league ? `?league=${encodeURIComponent(league)}` : ""}`),
};
