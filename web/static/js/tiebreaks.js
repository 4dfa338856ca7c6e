// How each game's tie-break reads to a person, as its engine says it (games.js). The API
// gives it as a number where higher is better: a game that counts what is better fewer
// (Rallye Raser's rounds) gives minus it.
import { gameInfo } from "./games.js";

const reading = (game) => gameInfo(game)?.tiebreak ?? null;

export function tiebreakText(game, tiebreak) {
  const words = reading(game);
  if (tiebreak === null || tiebreak === undefined || !words) return "";
  const count = words.sign * tiebreak;
  return count === 1 ? words.one : words.many.replace("{n}", String(count));
}

// What decides between equal scores, in words: its name and which way is better.
export const tiebreakRule = (game) => reading(game)?.rule ?? "";

// The heading of a column of tie-breaks.
export const tiebreakHeading = (game) => reading(game)?.heading ?? "Tie-break";

// What an amount of the tie-break is called ("0.8 rounds" lost).
export const tiebreakUnit = (game) => reading(game)?.unit ?? "tie-break";
