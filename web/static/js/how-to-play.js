// "How to play": the example positions the server put in the page, drawn with the play
// page's own board (as a replay draws a step), and the board's legend of every symbol.
import { loadBoard } from "./games.js";
import { legendList } from "./legend.js";
import { clear } from "./ui.js";

const page = document.getElementById("how-to-play");

async function start() {
  const board = await loadBoard(page.dataset.game);
  for (const root of page.querySelectorAll("[data-state]")) {
    board.createBoard(root, { interactive: false }).show(JSON.parse(root.dataset.state));
  }
  clear(document.getElementById("legend"), legendList(board.legend()));
}

start();
