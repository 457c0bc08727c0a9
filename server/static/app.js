// The page: a FIBS client over the server's WebSocket (one CLIP line per message).
// Everything from the server is put in with textContent, never as markup.

import {
  TEXTS,
  isCrawford,
  opponentMoveInView,
  ownMoveInView,
  parseBoard,
  parseGame,
  parseMoves,
  parseSaved,
  parseWho,
  pipCounts,
  sides,
} from "./clip.js";
import { gamesView, playerRow } from "./analysis.js";
import { lengthText, stepText, stepView } from "./record.js";
import { drawBoard, positionText } from "./board.js";
import { commitmentOf, verifyRecord } from "./dice.js";
import { complete, legalPlays, moveText, nextMoves } from "./moves.js";
import { chouetteAsk, chouetteBoard, chouetteLine, chouetteReset, chouetteSeat, wireChouette } from "./chouette.js";

const CLIENT = "fibsweb";
const $ = (id) => document.getElementById(id);
const LOGIN_PROMPT = "login: ";
const PASSWORD_PROMPTS = ["Please give your password: ", "Please retype your password: "];
const MAX_LINES = 200;
const SAVED_HEADER = "  opponent          matchlength   score (your points first)";
const NO_SAVED = "no saved games.";
const VISITOR = "visitor!"; // the login word of a visitor (watching without an account)
const NAME = /^[A-Za-z_]+$/; // a name the server takes (§1.7: letters and the underscore)
const NAME_INVALID = "Your name may only contain letters and the underscore character _ .";
const BOARDSTYLE_SET = "Value of 'boardstyle' set to 3."; // the reply to the page's own setting
const LENGTH_KEY = "fibs-invite-length"; // the match length last chosen, kept in the browser
const SOUND_KEY = "fibs-turn-sound"; // "on": a sound for the player's turn (off by default)
const LEAVE_CONFIRM_MS = 4000; // how long Leave waits for its second click
const DOUBLE_CLICK_MS = 400; // two clicks on one checker this close together play it
const REPLAY_PAUSE_MS = 900; // how long the board before the last move is shown again
const SLOW_LOGIN_MS = 2000; // a login unanswered this long is being slowed down
const SLOW_LOGIN = "Logging in… the server slows logins down after wrong passwords: please wait.";
// Never lost (docs/web.md, D320-D324): after a dropped connection the page logs in again
// with the session token the server gave it (`token!`), kept for this tab only.
const SESSION_KEY = "fibs-session"; // sessionStorage: {token, name, place}
const TOKEN_REPLY = /^token! (\S+) (\d+)$/; // the answer to `token!` (D321)
const RETRY_MS = [1000, 2000, 4000, 8000, 15000, 30000]; // the waits between tries
const ELSEWHERE = "** You logged in again from "; // D193: another page took the session
const TIMED_OUT = "Connection timed out."; // the idle time-out: not a drop
// The command box speaks like telnet (D376): what is typed there goes as `text! <line>`,
// and its reply, between these two lines, is the telnet text (who as a table, help,
// misspellings explained), while the page's own commands stay CLIP.
const TEXT = { word: "text!", begin: "text! begin", end: "text! end" };
// The lines telling a player that the opponent's connection ended (the match was saved).
const OPPONENT_GONE = /^(?:(\S+) drops connection\.|Closed old connection with user (\S+)\.|Network error with (\S+)\.) The game was saved\.$/;

const state = {
  ws: null,
  me: null, // logged-in name (VISITOR for a visitor)
  visitor: false, // watching without an account: no play, no chat
  goodbye: null, // the server's last refusal before it closed (too many visitors)
  ready: false,
  who: new Map(),
  games: [],
  readingGames: false,
  view: null,
  plays: [],
  done: [],
  selected: null,
  leaving: false, // the user asked to log out
  pending: null, // what the open connection is for: {kind: "login"|"register", ...}
  resignOffer: false, // the opponent offers to resign: accept or reject
  nextGame: false,
  matchOver: false,
  gamesTimer: null,
  saved: [],
  trail: [], // the last move announced, in the board's numbering, drawn as a trail
  doubling: false, // the player doubled and waits for the answer
  pickedAt: 0, // when a point was last clicked (a second click soon after is a double click)
  game: { moves: [], rolls: new Map() }, // the game so far: its plays in FIBS notation
  quietBoardstyle: false, // the reply to the page's own "set boardstyle 3" is still to come
  dice: { commitment: null, exporting: null, json: null }, // the match's dice proof (dice.js)
  token: null, // the session token (D320): the page logs in again with it
  tokenTimer: null, // when the token is replaced before it expires
  place: { playing: null, watching: null }, // where the player is: where a reconnect returns
  back: null, // reconnecting: {attempt, timer}
  resumeWith: null, // the opponent of an interrupted match, to resume it with
  resumeInvited: false, // the page invited resumeWith to resume
  resumeWatch: null, // the player watched before the drop, to watch again
  finished: null, // the id of the match that just ended (its dice revealed), for its analysis
  analysis: null, // the analysis asked for: {id, tries, timer, reading}
  typedReply: false, // between `text! begin` and `text! end`: a typed command's text reply
  record: null, // the finished match shown (D377): {found, game, step, mat}
  lastMove: null, // the last play of the game: {before: the board before it, trail}
  replayTrail: null, // the trail drawn once more by "Show the last move again"
  replayTimer: null,
  asked: null, // the page of a finished match or a player asked for: {kind, key}
  audio: null, // the AudioContext of the turn's sound, made when the switch is turned on
};

/** The answers to the page's own `match! <id>` and `profile! <name>` (D377), and the
 * refusals that end them. */
const PAGES = {
  match: "match! ",
  profile: "profile! ",
  noMatch: /^\*\* There is no finished match (\d+)\.$/,
  noUser: /^No information found on user (\S+)\.$/,
  route: { match: /^#match\/(\d+)$/, player: /^#player\/([A-Za-z_]+)$/ },
};

/** The lines of `analysis <id> json` and its refusals (D285-D287, D326). */
const ANALYSIS = {
  begin: /^\*\*\* Analysis of match (\d+) as JSON:$/,
  end: /^\*\*\* End of analysis of match (\d+)\.$/,
  queued: /^\*\* Match (\d+) is queued for analysis/,
  refused: /^\*\* (?:Matches are not analysed on this server\.|GNU Backgammon could not analyse match (\d+)\.|There is no finished match (\d+)\.)$/,
};
const ANALYSIS_WAIT_MS = 2000; // a queued analysis is asked for again after this
const ANALYSIS_TRIES = 60; // ... at most so many times (gnubg takes about 1 s a match)

/** The dice lines of issue 30 (protocol/replies.py, D272, D273, D275). */
const DICE = {
  committed: /^\*\*\* Dice of this match \(fibs-dice\/1\): commitment ([0-9a-f]{64}),/,
  revealed: /^\*\*\* Dice of this match revealed: server seed ([0-9a-f]{64})\. Type 'show dice (\d+)' for the proof\.$/,
  exportBegin: /^\*\*\* Match (\d+) as JSON:$/,
  exportEnd: /^\*\*\* End of match (\d+)\.$/,
};

function show(id, on) {
  $(id).hidden = !on;
}

function addLine(list, text, cls) {
  const item = document.createElement("li");
  item.textContent = text;
  if (cls) item.className = cls;
  list.appendChild(item);
  while (list.children.length > MAX_LINES) list.firstElementChild.remove();
  list.scrollTop = list.scrollHeight;
}

function message(text, cls) {
  addLine($("messages"), text, cls);
}

function chat(text, cls) {
  addLine($("chat"), text, cls);
}

function send(line) {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(line);
}

// -- the connection ---------------------------------------------------------------------

function open(pending) {
  // A visitor logging in: the new connection starts afresh (not so a reconnect).
  if (state.me !== null && pending.kind !== "resume") loggedOut();
  if (state.ws) state.ws.close();
  state.pending = pending;
  state.typedReply = false;
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws`);
  state.ws = ws;
  $("status").textContent = "Connecting…";
  ws.addEventListener("message", (event) => {
    if (ws === state.ws) receive(String(event.data));
  });
  ws.addEventListener("close", () => {
    if (ws !== state.ws) return;
    state.ws = null;
    if (pending.kind === "resume" && pending.failed) return sessionEnded();
    const user = (state.me !== null && !state.visitor) || pending.kind === "resume";
    if (user && state.token && !state.leaving && !state.goodbye) return reconnecting();
    const wasIn = state.me !== null;
    loggedOut();
    if (state.leaving) $("status").textContent = "Logged out.";
    else if (state.goodbye) $("status").textContent = state.goodbye;
    else if (wasIn) $("status").textContent = "Disconnected.";
    state.leaving = false;
    state.goodbye = null;
  });
}

function receive(line) {
  const pending = state.pending;
  if (pending && pending.kind === "login") return loginDialog(pending, line);
  if (pending && pending.kind === "register") return registerDialog(pending, line);
  if (pending && pending.kind === "resume") return resumeDialog(pending, line);
  if (pending && pending.kind === "visit") {
    if (line !== LOGIN_PROMPT) return;
    state.pending = null;
    send(`login ${CLIENT} 1008 ${VISITOR}`);
    return visiting();
  }
  if (state.me) return onLine(line);
}

function loginDialog(pending, line) {
  if (line === LOGIN_PROMPT) {
    if (pending.sent) {
      clearTimeout(pending.slow);
      accountNote("Login failed: wrong name or password.");
      state.pending = null;
      state.ws.close();
      return;
    }
    pending.sent = true;
    send(`login ${CLIENT} 1008 ${pending.name} ${pending.password}`);
    accountNote(`Logging in as ${pending.name}…`, { note: "" });
    // The server answers a login late after wrong passwords for the name or address
    // (server/doors/throttle.py): say so instead of leaving the page silent.
    pending.slow = setTimeout(() => {
      if (state.pending === pending) accountNote(SLOW_LOGIN);
    }, SLOW_LOGIN_MS);
    return;
  }
  if (line.startsWith("1 ")) {
    clearTimeout(pending.slow);
    state.pending = null;
    loggedIn(line.split(" ")[1]);
  }
}

function registerDialog(pending, line) {
  if (line === LOGIN_PROMPT) return send("guest");
  if (line === "> " && !pending.named) {
    pending.named = true;
    return send(`name ${pending.name}`);
  }
  if (line === PASSWORD_PROMPTS[0]) {
    // Asked again: the server refused the password (the line before says why).
    if (pending.gave) return refused(pending.last);
    pending.gave = true;
    return send(pending.password);
  }
  if (line === PASSWORD_PROMPTS[1]) return send(pending.password);
  if (line === "You are registered.") {
    // Registered and logged in, in telnet mode: leave, and log in again as a CLIP client.
    send("bye");
    open({ kind: "login", name: pending.name, password: pending.password });
    return;
  }
  if (line.startsWith("** ")) return refused(line.slice(3));
  if (line.trim()) pending.last = line;
}

/** What the login and registration forms need the player to read (a refusal, a wait):
 * in the header's status and beside the forms (issue 28, seen 6: a wrong password showed
 * only in the header bar), where a screen reader announces it (role="alert"). ``note``:
 * another text beside the forms ("" takes the last one away). */
function accountNote(text, { note = text } = {}) {
  $("status").textContent = text;
  $("account-note").textContent = note;
}

function refused(why) {
  accountNote(`Not registered: ${why}`);
  state.pending = null;
  state.ws.close();
}

// -- never lost: the session token and the reconnect ------------------------------------

/** The session kept for this tab (sessionStorage: gone when the tab closes). */
function keepSession() {
  try {
    if (state.token) {
      const kept = { token: state.token, name: state.me, place: state.place };
      sessionStorage.setItem(SESSION_KEY, JSON.stringify(kept));
    } else sessionStorage.removeItem(SESSION_KEY);
  } catch {
    // storage refused (a private window): a reload then shows the login form
  }
}

function keptSession() {
  try {
    const kept = JSON.parse(sessionStorage.getItem(SESSION_KEY) || "null");
    if (kept && typeof kept.token === "string") return kept;
  } catch {
    // nothing kept, or not readable
  }
  return null;
}

/** `token! <token> <seconds>`: keep it, and replace it when half its time has passed. */
function newToken(token, seconds) {
  state.token = token;
  keepSession();
  clearTimeout(state.tokenTimer);
  const half = Math.min(seconds * 500, 2 ** 31 - 1); // setTimeout's longest wait
  state.tokenTimer = setTimeout(() => send(`token! ${state.token}`), half);
}

function forgetToken() {
  clearTimeout(state.tokenTimer);
  state.token = null;
  keepSession();
}

/** Where the board shows the player: playing someone, watching someone, or neither. */
function notePlace(place) {
  if (place.playing === state.place.playing && place.watching === state.place.watching) return;
  state.place = place;
  keepSession();
}

/** While reconnecting the page is greyed and takes no input (mouse or keyboard): what
 * it shows is how things were, and nothing could be sent. */
function offline(on) {
  document.body.classList.toggle("offline", on);
  for (const part of document.querySelectorAll("main > section")) part.inert = on;
}

function backNotice(text) {
  $("reconnecting").textContent = text;
  show("reconnecting", Boolean(text));
}

/** The connection dropped: keep the page as it is, greyed, and try again after a wait
 * that grows (1 s, 2 s, 4 s ... 30 s). */
function reconnecting() {
  const back = state.back || (state.back = { attempt: 0, timer: null });
  const wait = RETRY_MS[Math.min(back.attempt, RETRY_MS.length - 1)];
  back.attempt += 1;
  offline(true);
  $("status").textContent = "Reconnecting…";
  backNotice(`Connection lost. Reconnecting in ${Math.round(wait / 1000)} s…`);
  clearTimeout(back.timer);
  back.timer = setTimeout(tryAgain, wait);
}

function tryAgain() {
  if (!state.back || !state.token) return;
  clearTimeout(state.back.timer);
  backNotice("Connection lost. Reconnecting now…");
  open({ kind: "resume", token: state.token });
}

function resumeDialog(pending, line) {
  if (line === LOGIN_PROMPT) {
    if (pending.sent) {
      pending.failed = true; // expired, or ended by a password change (D323)
      state.pending = null;
      state.ws.close();
      return;
    }
    pending.sent = true;
    send(`login ${CLIENT} 1008 token! ${pending.token}`);
    return;
  }
  if (line.startsWith("1 ")) {
    state.pending = null;
    resumed(line.split(" ")[1]);
  }
}

/** The token no longer logs in: the one time the page falls back to the login form. */
function sessionEnded() {
  forgetToken();
  state.back = null;
  offline(false);
  backNotice("");
  loggedOut();
  accountNote("Your session has ended: please log in again.");
}

/** Logged in again with the token: a new token at once (the one used ends, D321), then
 * back where the player was (the lobby's lists anew, the match or the watching). */
function resumed(name) {
  clearTimeout(state.back && state.back.timer);
  state.back = null;
  offline(false);
  send(`token! ${state.token}`);
  state.who.clear();
  state.view = null;
  state.doubling = false;
  state.resignOffer = false;
  state.nextGame = false;
  show("table", false);
  $("invitations").replaceChildren();
  state.resumeWith = state.place.playing;
  state.resumeInvited = false;
  state.resumeWatch = state.place.watching;
  backNotice(state.resumeWith ? `Back. Resuming the match with ${state.resumeWith}…` : "");
  loggedIn(name, { again: true });
}

/** Once the who list is known, and at each change of it: watch again, and invite the
 * opponent of the interrupted match to resume it when they are here and free. */
function resumePlace() {
  const watch = state.resumeWatch;
  if (watch && state.who.has(watch)) {
    state.resumeWatch = null;
    send(`watch ${watch}`);
  }
  const other = state.resumeWith;
  if (!other || state.resumeInvited) return;
  const there = state.who.get(other);
  if (there && !there.opponent) {
    state.resumeInvited = true;
    send(`invite ${other}`);
    backNotice(`Back. Resuming the match with ${other}…`);
  } else if (!there) {
    backNotice(`Back. ${other} is not here: the match resumes when ${other} returns.`);
  } else {
    backNotice(`Back. ${other} is playing someone else: the match resumes when ${other} is free.`);
  }
}

/** An invitation from the opponent of the interrupted match to resume it: joined at
 * once. When both pages invited each other, the one whose name sorts first joins. */
function resumeInvitation(from, line) {
  if (from !== state.resumeWith || !/resume a saved match/.test(line)) return false;
  if (!(state.resumeInvited && state.me > from)) send(`join ${from}`);
  return true;
}

function loggedIn(name, { again = false } = {}) {
  if (!again) send("token!"); // the session token, to come back with (D320)
  state.me = name;
  $("status").textContent = `Logged in as ${name}`;
  $("account-note").textContent = "";
  show("account", false);
  show("logout", true);
  show("lobby", true);
  show("talk", true);
  show("chouette-panel", true);
  chouetteAsk(); // a chouette table the player is away from offers its Return
  state.quietBoardstyle = true;
  send("set boardstyle 3");
  askGames();
  send("show saved");
  route(); // a page of a finished match or a player named in the address
}

/** A visitor: the lobby and watching, every control that acts hidden; logging in stays
 * offered (it opens a connection of its own). */
function visiting() {
  state.me = VISITOR;
  state.visitor = true;
  $("status").textContent = "Watching as a visitor. Log in or register to play and chat.";
  $("account-note").textContent = "";
  show("visit-box", false);
  show("login-form", false);
  show("register-form", false);
  show("account-box", true);
  show("logout", true);
  $("logout").textContent = "Leave";
  show("lobby", true);
  show("talk", true);
  show("player-controls", false);
  show("chat-form", false);
  askGames();
}

function loggedOut() {
  state.me = null;
  show("analysis", false);
  show("record", false);
  show("profile", false);
  state.record = null;
  state.asked = null;
  state.analysis = null;
  state.place = { playing: null, watching: null };
  state.resumeWith = null;
  state.resumeWatch = null;
  state.visitor = false;
  $("logout").textContent = "Log out";
  show("visit-box", true);
  show("account-box", false);
  show("login-form", true);
  show("register-form", true);
  show("player-controls", true);
  show("chat-form", true);
  state.who.clear();
  state.view = null;
  show("account", true);
  show("logout", false);
  show("lobby", false);
  show("talk", false);
  show("table", false);
  show("chouette-panel", false);
  chouetteReset();
  $("who").replaceChildren();
  $("games").replaceChildren();
  $("invitations").replaceChildren();
}

// -- lines after login ------------------------------------------------------------------

function onLine(line) {
  const token = TOKEN_REPLY.exec(line);
  if (token) return newToken(token[1], Number(token[2]));
  if (line === "token! ended") return;
  if (line === TEXT.begin || line === TEXT.end) {
    state.typedReply = line === TEXT.begin;
    return;
  }
  if (state.typedReply) return typedLine(line);
  if (line.startsWith(PAGES.match)) return recordArrived(line.slice(PAGES.match.length));
  if (line.startsWith(PAGES.profile)) return profileArrived(line.slice(PAGES.profile.length));
  if (pageRefused(line)) return;
  if (line.startsWith(ELSEWHERE) || line === TIMED_OUT) state.goodbye = line.replace(/^\*\* /, "");
  if (line.startsWith("board:")) {
    const view = parseBoard(line);
    chouetteBoard();
    if (view) return newBoard(view);
  }
  if (chouetteLine(line)) return; // the chouette panel's own lines (chouette.js)
  if (diceLine(line)) return;
  if (analysisLine(line)) return;
  if (state.quietBoardstyle && line === BOARDSTYLE_SET) {
    state.quietBoardstyle = false; // the reply to the page's own setting, not news
    return;
  }
  const code = /^(\d+)(?: |$)/.exec(line);
  if (code) {
    const rest = line.slice(code[0].length);
    const [first, ...others] = rest.split(" ");
    const text = others.join(" ");
    switch (Number(code[1])) {
      case 2:
        state.ready = rest.split(" ")[16] === "1";
        $("ready").checked = state.ready;
        return;
      case 6:
        return resumePlace();
      case 3: case 4: case 10: case 11:
        return;
      case 5: {
        const who = parseWho(line);
        if (who) whoUpdate(who);
        return;
      }
      case 7:
        return;
      case 8:
        if (first === state.me) return; // an earlier connection of this user ending
        state.who.delete(first);
        drawWho();
        askGames();
        return;
      case 9: return chat(`${first} (message): ${others.slice(1).join(" ")}`, "tell");
      case 12: return chat(`${first} tells you: ${text}`, "tell");
      case 13: return chat(`${first} shouts: ${text}`, "shout");
      case 14: return chat(`${first} whispers: ${text}`, "kibitz");
      case 15: return chat(`${first} kibitzes: ${text}`, "kibitz");
      case 16: return chat(`You tell ${first}: ${text}`, "own");
      case 17: return chat(`You shout: ${rest}`, "own");
      case 18: return chat(`You whisper: ${rest}`, "own");
      case 19: return chat(`You kibitz: ${rest}`, "own");
      default:
        break;
    }
  }
  if (line === SAVED_HEADER || line === NO_SAVED) {
    if (line === SAVED_HEADER) state.saved = [];
    drawSaved();
    return;
  }
  const saved = parseSaved(line);
  if (saved) {
    state.saved.push(saved);
    drawSaved();
    return;
  }
  if (line === "List of games:") {
    state.readingGames = true;
    state.games = [];
    drawGames();
    return;
  }
  const game = parseGame(line);
  if (game) {
    state.games.push(game);
    drawGames();
    return;
  }
  state.readingGames = false;
  if (state.visitor && line.startsWith("** Too many visitors")) state.goodbye = line.slice(3);
  gameRecord(line);
  matchText(line);
  if (line.trim()) message(line, lineClass(line));
}

/** A CLIP 5 line: the lobby's row of that user. */
function whoUpdate(who) {
  const before = state.who.get(who.name);
  state.who.set(who.name, who);
  if (who.name === state.me) {
    state.ready = who.ready;
    $("ready").checked = who.ready;
  }
  if (!before || before.opponent !== who.opponent) askGames();
  drawWho();
  resumePlace();
}

/** A line of the telnet-style reply to a command typed in the command box (D376): shown
 * as it is, in a fixed-width font (tables line up), never read as CLIP (a `who` row
 * starts with a number too); a board or a move it brings still goes to the table. */
function typedLine(line) {
  if (line.startsWith("board:")) {
    const view = parseBoard(line);
    if (view) return newBoard(view);
  }
  const who = parseWho(line); // a who update that came in the middle: still the lobby's
  if (who) return whoUpdate(who);
  gameRecord(line);
  matchText(line);
  message(line, `typed ${lineClass(line)}`.trim());
}

/** Lines starting with ``**`` that are news, not refusals (the rest are shown as refusals). */
const NOTICES = [
  "** You invited", "** You are now", "** Player ", "** Please wait for", "** You won't",
  "** You will", "** You're now", "** You'll", "** You terminated", "** User ",
  "** You stop watching", "** You gag", "** You ungag", "** You blind", "** You unblind",
  "** You want", "** You allow", "** You don't allow", "** You agree", "** You don't agree",
  "** Your terminal", "** You insist", "** You would like",
];

function lineClass(line) {
  if (!line.startsWith("**")) return "";
  return NOTICES.some((start) => line.startsWith(start)) ? "notice" : "refusal";
}

function matchText(line) {
  let m;
  const moved = parseMoves(line);
  if (moved && state.view) {
    const [who, moves] = moved;
    const view = state.view;
    if (who === view.opponent) state.trail = moves.map((mv) => opponentMoveInView(view, mv));
    else if (who === view.player) state.trail = moves.map((mv) => ownMoveInView(view, mv));
    state.lastMove = { before: view, trail: state.trail };
    return drawTable();
  }
  if ((m = OPPONENT_GONE.exec(line)) && state.view && state.view.player === "You") {
    // The opponent's connection ended: their page comes back and invites; join it then.
    const other = m[1] || m[2] || m[3];
    if (other === state.view.opponent) {
      state.resumeWith = other;
      state.resumeInvited = false;
      backNotice(`${other}'s connection ended: the match resumes when ${other} returns.`);
    }
  }
  if (/ The game was saved\.$/.test(line)) {
    if (!m || !state.resumeWith) notePlace({ playing: null, watching: null });
    // The match left the table (leave, a drop): back to the lobby, the saved list anew.
    state.view = null;
    state.doubling = false;
    state.trail = [];
    state.lastMove = null;
    show("table", false);
    send("show saved");
    return;
  }
  if ((m = /^You're now watching (\S+)\.$/.exec(line))) {
    notePlace({ playing: null, watching: m[1] });
    return;
  }
  if ((m = /^(\S+) and (\S+) are resuming their /.exec(line))) {
    // The watched player's match is resumed: it comes without a board (D105), ask for it.
    if (!playing() && [m[1], m[2]].includes(state.place.watching)) send("board");
    return;
  }
  if ((m = TEXTS.invitation.exec(line))) {
    if (resumeInvitation(m[1], line)) return;
    return addInvitation(m[1], line);
  }
  if (/ Your running match was loaded\.$/.test(line)) {
    // A resumed match comes without a board (D105): ask for it, as FIBS clients do.
    state.matchOver = false;
    state.resumeWith = null;
    backNotice("");
    $("invitations").replaceChildren();
    send("board");
    send("show saved"); // the match is being played again, no longer saved and waiting
    return;
  }
  if (TEXTS.youDouble.test(line)) {
    state.doubling = true;
  } else if (TEXTS.doubleAnswered.test(line)) {
    state.doubling = false;
  } else if (TEXTS.resign.test(line)) {
    state.resignOffer = true;
  } else if (TEXTS.nextGame.test(line)) {
    state.nextGame = true;
  } else if ((m = TEXTS.matchEnd.exec(line))) {
    state.matchOver = true;
    state.nextGame = false;
    notePlace({ playing: null, watching: null });
    send("show saved");
    $("prompt").textContent = line;
    askGames();
  } else if (/^\*\* You are now playing|^\*\* Player \S+ has joined you/.test(line)) {
    state.matchOver = false;
    state.resumeWith = null;
    backNotice("");
    $("invitations").replaceChildren();
  } else {
    return;
  }
  drawTable();
}

/**
 * The dice proof, checked in the browser (docs/dice.md): the commitment told at the
 * start is kept; when the seed is revealed, a player asks for the match's record
 * (`export <id> json`, whose lines the page keeps to itself) and recomputes every roll,
 * a watcher checks the seed against the commitment. True: the line was the page's own.
 */
// -- a finished match's analysis (D326) -----------------------------------------------------

function askAnalysis(id) {
  const asked = state.analysis;
  if (asked) clearTimeout(asked.timer);
  state.analysis = { id, tries: 0, timer: null, reading: false };
  $("analysis-title").textContent = `Analysis of match ${id}`;
  $("analysis-note").textContent = "Asking GNU Backgammon's analysis…";
  show("analysis-players", false);
  $("analysis-games").replaceChildren();
  show("analysis", true);
  send(`analysis ${id} json`);
}

/** The page's own lines of an analysis asked for: true when the line was one of them. */
function analysisLine(line) {
  const asked = state.analysis;
  if (!asked) return false;
  let m;
  if ((m = ANALYSIS.begin.exec(line)) && Number(m[1]) === asked.id) {
    asked.reading = true;
    return true;
  }
  if (asked.reading && line.startsWith("{")) {
    try {
      drawAnalysis(JSON.parse(line));
    } catch {
      $("analysis-note").textContent = "The analysis could not be read.";
    }
    return true;
  }
  if ((m = ANALYSIS.end.exec(line)) && asked.reading) {
    asked.reading = false;
    return true;
  }
  if ((m = ANALYSIS.queued.exec(line)) && Number(m[1]) === asked.id) {
    if (asked.tries >= ANALYSIS_TRIES) {
      $("analysis-note").textContent = "GNU Backgammon is busy: ask again later.";
      return true;
    }
    asked.tries += 1;
    $("analysis-note").textContent = "GNU Backgammon is analysing the match…";
    asked.timer = setTimeout(() => send(`analysis ${asked.id} json`), ANALYSIS_WAIT_MS);
    return true;
  }
  if ((m = ANALYSIS.refused.exec(line))) {
    $("analysis-note").textContent = line.slice(3);
    return false; // in the messages too
  }
  return false;
}

function drawAnalysis(found) {
  const [first, second] = found.players;
  $("analysis-title").textContent =
    `Analysis of match ${found.match}, ${first} – ${second}, by GNU Backgammon at ${found.ply}-ply`;
  $("analysis-note").textContent =
    "Error rate: equity lost per decision that was not forced, ×500 (lower is better). " +
    "?! doubtful, ? error, ?? blunder.";
  const body = $("analysis-players").querySelector("tbody");
  body.replaceChildren(playerRow(first, found.stats[0]), playerRow(second, found.stats[1]));
  show("analysis-players", true);
  $("analysis-games").replaceChildren(gamesView(found));
}

function diceLine(line) {
  const dice = state.dice;
  let m;
  if (dice.json !== null) {
    if (DICE.exportEnd.test(line)) {
      const text = dice.json;
      dice.json = null;
      proveRecord(text);
    } else {
      dice.json += line;
    }
    return true;
  }
  if ((m = DICE.exportBegin.exec(line)) && m[1] === dice.exporting) {
    dice.exporting = null;
    dice.json = "";
    return true;
  }
  if ((m = DICE.committed.exec(line))) {
    dice.commitment = m[1];
    proofText("");
  } else if ((m = DICE.revealed.exec(line))) {
    state.finished = Number(m[2]); // the record of the match that just ended
    if (state.view) drawTable();
    if (playing()) {
      dice.exporting = m[2];
      proofText("Checking the dice…");
      send(`export ${m[2]} json`);
    } else if (dice.commitment !== null) {
      proveSeed(m[1], dice.commitment);
    }
  }
  return false;
}

function proofText(text, verified) {
  const box = $("dice-proof");
  box.textContent = text;
  box.dataset.verified = verified === undefined ? "" : String(verified);
}

async function proveRecord(text) {
  let verdict;
  try {
    verdict = await verifyRecord(JSON.parse(text), state.dice.commitment);
  } catch (error) {
    verdict = { verified: false, why: `the record could not be read (${error.message})` };
  }
  if (verdict.verified) {
    proofText(`Dice verified in this browser: all ${verdict.rolls} rolls follow from the seeds and the commitment.`, true);
  } else {
    proofText(`Dice not verified: ${verdict.why}.`, verdict.verified);
  }
}

async function proveSeed(seed, commitment) {
  if (!globalThis.crypto || !globalThis.crypto.subtle) {
    proofText("Dice not checked: this page has no Web Crypto here (it needs https).", null);
    return;
  }
  const made = await commitmentOf(seed);
  if (made === commitment) proofText("Dice commitment verified in this browser: the revealed seed is the one committed to.", true);
  else proofText(`Dice not verified: the seed's SHA-256 is ${made}, not the commitment ${commitment}.`, false);
}

function addInvitation(from, line) {
  const item = document.createElement("li");
  const text = document.createElement("span");
  text.textContent = line;
  const join = document.createElement("button");
  join.type = "button";
  join.textContent = "Join";
  join.dataset.join = from;
  join.addEventListener("click", () => {
    send(`join ${from}`);
    item.remove();
  });
  item.append(text, " ", join);
  $("invitations").appendChild(item);
}

function askGames() {
  if (state.gamesTimer) return;
  state.gamesTimer = setTimeout(() => {
    state.gamesTimer = null;
    send("show games");
  }, 300);
}

// -- the lobby --------------------------------------------------------------------------

function button(label, onClick, data) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  Object.assign(b.dataset, data);
  b.addEventListener("click", onClick);
  return b;
}

function drawWho() {
  const rows = [...state.who.values()].sort((a, b) => a.name.localeCompare(b.name));
  const body = $("who");
  body.replaceChildren();
  for (const w of rows) {
    const tr = document.createElement("tr");
    tr.dataset.name = w.name;
    const status = w.opponent
      ? `playing ${w.opponent}`
      : w.watching
        ? `watching ${w.watching}`
        : w.away ? "away" : w.ready ? "ready" : "-";
    for (const value of [w.name, w.rating, w.experience, status]) {
      const td = document.createElement("td");
      td.textContent = value;
      tr.appendChild(td);
    }
    if (!state.visitor) tr.firstElementChild.replaceChildren(playerLink(w.name)); // D377
    if (w.bot) {
      // A program, not a person (D325): a mark after the name, said in words.
      tr.dataset.bot = "1";
      const mark = document.createElement("span");
      mark.className = "bot-mark";
      mark.textContent = "bot";
      mark.title = "A program that plays, not a person";
      tr.firstElementChild.append(" ", mark);
    }
    const td = document.createElement("td");
    if (w.name !== state.me) {
      if (w.opponent) {
        td.appendChild(button("Watch", () => send(`watch ${w.name}`), { watch: w.name }));
      } else if (w.ready && !state.visitor) {
        td.appendChild(button("Invite", () => invite(w.name), { invite: w.name }));
      }
    }
    tr.appendChild(td);
    body.appendChild(tr);
  }
}

function invite(name) {
  const length = Number($("invite-length").value) || 1;
  try {
    localStorage.setItem(LENGTH_KEY, String(length));
  } catch {
    // storage refused (a private window): the length is simply not kept
  }
  send(`invite ${name} ${length}`);
}

/** The match length the player chose last, in this browser. */
function restoreLength() {
  let kept = null;
  try {
    kept = localStorage.getItem(LENGTH_KEY);
  } catch {
    kept = null;
  }
  if (kept && Number(kept) >= 1 && Number(kept) <= 99) $("invite-length").value = kept;
  try {
    $("sound").checked = localStorage.getItem(SOUND_KEY) === "on";
  } catch {
    $("sound").checked = false;
  }
}

function drawGames() {
  const list = $("games");
  list.replaceChildren();
  if (!state.games.length) addLine(list, "No matches in progress.", "empty");
  for (const g of state.games) {
    const item = document.createElement("li");
    const what = g.length === null ? "unlimited" : `${g.length} point`;
    const text = document.createElement("span");
    text.textContent = `${g.a} – ${g.b} (${what} match, ${g.score})`;
    item.append(text, " ", button("Watch", () => send(`watch ${g.a}`), { watch: g.a }));
    list.appendChild(item);
  }
}

function drawSaved() {
  const list = $("saved");
  list.replaceChildren();
  for (const g of state.saved) {
    const item = document.createElement("li");
    const what = g.length === null ? "unlimited" : `${g.length} point`;
    const text = document.createElement("span");
    text.textContent = `${g.opponent} (${what} match, ${g.score})`;
    item.append(text);
    if (g.online) {
      item.append(" ", button("Resume", () => send(`invite ${g.opponent}`), { resume: g.opponent }));
    }
    list.appendChild(item);
  }
  show("saved-box", state.saved.length > 0);
}

// -- the table --------------------------------------------------------------------------

function newBoard(view) {
  const old = state.view;
  state.view = view;
  const mine = view.player === "You";
  const seated = chouetteSeat(view, mine) !== null; // a chouette's seat: no match, no watching
  notePlace({ playing: mine && !seated ? view.opponent : null, watching: mine || seated ? null : view.player });
  if (view.player === "You") state.matchOver = false;
  if (view.turn !== 0) state.nextGame = false;
  if (old && (old.turn !== view.turn || old.playerDice[0] !== view.playerDice[0])) {
    state.resignOffer = false;
  }
  state.done = [];
  state.selected = null;
  state.plays = [];
  if (playing() && myTurn() && view.playerDice[0] && view.canMove > 0) {
    const { mine, theirs } = sides(view);
    state.plays = legalPlays(mine, theirs, view.playerDice);
  }
  show("table", true);
  drawTable();
  // The player's turn (to roll, move or answer a double) has come: a sound if they want
  // one, and the focus, when it is nowhere, on what to do (Roll, or a checker).
  const mineNow = mine && !state.matchOver && myTurn() && view.turn !== 0;
  const newTurn = !old || old.turn !== view.turn || (!old.wasDoubled && view.wasDoubled);
  if (mineNow && newTurn) {
    turnSound();
    const focus = document.activeElement;
    if (!focus || focus === document.body || !focus.isConnected) {
      const next = !$("roll").hidden ? $("roll") : document.querySelector("#board rect.hit.source");
      if (next) next.focus({ preventScroll: true });
    }
  }
}

/** A short chime for the player's turn, when the Sound switch is on (off by default,
 * kept in the browser). The audio starts at the switch's click: browsers let a page
 * make sounds only after the player did something on it. */
function turnSound() {
  const toggle = $("sound");
  if (!toggle.checked) return;
  try {
    state.audio = state.audio || new AudioContext();
    const audio = state.audio;
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 660;
    gain.gain.setValueAtTime(0.2, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.25);
  } catch {
    return; // no audio here: nothing to play
  }
  toggle.dataset.played = String(Number(toggle.dataset.played || 0) + 1);
}

function soundSwitched() {
  const on = $("sound").checked;
  if (on && !state.audio) {
    try {
      state.audio = new AudioContext();
    } catch {
      state.audio = null;
    }
  }
  try {
    localStorage.setItem(SOUND_KEY, on ? "on" : "off");
  } catch {
    // storage refused (a private window): the choice is simply not kept
  }
}

function playing() {
  return state.view !== null && state.view.player === "You";
}

function myTurn() {
  return state.view.turn === state.view.colour;
}

/** The position after the moves made on the page so far (not yet sent). */
function shownView() {
  const view = state.view;
  if (!state.done.length) return view;
  const copy = { ...view, board: view.board.slice() };
  const abs = (p) => (view.colour === 1 ? p : 25 - p);
  for (const [from, to, hit] of state.done) {
    if (from === 25) copy.playerBar -= 1;
    else copy.board[abs(from)] -= view.colour;
    if (to === 0) copy.playerHome += 1;
    else {
      if (hit) {
        copy.board[abs(to)] += view.colour;
        copy.opponentBar += 1;
      }
      copy.board[abs(to)] += view.colour;
    }
  }
  return copy;
}

/** A point, the bar or the tray clicked (``how``: the pointer's type, "touch" for a
 * tap), or played with the keyboard or a die. */
function onPoint(p, how) {
  const next = nextMoves(state.plays, state.done);
  if (how === "touch" && state.selected === null) {
    // A tap on a checker with one legal destination plays it.
    const ways = next.filter((m) => m[0] === p);
    if (ways.length === 1) return played(ways[0]);
  }
  const now = Date.now();
  const again = state.selected === p && now - state.pickedAt < DOUBLE_CLICK_MS;
  state.pickedAt = now;
  if (again) {
    // A double click on a checker plays it: to its one destination, or the furthest.
    const ways = next.filter((m) => m[0] === p);
    const far = ways.reduce((best, m) => (best === null || m[0] - m[1] > best[0] - best[1] ? m : best), null);
    if (far) return played(far);
  }
  if (state.selected !== null) {
    const move = next.find((m) => m[0] === state.selected && m[1] === p);
    if (move) return played(move);
  }
  state.selected = next.some((m) => m[0] === p) ? p : null;
  drawTable();
  keepFocus();
}

/** One move made on the page (not yet sent). */
function played(move) {
  state.done.push(move);
  state.selected = null;
  drawTable();
  keepFocus();
}

/** A checker picked up by dragging: its destinations are marked. */
function dragStarted(from) {
  state.selected = from;
  drawTable();
}

/** A dragged checker let go on ``to`` (0: off the board; null: the drag was cancelled):
 * played when that is one of its moves, else put back. */
function dropped(from, to) {
  const move = nextMoves(state.plays, state.done).find((m) => m[0] === from && m[1] === to);
  if (move) return played(move);
  state.selected = null;
  drawTable();
}

/** After a point was played with the keyboard the board is drawn anew: the focus goes
 * on to what comes next (a destination, another checker, or Send move). */
function keepFocus() {
  if (!document.activeElement || document.activeElement === document.body || !document.activeElement.isConnected) {
    const next = document.querySelector(state.selected !== null ? "#board rect.hit.target" : "#board rect.hit.source");
    if (next) next.focus();
    else if (!$("send").hidden) $("send").focus();
  }
}

/**
 * The moves of the game so far, beside the board (FIBS notation, absolute points, as
 * `oldmoves` shows them): each player's roll, then their play or "can't move". Read
 * from the lines the player or watcher gets; the player's own plays as the page sent
 * them (FIBS does not echo them).
 */
function gameRecord(line) {
  const game = state.game;
  let m;
  if (/^Starting a new game with /.test(line)) {
    state.lastMove = null;
    state.game = { moves: [], rolls: new Map() };
    return drawMoveList();
  }
  if ((m = /^You roll (\d) and (\d)\.$/.exec(line))) game.rolls.set(state.me, `${m[1]}-${m[2]}`);
  else if ((m = /^(\S+) rolls (\d) and (\d)\.$/.exec(line))) game.rolls.set(m[1], `${m[2]}-${m[3]}`);
  else if ((m = /^(\S+) rolled (\d), (\S+) rolled (\d)$/.exec(line))) {
    // The opening roll: the higher die's owner plays both dice, written starter's die
    // first (as the record and the .mat file have it), whoever reads the line.
    const first = m[1] === "You" ? state.me : m[1];
    const [high, low] = [Number(m[2]), Number(m[4])].sort((x, y) => y - x);
    for (const name of [first, m[3]]) game.rolls.set(name, `${high}-${low}`);
  } else if (line === "You can't move.") addMove(state.me, "can't move");
  else if ((m = /^(\S+) can't move\.$/.exec(line))) addMove(m[1], "can't move");
  else if ((m = /^(\S+) moves ((?:\S+-\S+ )+)\.$/.exec(line))) addMove(m[1], m[2].trim());
}

function addMove(name, text) {
  const roll = state.game.rolls.get(name);
  state.game.moves.push(`${name}${roll ? ` ${roll}` : ""}: ${text}`);
  state.game.rolls.delete(name);
  drawMoveList();
}

function drawMoveList() {
  $("move-list").replaceChildren(
    ...state.game.moves.map((text) => {
      const item = document.createElement("li");
      item.textContent = text;
      return item;
    }),
  );
}

/** Beside the board (a desktop) the move list scrolls within the board's height: its
 * newest play kept in view whenever the list or its box changes size (a play added, the
 * window resized, a line wrapping). Under the board (a phone) nothing scrolls there. */
function followMoveList() {
  const side = $("table-side");
  const toEnd = () => {
    side.scrollTop = side.scrollHeight;
  };
  const watcher = new ResizeObserver(toEnd);
  watcher.observe(side);
  watcher.observe($("move-list"));
}

/** Who plays which colour, beside the board: the side shown at the bottom first. */
function drawPlayers(bottom, top, you) {
  const line = $("players");
  line.replaceChildren();
  for (const [name, side, note] of [[bottom, "mine", you ? " (you)" : ""], [top, "theirs", ""]]) {
    const item = document.createElement("span");
    item.className = "player";
    item.dataset.side = side;
    const swatch = document.createElement("span");
    swatch.className = `swatch ${side}`;
    swatch.setAttribute("aria-hidden", "true");
    item.append(swatch, `${name}${note}`);
    line.append(item);
  }
}

function drawTable() {
  const view = state.view;
  if (!view) return;
  const shown = shownView();
  const me = view.player === "You" ? state.me : view.player;
  const length = view.length === null ? "unlimited match" : `${view.length}-point match`;
  $("match-title").textContent = `${me} – ${view.opponent} · ${length}${isCrawford(view) ? " · Crawford game" : ""}`;
  $("score").textContent = `Score: ${me} ${view.playerScore}, ${view.opponent} ${view.opponentScore}`;
  const [pa, pb] = pipCounts(shown);
  $("pips").textContent = `Pips: ${me} ${pa}, ${view.opponent} ${pb} · Borne off: ${shown.playerHome} – ${shown.opponentHome} · Cube: ${view.cube}`;
  const next = nextMoves(state.plays, state.done);
  const moving = playing() && state.plays.length > 0;
  const sources = new Set(moving ? next.map((m) => m[0]) : []);
  const targets = new Set(
    moving && state.selected !== null ? next.filter((m) => m[0] === state.selected).map((m) => m[1]) : [],
  );
  const trail = state.done.length ? [] : state.replayTrail || state.trail;
  state.replayTrail = null;
  const doubling = playing() && state.doubling && !state.matchOver;
  const offered = doubling ? "opponent" : view.wasDoubled ? "player" : null;
  drawBoard($("board"), shown, {
    sources, targets, selected: state.selected, onPoint, trail, offered, done: state.done,
    onDragStart: dragStarted, onDrop: dropped,
  });
  drawPlayers(me, view.opponent, playing());
  $("position-text").textContent = positionText(shown, me, view.opponent);
  $("board").dataset.position = view.board.join(":"); // the position the server sent
  const mine = playing() && !state.matchOver;
  const turn = mine && myTurn();
  const waitingRoll = turn && !view.playerDice[0] && !view.wasDoubled && !doubling && view.turn !== 0;
  show("roll", waitingRoll);
  show("double", waitingRoll && view.playerMayDouble && !isCrawford(view));
  const doubled = mine && view.wasDoubled;
  const answer = doubled || (mine && state.resignOffer);
  show("accept", answer);
  show("reject", answer);
  show("undo", moving && state.done.length > 0);
  show("send", moving && complete(state.plays, state.done));
  show("join-next", mine && state.nextGame);
  show("resign-box", mine && view.turn !== 0);
  show("leave", mine);
  const seat = chouetteSeat(view, playing()); // at a chouette: its heading and prompt
  show("unwatch", !playing() && !seat);
  show("replay-last", state.lastMove !== null && state.done.length === 0);
  show("analyse", state.matchOver && state.finished !== null);
  show("replay", state.matchOver && state.finished !== null);
  if (state.finished !== null) $("replay").href = `#match/${state.finished}`;
  let prompt = "";
  if (state.matchOver) prompt = $("prompt").textContent;
  else if (!playing()) prompt = `Watching ${view.player}`;
  else if (doubled) prompt = `${view.opponent} doubles: accept or reject?`;
  else if (doubling) prompt = `You doubled: waiting for ${view.opponent} to accept or reject.`;
  else if (state.resignOffer) prompt = `${view.opponent} wants to resign: accept or reject?`;
  else if (waitingRoll) prompt = "Your turn: roll or double.";
  else if (moving) prompt = complete(state.plays, state.done) ? "Send your move, or undo." : "Your move: click a checker, then where it goes.";
  else if (turn && view.playerDice[0]) prompt = "No move possible.";
  else if (view.turn !== 0) prompt = `${view.opponent} to play.`;
  if (seat) {
    $("match-title").textContent = seat.title;
    if (seat.prompt && !state.matchOver) prompt = seat.prompt;
  }
  $("prompt").textContent = prompt;
}

/** "Show the last move again": the board as it was before the last play, for a moment,
 * then as it is, the play drawn as a trail again (the player's own play too). */
function replayLastMove() {
  const last = state.lastMove;
  if (!last || !state.view) return;
  clearTimeout(state.replayTimer);
  const board = $("board");
  drawBoard(board, last.before, {
    sources: new Set(), targets: new Set(), selected: null, onPoint: () => {}, trail: [], done: [],
  });
  board.dataset.position = last.before.board.join(":");
  state.replayTimer = setTimeout(() => {
    state.replayTrail = last.trail;
    drawTable();
  }, REPLAY_PAUSE_MS);
}

/** Leave asks once more (it sits beside Resign): a second click within a few seconds
 * leaves the match, which is saved; otherwise the button goes back. */
function leaveClicked() {
  const button = $("leave");
  if (button.dataset.confirm === "1") {
    delete button.dataset.confirm;
    button.textContent = "Leave";
    send("leave");
    return;
  }
  button.dataset.confirm = "1";
  button.textContent = "Leave the match? Click again (it is saved)";
  setTimeout(() => {
    delete button.dataset.confirm;
    button.textContent = "Leave";
  }, LEAVE_CONFIRM_MS);
}

// -- finished matches and players' pages (D377) -----------------------------------------

/** A link to a player's page (rating, experience, recent matches). */
function playerLink(name) {
  const a = document.createElement("a");
  a.href = `#player/${name}`;
  a.textContent = name;
  return a;
}

/** The address names a finished match (`#match/42`) or a player (`#player/alice`): ask
 * the server for it and show its page; otherwise neither page is shown. */
function route() {
  const match = PAGES.route.match.exec(location.hash);
  const player = PAGES.route.player.exec(location.hash);
  const allowed = state.me !== null && !state.visitor;
  show("record", Boolean(match) && allowed);
  show("profile", Boolean(player) && allowed);
  if (!allowed) return;
  if (match) {
    state.asked = { kind: "match", key: match[1] };
    state.record = null;
    $("record-title").textContent = `Finished match ${match[1]}`;
    $("record-facts").textContent = "Asking the server for the match…";
    show("record-body", false);
    send(`match! ${match[1]}`);
    $("record-title").scrollIntoView?.({ block: "start" });
  } else if (player) {
    state.asked = { kind: "profile", key: player[1] };
    $("profile-title").textContent = player[1];
    $("profile-facts").textContent = "Asking the server…";
    $("profile-matches").querySelector("tbody").replaceChildren();
    show("profile-none", false);
    send(`profile! ${player[1]}`);
    $("profile-title").scrollIntoView?.({ block: "start" });
  } else {
    state.asked = null;
  }
}

/** Back to where the player was: the page's own address without a match or player. */
function closePage() {
  history.pushState(null, "", location.pathname + location.search);
  route();
}

function pageRefused(line) {
  const asked = state.asked;
  let m;
  if (asked && asked.kind === "match" && (m = PAGES.noMatch.exec(line)) && m[1] === asked.key) {
    $("record-facts").textContent = line.slice(3);
    return true;
  }
  if (asked && asked.kind === "profile" && (m = PAGES.noUser.exec(line)) && m[1] === asked.key) {
    $("profile-facts").textContent = line;
    return true;
  }
  return false;
}

function utc(seconds) {
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
}

/** The JSON of a `match!` or `profile!` answer when it is the page asked for, else null. */
function askedFor(kind, text, keyOf) {
  let found;
  try {
    found = JSON.parse(text);
  } catch {
    return null;
  }
  const asked = state.asked;
  return asked && asked.kind === kind && asked.key === String(keyOf(found)) ? found : null;
}

function profileArrived(text) {
  const found = askedFor("profile", text, (f) => f.name);
  if (!found) return;
  $("profile-title").textContent = `${found.name}${found.bot ? " (bot)" : ""}`;
  const where = found.playing ? `online, playing ${found.playing}` : found.online ? "online" : "not online";
  $("profile-facts").textContent =
    `Rating ${found.rating.toFixed(2)} · experience ${found.experience} · ${where}`;
  const body = $("profile-matches").querySelector("tbody");
  body.replaceChildren(
    ...found.matches.map((m) => {
      const tr = document.createElement("tr");
      tr.dataset.match = String(m.match);
      const link = document.createElement("a");
      link.href = `#match/${m.match}`;
      link.textContent = `Match ${m.match}`;
      const length = m.length === null ? "unlimited" : String(m.length);
      const score = `${m.score[0]}-${m.score[1]} ${m.won ? "won" : "lost"}`;
      for (const value of [link, playerLink(m.opponent), length, score, utc(m.ended)]) {
        const td = document.createElement("td");
        td.append(value); // a text or a link: never markup
        tr.appendChild(td);
      }
      return tr;
    }),
  );
  show("profile-matches", found.matches.length > 0);
  show("profile-none", found.matches.length === 0);
}

function recordArrived(text) {
  const found = askedFor("match", text, (f) => f.match);
  if (!found) return;
  if (state.record && state.record.mat) URL.revokeObjectURL(state.record.mat);
  const mat = URL.createObjectURL(new Blob([found.mat], { type: "text/plain" }));
  state.record = { found, game: 0, step: -1, mat };
  const [a, b] = found.players;
  $("record-title").textContent = `Match ${found.match}: ${a} – ${b}, ${lengthText(found.length)}`;
  const winner = found.winner ? `${found.winner} won` : "no winner";
  $("record-facts").replaceChildren(
    playerLink(a), ` ${found.score[0]} – ${found.score[1]} `, playerLink(b),
    ` · ${winner} · ${found.games.length} game${found.games.length === 1 ? "" : "s"} · ended ${utc(found.ended)} UTC`,
  );
  const link = $("record-mat");
  link.href = mat;
  link.download = `match-${found.match}.mat`;
  $("record-game").replaceChildren(
    ...found.games.map((game, i) => {
      const option = document.createElement("option");
      option.value = String(i);
      option.textContent = `Game ${i + 1} (${a} ${game.score[0]}, ${b} ${game.score[1]})`;
      return option;
    }),
  );
  show("record-body", true);
  showGame(0);
}

function showGame(index) {
  const record = state.record;
  record.game = index;
  $("record-game").value = String(index);
  const steps = record.found.games[index].steps;
  $("record-moves").replaceChildren(
    ...steps.map((step, i) => {
      const item = document.createElement("li");
      const go = document.createElement("button");
      go.type = "button";
      go.textContent = stepText(record.found, step);
      go.dataset.step = String(i);
      go.addEventListener("click", () => showStep(i));
      item.append(go);
      return item;
    }),
  );
  showStep(-1);
}

/** The board after step `index` of the game shown (-1: its starting position). */
function showStep(index) {
  const record = state.record;
  const game = record.found.games[record.game];
  record.step = Math.max(-1, Math.min(index, game.steps.length - 1));
  const { view, trail, offered } = stepView(record.found, record.game, record.step);
  drawBoard($("record-board"), view, {
    sources: new Set(), targets: new Set(), selected: null, onPoint: () => {}, trail, offered, done: [],
  });
  const at = record.step >= 0 ? game.steps[record.step] : null;
  const said = at
    ? `Step ${record.step + 1} of ${game.steps.length}: ${stepText(record.found, at)}`
    : `Game ${record.game + 1}: the starting position (${game.steps.length} steps)`;
  $("record-step").textContent = said;
  $("record-board").setAttribute("aria-label", `The board: ${said}. ${positionText(view, view.player, view.opponent)}`);
  $("record-board").dataset.position = view.board.join(":");
  for (const button of $("record-moves").querySelectorAll("button")) {
    if (Number(button.dataset.step) === record.step) {
      button.setAttribute("aria-current", "step");
      button.scrollIntoView?.({ block: "nearest" });
    } else button.removeAttribute("aria-current");
  }
  $("record-first").disabled = record.step < 0;
  $("record-prev").disabled = record.step < 0;
  $("record-next").disabled = record.step >= game.steps.length - 1;
  $("record-last").disabled = record.step >= game.steps.length - 1;
}

function wireRecord() {
  window.addEventListener("hashchange", route);
  $("record-close").addEventListener("click", closePage);
  $("profile-close").addEventListener("click", closePage);
  $("record-analyse").addEventListener("click", () => {
    if (!state.record) return;
    askAnalysis(state.record.found.match); // D326, below the page
    $("analysis").scrollIntoView?.({ block: "start" });
  });
  $("record-game").addEventListener("change", () => showGame(Number($("record-game").value)));
  const step = (to) => () => {
    if (state.record) showStep(to(state.record));
  };
  $("record-first").addEventListener("click", step(() => -1));
  $("record-prev").addEventListener("click", step((r) => r.step - 1));
  $("record-next").addEventListener("click", step((r) => r.step + 1));
  $("record-last").addEventListener("click", step((r) => r.found.games[r.game].steps.length - 1));
}

// -- wiring -----------------------------------------------------------------------------

function wire() {
  $("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("login-name").value.trim();
    const password = $("login-password").value;
    $("login-password").value = "";
    if (name && password) open({ kind: "login", name, password });
  });
  $("register-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("register-name").value.trim();
    const password = $("register-password").value;
    const again = $("register-again").value;
    $("register-password").value = "";
    $("register-again").value = "";
    if (password !== again) {
      accountNote("The two passwords differ.");
      return;
    }
    if (!NAME.test(name)) {
      // Checked here too: a name with a space would reach the server as two words.
      accountNote(`Not registered: ${NAME_INVALID}`);
      return;
    }
    if (name && password) open({ kind: "register", name, password });
  });
  $("visit").addEventListener("click", () => open({ kind: "visit" }));
  $("show-account").addEventListener("click", () => {
    show("account-box", false);
    show("login-form", true);
    show("register-form", true);
  });
  $("logout").addEventListener("click", () => {
    state.leaving = true;
    if (state.token) send(`token! end ${state.token}`);
    forgetToken();
    if (!state.ws) {
      // Reconnecting: nothing to say goodbye to; stop trying.
      sessionEnded();
      state.leaving = false;
      $("status").textContent = "Logged out.";
      return;
    }
    send("bye");
  });
  $("ready").addEventListener("change", () => send("toggle ready"));
  $("roll").addEventListener("click", () => send("roll"));
  $("double").addEventListener("click", () => send("double"));
  $("accept").addEventListener("click", () => {
    state.resignOffer = false;
    send("accept");
  });
  $("reject").addEventListener("click", () => {
    state.resignOffer = false;
    send("reject");
    drawTable();
  });
  $("undo").addEventListener("click", () => {
    state.done = [];
    state.selected = null;
    drawTable();
  });
  $("send").addEventListener("click", () => {
    if (!complete(state.plays, state.done)) return;
    const text = moveText(state.done, state.view.colour);
    send(`move ${text}`);
    addMove(state.me, text);
    // The player's own play (FIBS does not echo it) is the last move now.
    state.lastMove = { before: state.view, trail: state.done.map(([from, to]) => [from, to]) };
    state.plays = [];
    state.trail = [];
    drawTable();
  });
  $("join-next").addEventListener("click", () => {
    state.nextGame = false;
    send("join");
    drawTable();
  });
  $("resign").addEventListener("click", () => send(`resign ${$("resign-kind").value}`));
  $("leave").addEventListener("click", leaveClicked);
  $("replay-last").addEventListener("click", replayLastMove);
  $("sound").addEventListener("change", soundSwitched);
  followMoveList();
  $("analyse").addEventListener("click", () => askAnalysis(state.finished));
  $("analysis-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const id = Number($("analysis-id").value.trim());
    if (Number.isInteger(id) && id > 0) askAnalysis(id);
  });
  wireRecord();
  wireChouette(send, () => state.me, drawTable);
  $("analysis-close").addEventListener("click", () => {
    if (state.analysis) clearTimeout(state.analysis.timer);
    state.analysis = null;
    show("analysis", false);
  });
  $("unwatch").addEventListener("click", () => {
    send("unwatch");
    notePlace({ playing: null, watching: null });
    state.view = null;
    state.lastMove = null;
    show("table", false);
  });
  $("command-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const line = $("command").value;
    $("command").value = "";
    if (!line.trim()) return;
    message(`> ${line}`, "typed own"); // what was typed, as a terminal shows it
    send(`${TEXT.word} ${line}`); // answered as telnet answers (D376)
  });
  $("chat-kind").addEventListener("change", () => show("chat-to", $("chat-kind").value === "tell"));
  $("chat-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const kind = $("chat-kind").value;
    const text = $("chat-text").value;
    $("chat-text").value = "";
    if (!text.trim()) return;
    if (kind === "tell") send(`tell ${$("chat-to").value.trim()} ${text}`);
    else send(`${kind} ${text}`);
  });
  $("status").textContent = "Log in or register to play, or watch as a visitor.";
  window.addEventListener("online", () => {
    if (state.back && !state.ws) tryAgain(); // the network is back: no need to wait
  });
  // A reload of this tab, or the browser's own restore of it: back in, with the token.
  const kept = keptSession();
  if (kept) {
    state.token = kept.token;
    state.place = kept.place || state.place;
    state.back = { attempt: 0, timer: null };
    $("status").textContent = "Reconnecting…";
    show("account", false); // coming back, not logging in
    show("logout", true);
    tryAgain();
  }
}

wire();
restoreLength();
