// The chouette panel (issue 31 item 6, docs/chouette.md "In the browser"): the line, the
// box, the captain and every member's cube beside the board, read from `show chouette`'s
// line form (D308), asked anew after each chouette event; invitations with a Join
// button; open, invite, start, leave; team talk. The buttons for cube decisions (a
// member's own, a proxy's for another member, the box's answers by name, beaver,
// raccoon), delegation and return are shown only as the server's `chouette-may`,
// `chouette-away` and `chouette-proxy` lines (D405) allow: no rule is guessed here.
// The box and the acting captain roll and move with the page's own board (their boards
// say `You`); `chouetteSeat` gives the board's heading and prompt for everyone seated
// (a member sees the captain's board as their own side, with their own cube).
// Everything from the server goes in with textContent, never as markup.

const $ = (id) => document.getElementById(id);

/** Lines after which the table has changed: `show chouette` is asked again. */
const EVENT = /chouette|^The box|^\S+ doubles the box|^\S+ (?:accepts|rejects|beavers) the box's double|plays for the team now\.$|^\S+ wins \d+ points? from the box\.$|^\*\* You open a/;
const INVITED = /^(\S+) invites you to a chouette table\.$/;
const HINT = /^Type 'chouette join (\S+)' to join it\.$/;
const TEAM = /^(\S+) tells the team: (.*)$/;
const OWN_TEAM = /^\*\* You tell the team: (.*)$/;
const NOT_AT = /^\*\* You are not at a chouette table/;
const SAVED = /^\*\* You have a saved chouette table\./; // D361: `chouette return` takes it back
const GAMES_ROW = /\(chouette of \d+, game \d+\)$/; // `show games`: news for the lobby only

const chouette = {
  send: null, me: () => null, redraw: () => {}, asked: false, reading: null, table: null, timer: null, saved: false, seatKey: "",
};

/** Wire the panel: `send` sends a line; `me()` is the logged-in name; `redraw()` draws
 * the board again (its heading and prompt come from `chouetteSeat`). */
export function wireChouette(send, me, redraw) {
  chouette.send = send;
  chouette.me = me;
  chouette.redraw = redraw;
  $("chouette-open").addEventListener("click", () => {
    const settings = $("chouette-settings").value.trim().split(/\s+/).filter(Boolean);
    send(["chouette open", ...settings].join(" "));
  });
  $("chouette-invite-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("chouette-invite-name").value.trim();
    if (name) send(`chouette invite ${name}`);
  });
  $("chouette-start").addEventListener("click", () => send("chouette start"));
  $("chouette-leave").addEventListener("click", () => send("chouette leave"));
  $("chouette-double").addEventListener("click", () => send("double"));
  $("chouette-accept").addEventListener("click", () => send("accept"));
  $("chouette-reject").addEventListener("click", () => send("reject"));
  $("chouette-beaver").addEventListener("click", () => send("beaver"));
  $("chouette-raccoon").addEventListener("click", () => send("raccoon"));
  $("chouette-return").addEventListener("click", () => {
    chouette.saved = false;
    send("chouette return");
  });
  $("chouette-box-answer").addEventListener("submit", (event) => {
    event.preventDefault();
    const boxes = [...$("chouette-box-doubles").querySelectorAll("input[type=checkbox]")];
    const taken = boxes.filter((b) => b.checked).map((b) => b.value);
    send(taken.length ? `accept ${taken.join(" ")}` : "reject"); // by name: the others rejected
  });
  $("chouette-delegate-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const proxy = $("chouette-proxy").value;
    if (proxy) send(`chouette delegate ${proxy}`);
  });
  $("chouette-undelegate").addEventListener("click", () => send("chouette delegate"));
  $("chouette-team-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("chouette-team-text").value;
    $("chouette-team-text").value = "";
    if (text.trim()) send(`chouette team ${text}`);
  });
}

function ask() {
  if (chouette.timer) return;
  chouette.timer = setTimeout(() => {
    chouette.timer = null;
    chouette.asked = true;
    chouette.send("show chouette");
  }, 150);
}

/** A line from the server: true when it was the panel's alone (not for the messages). */
export function chouetteLine(line) {
  let m;
  if (line.startsWith("chouette:")) {
    const [, host, game, phase, box, partner, members, turn] = line.split(":");
    const line_ = members === "-" ? [] : members.split(",");
    chouette.reading = {
      host, game, phase, box, partner, line: line_, turn, cubes: [], totals: [], may: new Map(), away: new Set(), proxies: new Map(),
    };
    return true;
  }
  if (chouette.reading && line.startsWith("chouette-cube:")) {
    const [, member, value, owner, turned, result] = line.split(":");
    chouette.reading.cubes.push({ member, value, owner, turned: turned === "1", result });
    return true;
  }
  if (chouette.reading && line.startsWith("chouette-total:")) {
    const [, name, total, seat] = line.split(":");
    chouette.reading.totals.push({ name, total: Number(total), seat });
    return true;
  }
  if (chouette.reading && line.startsWith("chouette-may:")) {
    const [, name, action, members] = line.split(":");
    if (!chouette.reading.may.has(name)) chouette.reading.may.set(name, new Map());
    chouette.reading.may.get(name).set(action, members === "-" ? [] : members.split(","));
    return true;
  }
  if (chouette.reading && line.startsWith("chouette-away:")) {
    chouette.reading.away.add(line.split(":")[1]);
    return true;
  }
  if (chouette.reading && line.startsWith("chouette-proxy:")) {
    const [, member, proxy] = line.split(":");
    chouette.reading.proxies.set(member, proxy);
    return true;
  }
  if (line === "chouette-end" && chouette.reading) {
    chouette.table = chouette.reading;
    chouette.reading = null;
    chouette.asked = false;
    draw();
    return true;
  }
  if (chouette.asked && NOT_AT.test(line)) {
    chouette.asked = false;
    chouette.table = null;
    draw();
    return true;
  }
  if (SAVED.test(line)) {
    chouette.saved = true;
    draw();
    return false;
  }
  if ((m = INVITED.exec(line))) {
    invitation(m[1], line);
    return false;
  }
  if (HINT.test(line)) return true; // the invitation's Join button says it
  if ((m = TEAM.exec(line))) return talk(`${m[1]}: ${m[2]}`);
  if ((m = OWN_TEAM.exec(line))) return talk(`You: ${m[1]}`);
  if (line === `${chouette.me()} leaves the chouette.`) {
    chouette.table = null;
    draw();
    return false;
  }
  if (EVENT.test(line) && !GAMES_ROW.test(line)) ask();
  return false;
}

/** Ask `show chouette` now (after logging in: a table the player is away from). */
export function chouetteAsk() {
  ask();
}

/** A board arrived: at a chouette, the cubes may have changed too. */
export function chouetteBoard() {
  if (chouette.table) ask();
}

/** The page logged out: nothing of the table is kept. */
export function chouetteReset() {
  chouette.table = null;
  chouette.reading = null;
  chouette.saved = false;
  $("chouette-invitations").replaceChildren();
  $("chouette-talk").replaceChildren();
  draw();
}

function talk(text) {
  const item = document.createElement("li");
  item.textContent = text;
  $("chouette-talk").appendChild(item);
  return true;
}

function invitation(from, line) {
  const list = $("chouette-invitations");
  for (const old of list.querySelectorAll(`button[data-chouette-join="${CSS.escape(from)}"]`)) old.parentElement.remove();
  const item = document.createElement("li");
  const join = document.createElement("button");
  join.type = "button";
  join.textContent = "Join";
  join.dataset.chouetteJoin = from;
  join.addEventListener("click", () => {
    chouette.send(`chouette join ${from}`);
    item.remove();
  });
  item.append(line, " ", join);
  list.appendChild(item);
}

const OWNER = { centre: "in the centre", box: "the box owns it", member: "the member owns it" };

/** What `name` may do now (D405): action -> the members whose cubes it concerns. */
function mayOf(t, name) {
  return t.may.get(name) || new Map();
}

function button(text, line) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.addEventListener("click", () => chouette.send(line));
  return b;
}

function draw() {
  const t = chouette.table;
  const me = chouette.me();
  $("chouette-panel").dataset.at = t ? "1" : "";
  for (const id of ["chouette-start", "chouette-leave", "chouette-seats", "chouette-cubes", "chouette-member", "chouette-team-form"]) {
    $(id).hidden = !t;
  }
  $("chouette-open").hidden = Boolean(t);
  $("chouette-settings-label").hidden = Boolean(t);
  $("chouette-return").hidden = !(t ? t.away.has(me) : chouette.saved);
  if (!t) {
    $("chouette-title").textContent = "Chouette";
    for (const id of ["chouette-proxied", "chouette-box-answer", "chouette-raccoon", "chouette-delegate-form"]) $(id).hidden = true;
    redrawSeat(null, me);
    return;
  }
  $("chouette-title").textContent = `Chouette of ${t.host}, game ${t.game} (${t.phase})`;
  const captain = t.line[0] || "-";
  const partner = t.partner === "-" ? "" : `, partner ${t.partner}`;
  const rest = t.line.slice(1);
  const away = [...t.away];
  $("chouette-seats").textContent =
    `The box: ${t.box || "-"}${partner} · the captain: ${captain}` +
    (rest.length ? ` · then ${rest.join(", ")}` : "") +
    (t.turn && t.turn !== "-" ? ` · ${t.turn === "box" ? "the box" : "the team"} on roll` : "") +
    (away.length ? ` · away: ${away.join(", ")}` : "");
  const total = new Map(t.totals.map((x) => [x.name, x.total]));
  const cubes = $("chouette-cubes").querySelector("tbody");
  cubes.replaceChildren(
    ...t.cubes.map((c) => {
      const tr = document.createElement("tr");
      tr.dataset.member = c.member;
      const who = c.member === captain ? `${c.member} (captain)` : c.member;
      const result = c.result === "-" ? "in the game" : `settled ${c.result}`;
      const cells = [who, c.value, OWNER[c.owner] || c.owner, result, String(total.get(c.member) ?? 0)];
      for (const value of cells) {
        const td = document.createElement("td");
        td.textContent = value;
        tr.appendChild(td);
      }
      return tr;
    }),
  );
  const may = mayOf(t, me);
  const mine = (action) => (may.get(action) || []).includes(me);
  $("chouette-double").hidden = !mine("double");
  $("chouette-accept").hidden = !mine("take");
  $("chouette-reject").hidden = !mine("drop");
  $("chouette-beaver").hidden = !mine("beaver");
  $("chouette-member").hidden = !["double", "take", "drop", "beaver"].some(mine);
  // A proxy's decisions for another member's cube (`double <name>`, `accept <name>`).
  const proxied = [];
  for (const m of (may.get("double") || []).filter((x) => x !== me)) {
    proxied.push(button(`Double ${m}'s cube`, `double ${m}`));
  }
  for (const m of (may.get("take") || []).filter((x) => x !== me)) {
    proxied.push(button(`Accept the box's double for ${m}`, `accept ${m}`));
    proxied.push(button(`Reject the box's double for ${m}`, `reject ${m}`));
  }
  $("chouette-proxied").replaceChildren(...proxied);
  $("chouette-proxied").hidden = proxied.length === 0;
  // The box answers the team's doubles, all at once, each by name.
  const doubled = may.get("answer_doubles") || [];
  const shown = [...$("chouette-box-doubles").querySelectorAll("input")].map((b) => b.value);
  if (shown.join(",") !== doubled.join(",")) {
    $("chouette-box-doubles").replaceChildren(
      ...doubled.map((m) => {
        const label = document.createElement("label");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.value = m;
        box.checked = true;
        label.append(box, ` Accept ${m}'s double `);
        return label;
      }),
    );
  }
  $("chouette-box-answer").hidden = doubled.length === 0;
  $("chouette-raccoon").hidden = !may.has("raccoon");
  // Delegation: a member of the line may let another member decide for their cube.
  const others = t.line.filter((x) => x !== me);
  const member = t.line.includes(me);
  $("chouette-delegate-form").hidden = !member || others.length === 0;
  const proxy = t.proxies.get(me);
  const picked = $("chouette-proxy").value;
  $("chouette-proxy").replaceChildren(
    ...others.map((m) => {
      const option = document.createElement("option");
      option.value = m;
      option.textContent = m;
      option.selected = m === picked;
      return option;
    }),
  );
  const forOthers = [...t.proxies].filter(([, p]) => p === me).map(([m]) => m);
  $("chouette-delegation").textContent =
    (proxy ? `${proxy} decides for your cube too.` : "") +
    (forOthers.length ? ` You decide for the cube of ${forOthers.join(", ")} too.` : "");
  $("chouette-undelegate").hidden = !proxy;
  const inGame = t.cubes.some((c) => c.member === me && c.result === "-");
  $("chouette-team-form").hidden = !inGame;
  redrawSeat(t, me);
}

/** Draw the board again when what `chouetteSeat` reads changed (not at every answer to
 * `show chouette`: a board drawn anew loses a keyboard's focus on a checker). */
function redrawSeat(t, me) {
  const key = t
    ? JSON.stringify([t.game, t.phase, t.turn, t.box, t.partner, t.line, t.cubes.find((c) => c.member === me),
      [...mayOf(t, me)], t.away.has(me)])
    : "";
  if (key === chouette.seatKey) return;
  chouette.seatKey = key;
  chouette.redraw();
}

/** The board's heading and prompt at a chouette for the player at it (null: not seated
 * at a table in a game, so the page's own words hold, as for a watcher). `playing`: the
 * board says `You` (the box, or the acting captain). A member's board is the captain's
 * side with the member's own cube (D311): the heading says so, and the prompt what the
 * member may do with their cube (D405's lines). */
export function chouetteSeat(view, playing) {
  const t = chouette.table;
  const me = chouette.me();
  if (!t || t.phase === "waiting" || !view) return null;
  const game = `Chouette game ${t.game}`;
  const captain = t.line[0];
  if (me === t.box) return { title: `${game}: you are the box, against the team of ${t.line.join(", ")}`, prompt: null };
  if (me === t.partner) {
    return { title: `${game}: you are the partner of the box, ${t.box}`, prompt: `${t.box} plays for the box.` };
  }
  const cube = t.cubes.find((c) => c.member === me);
  if (!cube) return null;
  const team = `the team of ${t.line.join(", ")} against the box, ${t.box}`;
  if (playing) return { title: `${game}: you play for ${team}`, prompt: null };
  const title = `${game}: ${team}; ${view.player === captain ? "the captain" : "playing for the team"}: ${view.player}`;
  const may = mayOf(t, me);
  const has = (action) => (may.get(action) || []).includes(me);
  let prompt;
  if (t.away.has(me)) prompt = "You are away from the table: return to take your seat again.";
  else if (cube.result !== "-") prompt = `Your cube is settled (${cube.result}); ${view.player} plays on for the team.`;
  else if (has("take")) prompt = `The box doubles your cube: accept, reject${has("beaver") ? " or beaver" : ""}.`;
  else if (has("double")) prompt = `Your team's turn: double your cube (${cube.value}) before ${view.player} rolls, or let the roll go ahead.`;
  else if (t.phase === "box_answer") prompt = `The box, ${t.box}, answers the team's doubles.`;
  else if (t.phase === "team_answer") prompt = "The box doubled: the members answer.";
  else {
    const who = t.turn === "box" ? `The box, ${t.box}, to play.` : `${view.player} plays for the team.`;
    prompt = `${who} Your cube: ${cube.value}, ${OWNER[cube.owner] || cube.owner}.`;
  }
  return { title, prompt };
}
