// The games as the server describes them on every page (the body's data-games, from each
// game's kit and engine): its title, its board module, what a turn is and how its
// tie-break reads. No module names a game: what differs between games comes from here.
const described = () => JSON.parse(document.body.dataset.games || "{}");

export const gameInfo = (game) => described()[game] ?? null;

export const gameTitles = () => Object.fromEntries(Object.entries(described()).map(([name, info]) => [name, info.title]));

export const gameTitle = (game) => gameInfo(game)?.title || game;

// What the game calls a turn, and whether an action ends one: replays step by turns.
export function turnOf(game) {
  const turn = gameInfo(game)?.turn ?? { name: "turn", ends_with: [] };
  return { name: turn.name, ends: (action) => turn.ends_with.includes(action.type) };
}

// The game's board module (its own under boards/, or the generic one), with its turn.
export async function loadBoard(game) {
  const board = await import(`./boards/${gameInfo(game)?.board ?? "generic"}.js`);
  return { ...board, TURN: turnOf(game) };
}
