// How each game's tie-break reads to a person. The API gives it as a number where
// higher is better: Rallye Raser's is minus the rounds, Crazy Rally's the final speed.
const READINGS = {
  "rallye-raser": (tiebreak) => (-tiebreak === 1 ? "in 1 round" : `in ${-tiebreak} rounds`),
  "crazy-rally": (tiebreak) => `final speed ${tiebreak}`,
};

export function tiebreakText(game, tiebreak) {
  if (tiebreak === null || tiebreak === undefined || !(game in READINGS)) return "";
  return READINGS[game](tiebreak);
}


// What decides between equal scores, in words: its name and which way is better.
const RULES = {
  "rallye-raser": { rule: "Tie-break: rounds, fewer is better.", heading: "Rounds (fewer is better)" },
  "crazy-rally": { rule: "Tie-break: final speed, higher is better.", heading: "Final speed (higher is better)" },
};

export const tiebreakRule = (game) => RULES[game]?.rule ?? "";

// The heading of a column of tie-breaks.
export const tiebreakHeading = (game) => RULES[game]?.heading ?? "Tie-break";
