"""Dice anyone can verify: committed before the first roll, proven after the last (issue 30).

The construction, ``fibs-dice/1`` (:data:`RULE`; docs/dice.md, with a worked example):

* The server draws a secret **server seed** ``S``: 32 bytes from the operating system's
  CSPRNG (:func:`draw_server_seed`). Before the match it publishes the **commitment**
  ``C = SHA-256(S)`` (FIPS 180-4), as 64 lowercase hex digits; ``S`` stays secret until the
  match is over, then it is revealed and anyone can check ``SHA-256(S) == C``.
* Each player has a **player seed**, ``P0`` for player 0 (the inviter) and ``P1``: 1 to 64
  characters of printable ASCII without spaces (``!`` to ``~``, :func:`is_player_seed`),
  chosen by the player or drawn for them. A chouette game has one seed for each player
  at the table when it starts, ``P0 P1 ... Pk`` in the order its dice line names them;
  a match always two.
* Roll ``n`` (0, 1, 2, ... every roll of the match in order: each opening roll, ties
  included, and every roll of a turn) takes its two dice from the bytes of
  ``HMAC-SHA-256(key=S, message="fibs-dice/1 P0 P1 n b")`` (a chouette game's:
  ``"fibs-dice/1 P0 P1 ... Pk n b"``): HMAC (RFC 2104, FIPS 198-1) with SHA-256, the
  message ASCII with single spaces, ``n`` and the block number ``b`` in decimal, ``b = 0``
  first. Read in order, a byte below 252 is a die, ``byte % 6 + 1``; a
  byte of 252 to 255 is skipped (rejection sampling: 252 = 6 x 42, so each face is
  exactly 42 of the 252 byte values kept, exactly 1/6 likely, as
  :class:`backgammon.dice.SystemDice` does). The first two dice are the roll's, in order.
  Should the 32 bytes of block 0 hold fewer than two (a chance of about 2^-180), block
  ``b = 1`` follows, and so on.
* The match draws one die at a time (:class:`backgammon.dice.DiceRoller`) and always
  two per roll: an opening roll's die of player 0, then of player 1; a turn's first
  die, then its second (the order of the events' dice). So die ``k`` of the match is die
  ``k % 2`` of roll ``k // 2``. A chouette game draws the same way, its first draw of
  the seats one die per player included (:meth:`DiceSeeds.dice` lists them in order).

:class:`FairDice` is the roller; its state (the seeds and the number of dice drawn) is
part of a match's JSON snapshot (:mod:`backgammon.snapshot`), so a saved match goes on
with the same dice after a restart. :func:`verify` recomputes every roll of a match
record; ``python -m backgammon.fair_dice verify FILE`` does it from the command line
(:mod:`backgammon.fair_dice.__main__`).

Why this is safe: the commitment binds the server to ``S`` before the first roll, and
HMAC-SHA-256 keyed with a secret is a pseudorandom function, so the players' seeds and
the commitment tell nothing about any roll until ``S`` is revealed. A player who sets
their own seed after seeing the commitment knows the server could not have chosen ``S``
to suit that seed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from backgammon.dice import SystemDice
from backgammon.errors import SnapshotError
from backgammon.events import DiceRolled, Event, OpeningRoll, event_from_json

RULE = "fibs-dice/1"
"""The construction's name: the first word of every HMAC message, and the ``rule`` of a
saved state (a later construction gets a new name)."""
SERVER_SEED_BYTES = 32
"""The server seed's length: 256 bits, the output size of SHA-256 (FIPS 180-4 §1) and so
the most that HMAC-SHA-256's security can use (RFC 2104 §3: keys shorter than the hash's
output are discouraged; longer ones add nothing)."""
SNAPSHOT_KEY = "dice_proof"
"""The key of a roller's state in a match's JSON snapshot (:meth:`FairDice.to_json`)."""
PLAYER_SEED_LENGTH = 64
"""The longest player seed, in characters."""
DEFAULT_SEED_BYTES = 8
"""Random bytes in a player seed the server draws for a player who set none (16 hex
digits)."""
_SHA256_BLOCK = 64
"""SHA-256's block size in bytes (FIPS 180-4 §1), HMAC's ``B`` (RFC 2104 §2)."""
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))
"""Each byte XOR HMAC's ``ipad`` and ``opad`` (RFC 2104 §2), as tables for ``bytes.translate``."""
_ACCEPT = SystemDice.ACCEPT
"""Bytes below this are dice (the rejection sampling of :class:`SystemDice`)."""
_FIRST_SEED_CHAR, _LAST_SEED_CHAR = "!", "~"
"""A player seed's characters: printable ASCII without the space (0x21 to 0x7E), so the
message's single spaces separate its fields unambiguously."""


def is_player_seed(text: str) -> bool:
    """Whether ``text`` may be a player seed: 1 to 64 characters from ``!`` to ``~``."""
    return 0 < len(text) <= PLAYER_SEED_LENGTH and all(
        _FIRST_SEED_CHAR <= c <= _LAST_SEED_CHAR for c in text
    )


def draw_server_seed(source: Callable[[int], bytes] = os.urandom) -> bytes:
    """A new server seed: :data:`SERVER_SEED_BYTES` bytes of ``source`` (the CSPRNG)."""
    seed = source(SERVER_SEED_BYTES)
    if len(seed) != SERVER_SEED_BYTES:
        raise ValueError(f"the random source gave {len(seed)} bytes, not {SERVER_SEED_BYTES}")
    return seed


def draw_player_seed(source: Callable[[int], bytes] = os.urandom) -> str:
    """A player seed for a player who chose none: :data:`DEFAULT_SEED_BYTES` bytes of
    ``source`` in hex."""
    return source(DEFAULT_SEED_BYTES).hex()


def commitment_of(server_seed: bytes) -> str:
    """The commitment to ``server_seed``: its SHA-256 (FIPS 180-4) in lowercase hex."""
    return hashlib.sha256(server_seed).hexdigest()


@dataclass(frozen=True, slots=True)
class DiceSeeds:
    """Everything a match's dice are derived from: the server seed and the players' seeds.

    :raises ValueError: a server seed that is not 32 bytes, or a player seed
        :func:`is_player_seed` refuses.
    """

    server_seed: bytes = field(repr=False)
    """The secret until the match is over: kept out of the value's ``repr``, so that no
    log or traceback shows it."""
    player_seeds: tuple[str, ...]
    """Player 0's seed (a match's inviter's), then player 1's, and so on: two for a
    match, one for each player at a chouette game."""
    _keyed: tuple[Any, Any] = field(init=False, repr=False, compare=False)
    """HMAC-SHA-256's inner and outer SHA-256, keyed with the server seed and fed nothing
    else yet: each block copies them (the key's padding hashed once, RFC 2104 §4's
    precomputation)."""
    _prefix: str = field(init=False, repr=False, compare=False)
    """``fibs-dice/1 P0 P1 ... Pk ``: what every message starts with."""

    def __post_init__(self) -> None:
        if len(self.server_seed) != SERVER_SEED_BYTES:
            raise ValueError(f"a server seed is {SERVER_SEED_BYTES} bytes")
        seeds = self.player_seeds
        if len(seeds) < 2 or not all(is_player_seed(seed) for seed in seeds):
            raise ValueError(f"not two or more player seeds: {seeds!r}")
        object.__setattr__(self, "_keyed", _keyed_sha256(self.server_seed))
        object.__setattr__(self, "_prefix", f"{RULE} {' '.join(seeds)} ")

    @property
    def commitment(self) -> str:
        """What the players are told before the first roll: SHA-256 of the server seed."""
        return commitment_of(self.server_seed)

    def message(self, roll: int, block: int = 0) -> bytes:
        """The HMAC message of block ``block`` of roll ``roll``: ``fibs-dice/1 P0 P1 n b``
        (a chouette game's with every player's seed, ``fibs-dice/1 P0 P1 ... Pk n b``)."""
        return f"{self._prefix}{roll} {block}".encode("ascii")

    def block(self, roll: int, block: int = 0) -> bytes:
        """``HMAC-SHA-256(key=server seed, message(roll, block))``: 32 bytes (RFC 2104 §2)."""
        # Copies of the keyed hashes, not hmac.digest(): the one-shot releases the GIL
        # for OpenSSL's call whatever the message's size, and the event loop then waits
        # for the database thread to let it go again (up to the 5 ms switch interval),
        # at every roll (docs/performance.md §21). The two hashes directly, not an
        # hmac.HMAC's copy: four Python calls fewer at every roll.
        inner, outer = self._keyed
        inner = inner.copy()
        inner.update(f"{self._prefix}{roll} {block}".encode("ascii"))
        outer = outer.copy()
        outer.update(inner.digest())
        digest: bytes = outer.digest()
        return digest

    def roll(self, number: int) -> tuple[int, int]:
        """The two dice of roll ``number`` (from 0), in order."""
        # dice_from written out for block 0, which holds two dice but with a chance
        # of about 2^-180: this runs at every roll.
        first = 0
        for byte in self.block(number):
            if byte < _ACCEPT:
                if first:
                    return first, byte % 6 + 1
                first = byte % 6 + 1
        return dice_from(self.block(number, b) for b in count())

    def dice(self, count: int) -> list[int]:
        """The first ``count`` dice drawn one at a time, as :class:`FairDice` draws them
        (die ``k`` is die ``k % 2`` of roll ``k // 2``): what a chouette game's dice are
        checked against, its first draw's single dice included."""
        return [self.roll(k // 2)[k % 2] for k in range(count)]


def _keyed_sha256(key: bytes) -> tuple[Any, Any]:
    """HMAC-SHA-256's inner and outer hashes for ``key``, fed its padded key alone
    (RFC 2104 §2: ``H(K XOR opad, H(K XOR ipad, text))``; a key of 32 bytes is shorter
    than SHA-256's 64-byte block, so it is padded with zeros, not hashed)."""
    padded = key.ljust(_SHA256_BLOCK, b"\0")
    inner = hashlib.sha256(padded.translate(_IPAD))
    outer = hashlib.sha256(padded.translate(_OPAD))
    return inner, outer


def dice_from(blocks: Iterable[bytes]) -> tuple[int, int]:
    """The first two dice the bytes of ``blocks`` give: a byte below 252 is ``byte % 6 +
    1``, a higher one is skipped (the rejection sampling of :class:`SystemDice`).

    :raises ValueError: the blocks ended before two dice.
    """
    dice: list[int] = []
    for block in blocks:
        for byte in block:
            if byte < SystemDice.ACCEPT:
                dice.append(byte % 6 + 1)
                if len(dice) == 2:
                    return dice[0], dice[1]
    raise ValueError("the blocks ended before two dice")


class FairDice:
    """The dice roller of a match whose dice anyone can verify (the module docstring).

    ``drawn`` is how many dice the match has drawn already: a restored match goes on
    from there with the same dice it would have had.
    """

    def __init__(self, seeds: DiceSeeds, drawn: int = 0) -> None:
        if drawn < 0:
            raise ValueError(f"dice drawn must be 0 or more, not {drawn}")
        self.seeds = seeds
        self.drawn = drawn
        """Dice drawn so far: the next die is die ``drawn`` of the match."""
        self._roll: tuple[int, tuple[int, int]] | None = None
        """The last roll computed, with its number (each roll's HMAC is computed once)."""
        self._head_text: str | None = None
        """:meth:`to_json_text` without the dice drawn, once made."""

    def die(self) -> int:
        """Die number :attr:`drawn` of the match: die ``drawn % 2`` of roll ``drawn // 2``."""
        drawn = self.drawn
        number = drawn >> 1
        last = self._roll
        if last is None or last[0] != number:
            last = self._roll = (number, self.seeds.roll(number))
        self.drawn = drawn + 1
        return last[1][drawn & 1]

    def to_json(self) -> dict[str, Any]:
        """The roller's state as JSON data (the ``dice_proof`` of a match snapshot); the
        server seed in it is the secret until the match is over."""
        return {
            "rule": RULE,
            "server_seed": self.seeds.server_seed.hex(),
            "seeds": list(self.seeds.player_seeds),
            "drawn": self.drawn,
        }

    def to_json_text(self) -> str:
        """:meth:`to_json` as compact JSON text (``separators=(",", ":")``): everything
        but the dice drawn encoded once, since a running match is saved after every
        action (docs/performance.md §21)."""
        head = self._head_text
        if head is None:
            fixed = self.to_json()
            del fixed["drawn"]
            head = self._head_text = json.dumps(fixed, separators=(",", ":"))[:-1]
        return f'{head},"drawn":{self.drawn}}}'

    @classmethod
    def from_json(cls, data: Any) -> FairDice:
        """The roller :meth:`to_json` describes.

        :raises SnapshotError: not such data, or of another rule.
        """
        try:
            if data["rule"] != RULE:
                raise SnapshotError(f"unknown dice rule {data['rule']!r}")
            player_seeds = tuple(str(seed) for seed in data["seeds"])
            drawn = data["drawn"]
            if not isinstance(drawn, int) or isinstance(drawn, bool):
                raise SnapshotError(f"not a number of dice: {drawn!r}")
            seeds = DiceSeeds(bytes.fromhex(data["server_seed"]), player_seeds)
            return cls(seeds, drawn)
        except SnapshotError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotError(f"not a dice state: {exc}") from exc


# -- verifying a match record ---------------------------------------------------------------


PLAYER_NAMES = ("player 0", "player 1")
"""The players' names when a record does not give them (the rules core's snapshot alone)."""


def record_proof(data: Any) -> tuple[tuple[str, str], FairDice | None]:
    """The players' names and the dice proof (None: the dice were not committed) of a
    match record's JSON data: the server's record (``players``, ``match``: the ``moves``
    of a finished match, docs/records.md) or the rules core's snapshot alone.

    :raises SnapshotError: the data is no such record.
    """
    try:
        names = PLAYER_NAMES
        if "match" in data:
            first, second = data["players"]
            names = (str(first), str(second))
        state = _match_data(data).get(SNAPSHOT_KEY)
        dice = None if state is None else FairDice.from_json(state)
        if dice is not None and len(dice.seeds.player_seeds) != len(names):
            raise SnapshotError("a match's dice have two player seeds")
        return names, dice
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SnapshotError(f"not a match record: {exc!r}") from exc


def record_games(data: Any) -> list[list[Event]]:
    """Every game's events of a match record's JSON data (as :func:`record_proof` reads
    it): the finished games', then the current game's.

    :raises SnapshotError: the data is no such record.
    """
    try:
        match = _match_data(data)
        games = [[event_from_json(e) for e in game] for game in match["history"]]
        games.append([event_from_json(e) for e in match["record"]])
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SnapshotError(f"not a match record: {exc!r}") from exc
    return games


def _match_data(data: Any) -> dict[str, Any]:
    """The rules core's snapshot in a record: its ``match``, or the data itself."""
    match: dict[str, Any] = data.get("match", data)
    return match


def recorded_rolls(games: Iterable[Iterable[Event]]) -> list[tuple[int, int]]:
    """Every roll a match's events show, in the order the match drew them: each opening
    roll (player 0's die, then player 1's; ties included) and each turn's roll."""
    found: list[tuple[int, int]] = []
    for game in games:
        for event in game:
            if isinstance(event, OpeningRoll):
                found.append(event.dice)
            elif isinstance(event, DiceRolled):
                found.append((event.roll.d1, event.roll.d2))
    return found


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Roll ``number`` of the record is not the seeds' roll ``number``."""

    number: int
    recorded: tuple[int, int]
    derived: tuple[int, int]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What :func:`verify` found: how many rolls the record has, how many dice the proof
    says were drawn, and the first roll that differs."""

    rolls: int
    """Rolls in the record."""
    drawn: int
    """Dice the match's proof says were drawn (two a roll)."""
    mismatch: Mismatch | None

    @property
    def verified(self) -> bool:
        """Every roll of the record is the seeds' roll, and it holds every die drawn."""
        return self.mismatch is None and 2 * self.rolls == self.drawn


def verify(dice: FairDice, games: Iterable[Iterable[Event]]) -> Verdict:
    """Recompute every roll of a match from its proof ``dice`` (the seeds and the dice
    drawn) and compare each with the rolls of its events (``games``: the finished games'
    events, then the current game's)."""
    found = recorded_rolls(games)
    for number, recorded in enumerate(found):
        derived = dice.seeds.roll(number)
        if recorded != derived:
            return Verdict(len(found), dice.drawn, Mismatch(number, recorded, derived))
    return Verdict(len(found), dice.drawn, None)
