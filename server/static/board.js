// The SVG board, drawn from a parsed board: line in the perspective player's own
// orientation: their home board bottom right (points 1-6), the opponent's top right.
// Every text goes in with textContent: nothing from the server becomes markup.

import { cubeOwner, sides } from "./clip.js";

const NS = "http://www.w3.org/2000/svg";
const W = 40; // point width
const LEFT = 10;
const BAR_X = 250;
const BAR_W = 30;
const RIGHT = BAR_X + BAR_W; // 280
const END = RIGHT + 6 * W; // 520
const TOP = 20;
const BOTTOM = 400;
const R = 17;
const TRAY_X = 530;

function el(name, attrs, parent) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (parent) parent.appendChild(node);
  return node;
}

function text(parent, x, y, value, cls) {
  const t = el("text", { x, y, class: cls, "text-anchor": "middle", "dominant-baseline": "central" }, parent);
  t.textContent = String(value);
  return t;
}

/** The centre x of the player's point p (1..24) and whether it is on the top row. */
export function pointX(p) {
  if (p <= 6) return [END - (p - 0.5) * W, false];
  if (p <= 12) return [BAR_X - (p - 6.5) * W, false];
  if (p <= 18) return [LEFT + (p - 12.5) * W, true];
  return [RIGHT + (p - 18.5) * W, true];
}

function stack(g, x, top, count, cls, label) {
  const shown = Math.min(count, 5);
  for (let i = 0; i < shown; i++) {
    const y = top ? TOP + R + i * 2 * R : BOTTOM - R - i * 2 * R;
    el("circle", { cx: x, cy: y, r: R - 1, class: `checker ${cls}`, "data-label": label }, g);
  }
  if (count > 5) {
    const y = top ? TOP + R + 4 * 2 * R : BOTTOM - R - 4 * 2 * R;
    text(g, x, y, count, "count");
  }
}

/**
 * Which of the two dice the moves made on the page so far have used: a move uses the die
 * of its distance, or (bearing off) the smallest unused die above it; doubles are four
 * moves of one number, a die shown used after each two.
 */
export function usedDice(dice, done) {
  if (dice[0] === dice[1]) return [done.length >= 2, done.length >= 4];
  const used = [false, false];
  for (const [from, to] of done) {
    const distance = from - to;
    let i = [0, 1].find((k) => !used[k] && dice[k] === distance);
    if (i === undefined) {
      const bigger = [0, 1].filter((k) => !used[k] && dice[k] > distance);
      i = bigger.sort((a, b) => dice[a] - dice[b])[0];
    }
    if (i !== undefined) used[i] = true;
  }
  return used;
}

/**
 * The dice the selected checker (on ``from``) may be moved by, each with where it lands:
 * [{index, to}] for the unused dice whose move is one of ``targets`` (doubles: one die).
 * Bearing off with a higher die is offered only when no unused die takes it off exactly,
 * as ``usedDice`` reads such a move.
 */
export function dieChoices(dice, done, from, targets) {
  const used = usedDice(dice, done);
  const exact = [0, 1].some((k) => !used[k] && dice[k] === from);
  const out = [];
  for (const i of [0, 1]) {
    if (used[i] || (dice[0] === dice[1] && out.length)) continue;
    const to = Math.max(from - dice[i], 0);
    if (targets.has(to) && (to > 0 || dice[i] === from || !exact)) out.push({ index: i, to });
  }
  return out;
}

/** Where a checker dropped at (x, y) of the board's drawing lands: a point (in the
 * player's numbering), the bar (25), or 0 (off) anywhere outside the playing area. */
export function dropPoint(x, y) {
  if (x < LEFT || x >= END || y < 0 || y > BOTTOM + TOP) return 0;
  if (x >= BAR_X && x < RIGHT) return 25;
  const top = y < (TOP + BOTTOM) / 2;
  if (x < BAR_X) {
    const i = Math.floor((x - LEFT) / W);
    return top ? 13 + i : 12 - i;
  }
  const i = Math.floor((x - RIGHT) / W);
  return top ? 19 + i : 6 - i;
}

/** The drag under way on each board: {from, id, x0, y0, x, y, moved}; and what each
 * board was last drawn with (the drag outlives the drawing it started on). */
const drags = new WeakMap();
const drawnWith = new WeakMap();

function svgPoint(svg, event) {
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(svg.getScreenCTM().inverse());
  return [point.x, point.y];
}

/**
 * Drag and drop: a checker that may move is picked up by pressing on it and moving
 * (a few pixels: less is a click), its destinations are marked, and it is played where
 * it is let go: on a point, or off the board (anywhere outside the playing area) to bear
 * off. The board is drawn anew meanwhile, so the pointer is followed on the window, not
 * on the elements of one drawing.
 */
function wireDrag(svg, ui) {
  if (!ui.onDrop) {
    svg.onpointerdown = null;
    drawnWith.delete(svg);
    return;
  }
  drawnWith.set(svg, ui);
  svg.onpointerdown = (event) => {
    const target = event.target;
    if (event.button !== 0 || drags.has(svg) || !target.classList.contains("source")) return;
    const drag = { from: Number(target.dataset.point), id: event.pointerId, x0: event.clientX, y0: event.clientY, moved: false };
    drags.set(svg, drag);
    const move = (e) => {
      if (e.pointerId !== drag.id) return;
      [drag.x, drag.y] = svgPoint(svg, e);
      if (!drag.moved) {
        if (Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < 6) return;
        drag.moved = true;
        drawnWith.get(svg).onDragStart(drag.from); // draws the board anew, with the ghost
      }
      const ghost = svg.querySelector(".ghost");
      if (ghost) {
        ghost.setAttribute("cx", drag.x);
        ghost.setAttribute("cy", drag.y);
      }
    };
    const end = (e, dropped) => {
      if (e.pointerId !== drag.id) return;
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      window.removeEventListener("pointercancel", cancel);
      drags.delete(svg);
      if (!drag.moved) return;
      const [x, y] = svgPoint(svg, e);
      const ui = drawnWith.get(svg);
      if (ui) ui.onDrop(drag.from, dropped ? dropPoint(x, y) : null);
    };
    const up = (e) => end(e, true);
    const cancel = (e) => end(e, false);
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    window.addEventListener("pointercancel", cancel);
  };
  const drag = drags.get(svg);
  if (drag && drag.moved) {
    el("circle", { cx: drag.x, cy: drag.y, r: R - 1, class: "checker mine ghost" }, svg);
  }
}

function die(g, x, y, value, cls) {
  const face = el("rect", { x: x - 15, y: y - 15, width: 30, height: 30, rx: 5, class: `die ${cls}`, "data-die": value }, g);
  const pips = {
    1: [[0, 0]],
    2: [[-1, -1], [1, 1]],
    3: [[-1, -1], [0, 0], [1, 1]],
    4: [[-1, -1], [1, -1], [-1, 1], [1, 1]],
    5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
    6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]],
  }[value] || [];
  for (const [dx, dy] of pips) el("circle", { cx: x + dx * 8, cy: y + dy * 8, r: 3, class: "pip" }, g);
  el("title", {}, g).textContent = String(value);
  return face;
}

/** A point's name for a screen reader: the bar (25), off the board (0), or point p. */
function place(p) {
  return p === 25 ? "the bar" : p === 0 ? "off the board" : `point ${p}`;
}

/** What a screen reader says of a point that may be played. */
function pointLabel(p, mine, theirs, target) {
  const where = place(p);
  const own = p >= 1 && p <= 25 ? mine[p] : 0;
  const other = p >= 1 && p <= 24 ? theirs[p] : 0;
  const what = own ? `, ${own} of yours` : other ? `, ${other} of the opponent's` : "";
  return `${target ? "Move to" : "Move from"} ${where}${what}`;
}

/** The position as text, for a screen reader or anyone who prefers to read it: each
 * side's checkers by point (in the player's numbering), the bars, borne off, the dice
 * and the cube. */
export function positionText(view, me, opponent) {
  const { mine, theirs } = sides(view);
  const list = (counts, from, to) => {
    const found = [];
    for (let p = from; p <= to; p++) if (counts[p]) found.push(`${p}: ${counts[p]}`);
    return found.length ? found.join(", ") : "none";
  };
  const dice = view.playerDice[0]
    ? `${me} rolled ${view.playerDice[0]} and ${view.playerDice[1]}`
    : view.opponentDice[0] ? `${opponent} rolled ${view.opponentDice[0]} and ${view.opponentDice[1]}` : "no dice out";
  return [
    `${me}: ${list(mine, 1, 24)}; on the bar ${mine[25]}; borne off ${view.playerHome}.`,
    `${opponent}: ${list(theirs, 1, 24)}; on the bar ${theirs[0]}; borne off ${view.opponentHome}.`,
    `Points are numbered from ${me}'s side. ${dice[0].toUpperCase()}${dice.slice(1)}. Cube ${view.cube}.`,
  ].join("\n");
}

/**
 * Draw ``view`` into ``svg``. ``ui``: { sources: Set of points the player may move from,
 * targets: Set of points (0 = off) the selected checker may go to, selected: a point or
 * null, onPoint(p): called when a point, the bar (25) or the tray (0) is clicked }.
 */
export function drawBoard(svg, view, ui) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", "0 0 600 420");
  const { mine, theirs } = sides(view);
  const g = el("g", {}, svg);
  el("rect", { x: LEFT, y: TOP, width: END - LEFT, height: BOTTOM - TOP, class: "felt" }, g);
  el("rect", { x: BAR_X, y: TOP, width: BAR_W, height: BOTTOM - TOP, class: "bar" }, g);
  el("rect", { x: TRAY_X, y: TOP, width: 60, height: BOTTOM - TOP, class: "tray" }, g);
  for (let p = 1; p <= 24; p++) {
    const [x, top] = pointX(p);
    const tip = top ? TOP + 160 : BOTTOM - 160;
    const base = top ? TOP : BOTTOM;
    el("polygon", {
      points: `${x - W / 2},${base} ${x + W / 2},${base} ${x},${tip}`,
      class: `point ${p % 2 ? "odd" : "even"}`,
    }, g);
    text(g, x, top ? TOP - 9 : BOTTOM + 10, p, "number");
  }
  for (let p = 1; p <= 24; p++) {
    const [x, top] = pointX(p);
    if (mine[p]) stack(g, x, top, mine[p], "mine", `mine-${p}`);
    if (theirs[p]) stack(g, x, top, theirs[p], "theirs", `theirs-${p}`);
  }
  // The bars: the player's checkers in the lower half, the opponent's in the upper.
  const barX = BAR_X + BAR_W / 2;
  for (let i = 0; i < Math.min(mine[25], 4); i++)
    el("circle", { cx: barX, cy: 250 + i * 2 * R, r: R - 3, class: "checker mine" }, g);
  if (mine[25] > 1) text(g, barX, 232, mine[25], "count");
  for (let i = 0; i < Math.min(theirs[0], 4); i++)
    el("circle", { cx: barX, cy: 170 - i * 2 * R, r: R - 3, class: "checker theirs" }, g);
  if (theirs[0] > 1) text(g, barX, 188, theirs[0], "count");
  // Borne off: the player's at the bottom of the tray, the opponent's at the top.
  for (let i = 0; i < view.playerHome; i++)
    el("rect", { x: TRAY_X + 8, y: BOTTOM - 8 - i * 9, width: 44, height: 7, class: "off mine" }, g);
  for (let i = 0; i < view.opponentHome; i++)
    el("rect", { x: TRAY_X + 8, y: TOP + 1 + i * 9, width: 44, height: 7, class: "off theirs" }, g);
  // The last move of the other side, drawn as it is announced (an animated trail).
  for (const [from, to] of ui.trail || []) {
    const at = (p) => {
      if (p === 25 || p === -1) return [BAR_X + BAR_W / 2, p === 25 ? 300 : 120];
      if (p === 0 || p === 26) return [TRAY_X + 30, p === 0 ? 330 : 90];
      const [x, top] = pointX(p);
      return [x, top ? TOP + 70 : BOTTOM - 70];
    };
    const [x1, y1] = at(from);
    const [x2, y2] = at(to);
    el("line", { x1, y1, x2, y2, class: "trail", pathLength: 100 }, g);
    el("circle", { cx: x2, cy: y2, r: 7, class: "trail-end" }, g);
  }
  // What may be clicked, or reached with Tab and played with Enter or Space (a point
  // that may be played is a button named for what is on it).
  const hit = (p, x, y, w, h) => {
    const cls = ["hit"];
    if (ui.sources.has(p)) cls.push("source");
    if (ui.targets.has(p)) cls.push("target");
    if (ui.selected === p) cls.push("selected");
    const r = el("rect", { x, y, width: w, height: h, class: cls.join(" "), "data-point": p }, g);
    if (ui.sources.has(p) || ui.targets.has(p)) {
      r.addEventListener("click", (event) => ui.onPoint(p, event.pointerType));
      r.setAttribute("tabindex", "0");
      r.setAttribute("role", "button");
      r.setAttribute("aria-label", pointLabel(p, mine, theirs, ui.targets.has(p)));
      r.addEventListener("keydown", (event) => {
        if (event.key !== "Enter" && event.key !== " ") return;
        event.preventDefault();
        ui.onPoint(p);
      });
    }
  };
  for (let p = 1; p <= 24; p++) {
    const [x, top] = pointX(p);
    hit(p, x - W / 2, top ? TOP : BOTTOM - 190, W, 190);
  }
  hit(25, BAR_X, 210, BAR_W, 190);
  hit(0, TRAY_X, 210, 60, 190);
  // Above the trail and the highlights, so that neither hides them; clicks go through
  // them to the points (pointer-events: none in style.css).
  // The dice: the player's in the right half, the opponent's in the left.
  if (view.playerDice[0]) {
    const used = usedDice(view.playerDice, ui.done || []);
    const choices = ui.selected === null ? [] : dieChoices(view.playerDice, ui.done || [], ui.selected, ui.targets);
    for (const i of [0, 1]) {
      const value = view.playerDice[i];
      const face = die(g, RIGHT + (2.5 + i) * W, 210, value, `mine${used[i] ? " used" : ""}`);
      // The dice the selected checker may move by are buttons too: a die picked with
      // the keyboard (Tab and Enter, or its number's key) or a click moves it by that die.
      const choice = choices.find((c) => c.index === i);
      if (!choice) continue;
      face.classList.add("playable");
      face.setAttribute("tabindex", "0");
      face.setAttribute("role", "button");
      face.setAttribute("aria-label", `Move from ${place(ui.selected)} by the ${value}, to ${place(choice.to)}`);
      const play = () => ui.onPoint(choice.to);
      face.addEventListener("click", play);
      face.addEventListener("keydown", (event) => {
        if (event.key !== "Enter" && event.key !== " ") return;
        event.preventDefault();
        play();
      });
    }
    svg.onkeydown = (event) => {
      const choice = choices.find((c) => String(view.playerDice[c.index]) === event.key);
      if (!choice) return;
      event.preventDefault();
      ui.onPoint(choice.to);
    };
  } else {
    svg.onkeydown = null;
  }
  if (view.opponentDice[0]) {
    die(g, LEFT + 2.5 * W, 210, view.opponentDice[0], "theirs");
    die(g, LEFT + 3.5 * W, 210, view.opponentDice[1], "theirs");
  }
  // The cube: in the middle when nobody owns it, else on its owner's side; offered
  // (ui.offered: "player" when the player is asked to take, "opponent" when the player
  // doubled), at twice its value on the side of the one who answers.
  const owner = ui.offered ? "offered" : cubeOwner(view);
  const side = ui.offered || owner;
  const cubeY = side === "player" ? 330 : side === "opponent" ? 90 : 210;
  const cube = el("g", { class: `cube ${owner}`, "data-owner": owner }, g);
  el("rect", { x: TRAY_X + 12, y: cubeY - 18, width: 36, height: 36, rx: 4 }, cube);
  const value = ui.offered ? 2 * view.cube : view.cube === 1 ? 64 : view.cube;
  text(cube, TRAY_X + 30, cubeY, value, "cube-value");
  wireDrag(svg, ui);
}

