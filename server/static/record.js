// A finished match step by step (D377): the answer to `match! <id>` turned into what
// the board draws (a view as clip.js parseBoard makes it, from the first player's side)
// and into words. Pure functions, no DOM.

import { opponentMoveInView, ownMoveInView, parseMoves } from "./clip.js";

/** The words of one step of a game: who, the roll, the play in FIBS notation, or the
 * cube action or the win. */
export function stepText(found, step) {
  const name = found.players[step.player];
  const roll = step.dice ? ` ${step.dice[0]}-${step.dice[1]}` : "";
  switch (step.kind) {
    case "move": return `${name}${roll}: ${step.text}`;
    case "cannot": return `${name}${roll}: can't move`;
    case "unplayed": return `${name}${roll}: not played`;
    case "double": return `${name} doubles to ${step.value}`;
    case "redouble": return `${name} takes and redoubles to ${step.value}`;
    case "take": return `${name} accepts`;
    case "drop": return `${name} rejects`;
    case "win": {
      const points = `${step.points} point${step.points === 1 ? "" : "s"}`;
      return `${name} wins ${points}${step.match ? " and the match" : ""}`;
    }
    default: return `${name}: ${step.kind}`;
  }
}

/** The board of a game before its first step (`step` -1) or after step `step`, seen by
 * the match's first player, with the step's dice and, as a trail, its play. */
export function stepView(found, gameIndex, step) {
  const game = found.games[gameIndex];
  const at = step >= 0 ? game.steps[step] : null;
  const board = at ? at.board : game.start;
  const off = at ? at.off : [0, 0];
  const colour = game.o === 0 ? 1 : -1; // the first player is O: 1
  const bars = [board[25], -board[0]]; // O's bar, X's bar
  const own = colour === 1 ? 0 : 1;
  const owner = at ? at.owner : null;
  const dice = at && at.dice ? at.dice : [0, 0];
  const view = {
    player: found.players[0],
    opponent: found.players[1],
    length: found.length,
    playerScore: game.score[0],
    opponentScore: game.score[1],
    board,
    turn: 0,
    playerDice: at && at.player === 0 ? dice : [0, 0],
    opponentDice: at && at.player === 1 ? dice : [0, 0],
    cube: at ? at.cube : 1,
    playerMayDouble: owner !== 1,
    opponentMayDouble: owner !== 0,
    wasDoubled: false,
    colour,
    playerHome: off[0],
    opponentHome: off[1],
    playerBar: bars[own],
    opponentBar: bars[1 - own],
    canMove: 0,
    noCrawford: 0,
    postCrawford: 0,
  };
  let trail = [];
  if (at && at.kind === "move") {
    const moved = parseMoves(`${view.player} moves ${at.text} .`);
    if (moved) {
      const mine = at.player === 0;
      trail = moved[1].map((m) => (mine ? ownMoveInView(view, m) : opponentMoveInView(view, m)));
    }
  }
  // A double waiting for its answer: the cube offered, on the side of the one who answers.
  const offered = at && (at.kind === "double" || at.kind === "redouble")
    ? (at.player === 0 ? "opponent" : "player") : null;
  return { view, trail, offered };
}

/** `1 point match`, `unlimited match`. */
export function lengthText(length) {
  return length === null ? "unlimited match" : `${length} point match`;
}
