// The chouette panel (issue 31 item 6, docs/chouette.md "In the browser"): the line, the
// box, the captain and every member's cube beside the board, read from `show chouette`'s
// line form (D308), asked anew after each chouette event; invitations with a Join
// button; open, invite, start, leave; each member's own Double/Accept/Reject; team talk.
// The box and the acting captain roll and move with the page's own board (their boards
// say `You`). Everything from the server goes in with textContent, never as markup.

const $ = (id) => document.getElementById(id);

/** Lines after which the table has changed: `show chouette` is asked again. */
const EVENT = /chouette|^The box|^\S+ doubles the box|^\S+ (?:accepts|rejects|beavers) the box's double|plays for the team now\.$|^\S+ wins \d+ points? from the box\.$|^\*\* You open a/;
const INVITED = /^(\S+) invites you to a chouette table\.$/;
const HINT = /^Type 'chouette join (\S+)' to join it\.$/;
const TEAM = /^(\S+) tells the team: (.*)$/;
const OWN_TEAM = /^\*\* You tell the team: (.*)$/;
const NOT_AT = /^\*\* You are not at a chouette table/;
const GAMES_ROW = /\(chouette of \d+, game \d+\)$/; // `show games`: news for the lobby only

const chouette = { send: null, me: () => null, asked: false, reading: null, table: null, timer: null };

/** Wire the panel: `send` sends a line; `me()` is the logged-in name. */
export function wireChouette(send, me) {
  chouette.send = send;
  chouette.me = me;
  $("chouette-open").addEventListener("click", () => send("chouette open"));
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
    chouette.reading = { host, game, phase, box, partner, line: line_, turn, cubes: [], totals: [] };
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

/** A board arrived: at a chouette, the cubes may have changed too. */
export function chouetteBoard() {
  if (chouette.table) ask();
}

/** The page logged out: nothing of the table is kept. */
export function chouetteReset() {
  chouette.table = null;
  chouette.reading = null;
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

function draw() {
  const t = chouette.table;
  const me = chouette.me();
  $("chouette-panel").dataset.at = t ? "1" : "";
  for (const id of ["chouette-start", "chouette-leave", "chouette-seats", "chouette-cubes", "chouette-member", "chouette-team-form"]) {
    $(id).hidden = !t;
  }
  $("chouette-open").hidden = Boolean(t);
  if (!t) {
    $("chouette-title").textContent = "Chouette";
    return;
  }
  $("chouette-title").textContent = `Chouette of ${t.host}, game ${t.game} (${t.phase})`;
  const captain = t.line[0] || "-";
  const partner = t.partner === "-" ? "" : `, partner ${t.partner}`;
  const rest = t.line.slice(1);
  $("chouette-seats").textContent =
    `The box: ${t.box || "-"}${partner} · the captain: ${captain}` +
    (rest.length ? ` · then ${rest.join(", ")}` : "") +
    (t.turn && t.turn !== "-" ? ` · ${t.turn === "box" ? "the box" : "the team"} on roll` : "");
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
  const member = t.cubes.some((c) => c.member === me && c.result === "-");
  $("chouette-member").hidden = !member;
  $("chouette-team-form").hidden = !member;
}
