// Reading the server's CLIP lines: the board: line (boardstyle 3), who info (CLIP 5),
// and the few texts of the match flow the page reacts to. Pure functions, no DOM.

const UNLIMITED = 9999;

/** The board: line (53 fields, docs §3.1) as an object, or null when it is not one. */
export function parseBoard(line) {
  const f = line.split(":");
  if (f.length !== 53 || f[0] !== "board") return null;
  const n = f.map((x, i) => (i < 3 ? x : Number(x)));
  if (n.slice(3).some((x) => !Number.isInteger(x))) return null;
  const colour = n[41]; // 1: the player is O (positive, moves 24 -> 1); -1: X
  return {
    player: n[1],
    opponent: n[2],
    length: n[3] === UNLIMITED ? null : n[3],
    playerScore: n[4],
    opponentScore: n[5],
    board: n.slice(6, 32), // absolute points 0..25, O positive, X negative
    turn: n[32], // 1: O to act, -1: X, 0: none
    playerDice: [n[33], n[34]],
    opponentDice: [n[35], n[36]],
    cube: n[37],
    playerMayDouble: n[38] === 1,
    opponentMayDouble: n[39] === 1,
    wasDoubled: n[40] === 1,
    colour,
    playerHome: n[45],
    opponentHome: n[46],
    playerBar: n[47],
    opponentBar: n[48],
    canMove: n[49],
    noCrawford: n[50],
    postCrawford: n[51],
  };
}

/** The absolute point of the perspective player's point ``pip`` (1..24, 25 the bar, 0 off). */
export function absolutePoint(view, pip) {
  return view.colour === 1 ? pip : 25 - pip;
}

/** The checkers in the perspective player's own numbering: ``mine[p]`` and ``theirs[p]``
 * for p = 1..24 (the player's point p, counted towards the player's home), bars at 25
 * and 0 for the opponent's (the opponent's bar is shown on the opponent's side). */
export function sides(view) {
  const mine = new Array(26).fill(0);
  const theirs = new Array(26).fill(0);
  for (let p = 1; p <= 24; p++) {
    const v = view.board[absolutePoint(view, p)] * view.colour;
    if (v > 0) mine[p] = v;
    else if (v < 0) theirs[p] = -v;
  }
  mine[25] = view.playerBar;
  theirs[0] = view.opponentBar;
  return { mine, theirs };
}

/** Pip counts: the player's and the opponent's. */
export function pipCounts(view) {
  const { mine, theirs } = sides(view);
  let me = 25 * mine[25];
  let them = 25 * theirs[0];
  for (let p = 1; p <= 24; p++) {
    me += p * mine[p];
    them += (25 - p) * theirs[p];
  }
  return [me, them];
}

/** Who owns the cube: "player", "opponent" or "centre". */
export function cubeOwner(view) {
  if (view.playerMayDouble && !view.opponentMayDouble) return "player";
  if (view.opponentMayDouble && !view.playerMayDouble) return "opponent";
  return "centre";
}

/** True in the Crawford game: the rule is on, one side is one point away, not after it. */
export function isCrawford(view) {
  if (view.length === null || view.length < 2 || view.noCrawford !== 0 || view.postCrawford !== 0) return false;
  return (
    view.playerScore === view.length - 1 || view.opponentScore === view.length - 1
  );
}

/** ``<name> moves 24-18 bar-3 5-off .`` as [name, [[from, to], ...]] in absolute points
 * (``bar`` and ``off`` as null), or null. */
export function parseMoves(line) {
  const m = /^(\S+) moves ((?:\S+-\S+ )+)\.$/.exec(line);
  if (!m) return null;
  const point = (x) => (x === "bar" || x === "off" ? null : Number(x));
  const moves = m[2].trim().split(" ").map((pair) => pair.split("-").map(point));
  return [m[1], moves];
}

/** A move of the player's opponent (absolute points, null for bar or off) in the
 * perspective player's numbering: the opponent's bar is -1, their off 26. */
export function opponentMoveInView(view, [from, to]) {
  const mine = (a) => (view.colour === 1 ? a : 25 - a);
  return [from === null ? -1 : mine(from), to === null ? 26 : mine(to)];
}

/** A move of the perspective player (absolute points) in their own numbering. */
export function ownMoveInView(view, [from, to]) {
  const mine = (a) => (view.colour === 1 ? a : 25 - a);
  return [from === null ? 25 : mine(from), to === null ? 0 : mine(to)];
}

/** A line of `show saved`: opponent, length (null: unlimited), score, online, or null. */
export function parseSaved(line) {
  const m = /^(  | \*|\*\*)(\S+)\s+(\d+|unlimited)\s+(\d+) -\s*(\d+)$/.exec(line);
  if (!m) return null;
  return {
    opponent: m[2],
    length: m[3] === "unlimited" ? null : Number(m[3]),
    score: `${m[4]}-${m[5]}`,
    online: m[1] === "**",
  };
}

/** A CLIP 5 line as an object, or null. */
export function parseWho(line) {
  const w = line.split(" ");
  if (w[0] !== "5" || w.length < 13) return null;
  return {
    name: w[1],
    opponent: w[2] === "-" ? null : w[2],
    watching: w[3] === "-" ? null : w[3],
    ready: w[4] === "1",
    away: w[5] === "1",
    rating: w[6],
    experience: w[7],
    bot: isComputerClient(w[11]),
  };
}

/** A client field that marks a program playing, not a person (§2.3: a JavaFIBS player
 * profile, 20 characters starting with `=`), the rule by which the server marks an
 * account a bot (protocol.clip.is_computer_client, docs/bots.md). */
export function isComputerClient(client) {
  return typeof client === "string" && client.length === 20 && client[0] === "=";
}

/** A line of `show games`: two players, the match length and the score, or null. */
export function parseGame(line) {
  const m = /^(\S+)\s+-\s+(\S+) \((?:(\d+) point|unlimited) match (\d+)-(\d+)\)$/.exec(line);
  if (!m) return null;
  return { a: m[1], b: m[2], length: m[3] ? Number(m[3]) : null, score: `${m[4]}-${m[5]}` };
}

/** The texts the page reacts to beyond the board (protocol/replies.py). */
export const TEXTS = {
  invitation: /^(\S+) wants to (?:play (?:a (\d+) point|an unlimited) match|resume a saved match) with you\.$/,
  resign: /^(\S+) wants to resign\. You will win (\d+) points?\. Type 'accept' or 'reject'\.$/,
  double: /^(\S+) doubles\. Type 'accept'/,
  matchEnd: /^(?:You win|(\S+) wins) the (\d+) point match (\d+)-(\d+) \.$/,
  nextGame: /^Type 'join' if you want to play the next game/,
  rollOrDouble: /^It's your turn\. Please roll or double$/,
  youDouble: /^You double\. Please wait for (\S+) to accept/,
  doubleAnswered: /^(\S+) (?:accepts the (?:re)?double\. The cube shows \d+\.|gives up\. You win |redoubles to \d+\.)/,
};
