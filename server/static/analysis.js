// A finished match's analysis by GNU Backgammon, drawn from `analysis <id> json` (D326;
// docs/analysis.md): each player's figures, and for each game its equity graph and every
// judged decision with its mark, gnubg's best play on demand.
// Everything from the server goes in with textContent (or as SVG text), never as markup.

const SIGNS = { "": "", doubtful: "?!", error: "?", blunder: "??" }; // protocol.analysis.MARK_SIGNS
const MARK_WORDS = { doubtful: "doubtful", error: "an error", blunder: "a blunder" };
const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 400;
const HEIGHT = 100;

function element(tag, text, cls) {
  const made = document.createElement(tag);
  if (text !== undefined) made.textContent = text;
  if (cls) made.className = cls;
  return made;
}

function svg(tag, attributes) {
  const made = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) made.setAttribute(key, String(value));
  return made;
}

function signed(value, digits) {
  return `${value > 0 ? "+" : value < 0 ? "−" : ""}${Math.abs(value).toFixed(digits)}`;
}

/** One row of the players' table: the figures of `stats` for `name`. */
export function playerRow(name, stats) {
  const tr = element("tr");
  const values = [
    name, stats.rate.toFixed(1), stats.decisions, stats.doubtful, stats.errors, stats.blunders,
    signed(stats.luck, 2),
  ];
  for (const value of values) tr.appendChild(element("td", String(value)));
  return tr;
}

/** A game's equity for the match's first player after each judged decision (gnubg's
 * equity of its best choice, for the player deciding: turned to the first player's). */
export function equities(game) {
  return game.decisions.map((d) => (d.player === 0 ? d.equity : -d.equity));
}

/** The equity graph of one game, with the errors and blunders as dots. */
export function equityGraph(game, number, names) {
  const values = equities(game);
  const most = Math.max(1, ...values.map((v) => Math.abs(v)));
  const x = (i) => (values.length > 1 ? (i / (values.length - 1)) * (WIDTH - 8) + 4 : WIDTH / 2);
  const y = (v) => HEIGHT / 2 - (v / most) * (HEIGHT / 2 - 6);
  const first = values.length ? signed(values[0], 2) : "0";
  const last = values.length ? signed(values[values.length - 1], 2) : "0";
  const label = `Game ${number}: ${names[0]}'s equity after each of ${values.length} decisions, ` +
    `from ${first} to ${last} (up: ${names[0]} ahead, down: ${names[1]})`;
  const graph = svg("svg", {
    class: "equity", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": label,
    preserveAspectRatio: "none",
  });
  const title = svg("title", {});
  title.textContent = label;
  graph.appendChild(title);
  graph.appendChild(svg("line", { class: "zero", x1: 0, x2: WIDTH, y1: HEIGHT / 2, y2: HEIGHT / 2 }));
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  graph.appendChild(svg("polyline", { points }));
  game.decisions.forEach((d, i) => {
    if (d.mark === "error" || d.mark === "blunder") {
      graph.appendChild(svg("circle", { class: d.mark, cx: x(i), cy: y(values[i]), r: 3.5 }));
    }
  });
  return graph;
}

/** One judged decision: move number, player, what was played and its mark; a button
 * shows gnubg's best choice when it was not the one made. */
export function decisionItem(d, names) {
  const item = element("li", undefined, d.mark || "");
  item.dataset.mark = d.mark;
  const what = d.kind === "move" ? d.played : d.played || d.kind;
  item.append(`${d.move}. ${names[d.player]}: ${what}`);
  if (d.mark) {
    const sign = element("span", SIGNS[d.mark], "sign");
    sign.title = MARK_WORDS[d.mark];
    sign.setAttribute("aria-label", `(${MARK_WORDS[d.mark]})`);
    item.append(sign);
  }
  if (d.loss > 0) {
    const best = element("span", `gnubg's best: ${d.best}, ${d.loss.toFixed(3)} better`, "best");
    best.hidden = true;
    const show = element("button", "Best");
    show.type = "button";
    show.setAttribute("aria-expanded", "false");
    show.addEventListener("click", () => {
      best.hidden = !best.hidden;
      show.setAttribute("aria-expanded", String(!best.hidden));
    });
    item.append(show, " ", best);
  }
  return item;
}

/** Every game: its heading with both rates, the graph, the decisions. */
export function gamesView(analysis) {
  const names = analysis.players;
  const games = document.createDocumentFragment();
  analysis.games.forEach((game, index) => {
    const number = index + 1;
    const box = element("div", undefined, "game-analysis");
    const [a, b] = game.stats;
    box.appendChild(element("h3", `Game ${number}`));
    box.appendChild(
      element("p", `Error rates: ${names[0]} ${a.rate.toFixed(1)}, ${names[1]} ${b.rate.toFixed(1)}`),
    );
    box.appendChild(equityGraph(game, number, names));
    const list = element("ul", undefined, "decisions");
    list.setAttribute("aria-label", `Game ${number}: every decision that was not forced`);
    for (const d of game.decisions) list.appendChild(decisionItem(d, names));
    box.appendChild(list);
    games.appendChild(box);
  });
  return games;
}
