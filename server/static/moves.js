// Legal plays for the player's roll, in the player's own numbering (point 1..24 towards
// home, 25 the bar, 0 off). A play uses as many dice as possible; when only one die of
// two can be used, the higher one if it can (the rules of backgammon.moves).

function bearingOff(mine) {
  for (let p = 7; p <= 25; p++) if (mine[p] > 0) return false;
  return true;
}

function highest(mine) {
  for (let p = 25; p >= 1; p--) if (mine[p] > 0) return p;
  return 0;
}

/** Single-die steps [from, to, hit] for die ``d``. */
function steps(mine, theirs, d) {
  const out = [];
  const froms = mine[25] > 0 ? [25] : [];
  if (!froms.length) for (let p = 24; p >= 1; p--) if (mine[p] > 0) froms.push(p);
  const off = bearingOff(mine);
  const top = highest(mine);
  for (const from of froms) {
    const to = from - d;
    if (to >= 1) {
      if (theirs[to] < 2) out.push([from, to, theirs[to] === 1]);
    } else if (off && (to === 0 || from === top)) {
      out.push([from, 0, false]);
    }
  }
  return out;
}

function apply(mine, theirs, [from, to, hit]) {
  const m = mine.slice();
  const t = theirs.slice();
  m[from] -= 1;
  if (to > 0) m[to] += 1;
  if (hit) {
    t[to] -= 1;
    t[0] += 1;
  }
  return [m, t];
}

/** Every legal play: a list of moves [from, to, hit], each a single die, in the order
 * played (a play appears once per order its dice can be used in). */
export function legalPlays(mine, theirs, dice) {
  const [a, b] = dice;
  const orders = a === b ? [[a, a, a, a]] : [[a, b], [b, a]];
  const plays = [];
  const walk = (m, t, rest, sofar) => {
    let moved = false;
    if (rest.length) {
      for (const step of steps(m, t, rest[0])) {
        moved = true;
        const [m2, t2] = apply(m, t, step);
        walk(m2, t2, rest.slice(1), [...sofar, { step, die: rest[0] }]);
      }
    }
    if (!moved) plays.push(sofar);
  };
  for (const order of orders) walk(mine, theirs, order, []);
  const most = Math.max(0, ...plays.map((p) => p.length));
  if (most === 0) return []; // no die can be used: nothing to offer
  let kept = plays.filter((p) => p.length === most);
  if (most === 1 && a !== b) {
    const high = Math.max(a, b);
    if (kept.some((p) => p[0].die === high)) kept = kept.filter((p) => p[0].die === high);
  }
  return kept.map((p) => p.map((x) => x.step));
}

function same(x, y) {
  return x[0] === y[0] && x[1] === y[1];
}

/** The plays that begin with ``done`` (moves already made on the page). */
export function continuing(plays, done) {
  return plays.filter((p) => p.length >= done.length && done.every((m, i) => same(m, p[i])));
}

/** The next single moves the page may offer after ``done``. */
export function nextMoves(plays, done) {
  const seen = new Map();
  for (const p of continuing(plays, done)) {
    if (p.length > done.length) {
      const m = p[done.length];
      seen.set(`${m[0]}-${m[1]}`, m);
    }
  }
  return [...seen.values()];
}

/** True when ``done`` is a whole legal play. */
export function complete(plays, done) {
  return plays.some((p) => p.length === done.length && done.every((m, i) => same(m, p[i])));
}

/** The FIBS text of a play (absolute point numbers, ``bar`` and ``off``). */
export function moveText(done, colour) {
  const abs = (p) => (colour === 1 ? p : 25 - p);
  return done
    .map(([from, to]) => `${from === 25 ? "bar" : abs(from)}-${to === 0 ? "off" : abs(to)}`)
    .join(" ");
}
