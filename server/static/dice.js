// Dice anyone can verify (fibs-dice/1, docs/dice.md), checked in the browser with Web
// Crypto: the revealed server seed against the commitment told before the first roll,
// and every roll of a match record recomputed from the seeds, as
// `python -m backgammon.fair_dice verify` does (backgammon/fair_dice/__init__.py).

export const RULE = "fibs-dice/1";
const ACCEPT = 252; // a byte of 252..255 is skipped: 252 = 6 x 42 (rejection sampling)

/** Web Crypto, where the browser gives it (a secure context: https, or localhost). */
function subtle() {
  return globalThis.crypto && globalThis.crypto.subtle ? globalThis.crypto.subtle : null;
}

export function hexToBytes(hex) {
  if (!/^(?:[0-9a-f]{2})+$/.test(hex)) throw new Error(`not hexadecimal: ${hex}`);
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

export function bytesToHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 of the server seed (hex), as 64 lowercase hex digits: the commitment. */
export async function commitmentOf(serverSeedHex) {
  const digest = await subtle().digest("SHA-256", hexToBytes(serverSeedHex));
  return bytesToHex(new Uint8Array(digest));
}

/** The two dice of roll `number`: HMAC-SHA-256(key = server seed, "fibs-dice/1 P0 P1 n b")
 * (every player's seed in order: a match's two, a chouette game's all), each byte below
 * 252 a die (byte % 6 + 1), blocks b = 0, 1, ... until there are two. */
export async function rollOf(key, seeds, number) {
  const dice = [];
  for (let block = 0; ; block += 1) {
    const message = new TextEncoder().encode(`${RULE} ${seeds.join(" ")} ${number} ${block}`);
    const bytes = new Uint8Array(await subtle().sign("HMAC", key, message));
    for (const byte of bytes) {
      if (byte < ACCEPT) {
        dice.push((byte % 6) + 1);
        if (dice.length === 2) return dice;
      }
    }
  }
}

/** Every roll a match record's events show, in the order the match drew them: each
 * opening roll (ties included) and each turn's roll. */
export function recordedRolls(record) {
  const match = record.match ?? record;
  const rolls = [];
  for (const game of [...match.history, match.record]) {
    for (const event of game) {
      if (event.type === "OpeningRoll") rolls.push([event.dice[0], event.dice[1]]);
      else if (event.type === "DiceRolled") rolls.push([event.roll[0], event.roll[1]]);
    }
  }
  return rolls;
}

/**
 * Check a match record (the JSON of `export <id> json`): its server seed against
 * `commitment` (the one told at the start; optional) and each roll against the seeds.
 * Returns {verified: true, rolls, commitment}, or {verified: false, why}, or
 * {verified: null, why} when this browser cannot check (no Web Crypto here).
 */
export async function verifyRecord(record, commitment = null) {
  if (!subtle()) return { verified: null, why: "this page has no Web Crypto here (it needs https)" };
  const proof = (record.match ?? record).dice_proof;
  if (!proof) return { verified: false, why: "the dice of this match were not committed" };
  if (proof.rule !== RULE) return { verified: false, why: `an unknown dice rule: ${proof.rule}` };
  const made = await commitmentOf(proof.server_seed);
  if (commitment !== null && made !== commitment) {
    return { verified: false, why: `the seed's SHA-256 is ${made}, not the commitment ${commitment}` };
  }
  const key = await subtle().importKey(
    "raw", hexToBytes(proof.server_seed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"],
  );
  const rolls = recordedRolls(record);
  for (let n = 0; n < rolls.length; n += 1) {
    const derived = await rollOf(key, proof.seeds, n);
    if (derived[0] !== rolls[n][0] || derived[1] !== rolls[n][1]) {
      return { verified: false, why: `roll ${n} was ${rolls[n].join("-")}, the seeds give ${derived.join("-")}` };
    }
  }
  if (2 * rolls.length !== proof.drawn) {
    return { verified: false, why: `the record has ${rolls.length} rolls, the proof ${proof.drawn} dice` };
  }
  return { verified: true, rolls: rolls.length, commitment: made };
}
