// Archive: every daily from the first, as a calendar a month at a time and a game at a
// time, with your score and the optimum of each day (calendar.js).
import { createCalendar } from "./calendar.js";
import { tiebreakRule } from "./tiebreaks.js";
import { clear, gameTitles, h, say } from "./ui.js";

// Beside each optimum stands its tie-break: what it is, and which way is better.
clear(document.getElementById("tiebreak-rules"), Object.entries(gameTitles()).map(([game, title]) =>
  h("li", {}, `${title}: ${tiebreakRule(game)}`)));

const calendar = createCalendar(document.getElementById("calendar"));
const tabs = [...document.querySelectorAll("#archive-games button")];

function choose(button) {
  for (const tab of tabs) tab.setAttribute("aria-pressed", String(tab === button));
  calendar.choose(button.dataset.game);
}

for (const tab of tabs) tab.addEventListener("click", () => choose(tab));
calendar.start(tabs[0].dataset.game).catch((error) => say(`The archive could not be loaded. ${error.message}`));
