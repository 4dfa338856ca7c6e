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
