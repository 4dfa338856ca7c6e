// The name this device puts on its next runs, set or changed on the result page: a run
// keeps the name it was played under, and the next daily attempt or practice submission
// takes this one.
import { saveName, savedName } from "./storage.js";

const MAX_NAME = 40;

export function offerName(panel) {
  const form = panel.querySelector("form");
  const input = panel.querySelector("input");
  const status = panel.querySelector("[role=status]");
  input.value = savedName();
  panel.hidden = false;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = input.value.trim();
    if (name.length > MAX_NAME) {
      status.textContent = `A name has at most ${MAX_NAME} characters.`;
      return;
    }
    saveName(name);
    status.textContent = name
      ? `Saved: your next runs will show as ${name}.`
      : "Saved: your next runs will show as anonymous.";
  });
}
