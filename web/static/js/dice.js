// A die face drawn in SVG (pips for 1..6, a numeral for 0), labelled for screen readers by its caller.
import { h } from "./ui.js";

const PIPS = {
  1: [[2, 2]], 2: [[1, 1], [3, 3]], 3: [[1, 1], [2, 2], [3, 3]], 4: [[1, 1], [3, 1], [1, 3], [3, 3]],
  5: [[1, 1], [3, 1], [2, 2], [1, 3], [3, 3]], 6: [[1, 1], [3, 1], [1, 2], [3, 2], [1, 3], [3, 3]],
};

export function dieFace(value, tone = "white") {
  const svg = h("svg:svg", { viewBox: "0 0 40 40", class: `die ${tone}`, "aria-hidden": "true", focusable: "false" },
    h("svg:rect", { x: 2, y: 2, width: 36, height: 36, rx: 8, class: "die-body" }));
  if (PIPS[value]) {
    for (const [x, y] of PIPS[value]) svg.append(h("svg:circle", { cx: x * 10, cy: y * 10, r: 3.6, class: "die-pip" }));
  } else {
    svg.append(h("svg:text", { x: 20, y: 27, "text-anchor": "middle", class: "die-number" }, value ?? "?"));
  }
  return svg;
}
