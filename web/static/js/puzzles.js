// What the leaderboard says about a puzzle: player count, histogram, a score's place.
import { puzzleApi } from "./api.js";

// The histogram as [[score, count], ...] by score ascending.
export function histogramOf(board) {
  return (board.histogram || []).map((bin) => [bin.score, bin.count]).sort((a, b) => a[0] - b[0]);
}

export function officialCount(board) {
  return histogramOf(board).reduce((sum, [, count]) => sum + count, 0);
}

// Players with any run of a daily.
export async function playerCount(puzzle) {
  return (await puzzleApi({ game: puzzle.game, date: puzzle.date }).leaderboard()).players;
}

// 1 + how many official runs scored strictly more than score.
export function placeOf(board, score) {
  return 1 + histogramOf(board).filter(([s]) => s > score).reduce((sum, [, count]) => sum + count, 0);
}
