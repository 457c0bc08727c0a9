"""Dice anyone can verify, at the table: committed before the first roll, revealed after
the last (issue 30; the construction: :mod:`backgammon.fair_dice`, docs/dice.md).

* **Invitation** (a new match): the server seed is drawn from the CSPRNG and its
  commitment told to both players (D271), so a player who sets ``set dice_seed`` after
  seeing it knows the server could not have chosen its seed to suit theirs.
* **Start and resume**: the match's roller is a :class:`~backgammon.fair_dice.FairDice`
  of that seed and the two players' seeds (drawn for a player who set none); the
  players and the watchers are told the commitment and the seeds (D272). A resumed
  match goes on with the seeds and the count of dice in its saved state (the rules
  core's snapshot keeps them), so a restart, even a SIGKILL, changes no die.
* **End**: a won or resigned match reveals the server seed to its players and watchers
  once its record is stored (D273); a saved match that a new match of the same pair
  replaces reveals it too. ``show dice <id>`` shows a finished match's whole proof
  (D274).

The server seed is never logged and never sent before the end: it lives in the roller,
in the saved match (the database) and in the finished match's record, where it may be
read.

A chouette table (D352-D354) draws one server seed for each game, a game ahead: its
commitment is told when the table opens, to each player who joins and, as a game
starts, for the game after it, so a seed set after it is one the server could not
suit. A game's dice are derived from that seed and the seeds of every player at the
table when it starts; its end reveals the seed. The table's saved state keeps the game's
dice and the next seed (:func:`chouette_saved`), so a table restored after its players
were all away, a restart or a SIGKILL rolls on with them (:func:`chouette_restore`) and
a returning player is told its dice line again; only a table that is over (its last
player left) reveals a game cut short.

When the host's ``dice`` is set (tests that need exact rolls), matches roll those dice
and carry no proof: nothing here sends a line for them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from backgammon.chouette_events import ChouetteEvent, ChouetteGameFinished
from backgammon.dice import DiceRoller, SystemDice
from backgammon.errors import SnapshotError
from backgammon.fair_dice import (
    SERVER_SEED_BYTES,
    DiceSeeds,
    FairDice,
    commitment_of,
    draw_player_seed,
    draw_server_seed,
    record_proof,
)
from db.records import SavedMatch
from protocol import replies
from server.tables.chouette_announce import Told
from server.tables.chouette_table import LiveChouette
from server.tables.host import TableHost
from server.tables.matches import LiveMatch, watchers_at, whole_snapshot
from server.world.presence import Peer


def invitation_seed(host: TableHost) -> bytes | None:
    """The server seed of a new match, drawn when it is offered (None: the host's dice
    are a test's, without proof)."""
    return None if host.dice is not None else draw_server_seed(host.entropy)


def offered(server_seed: bytes | None) -> str | None:
    """What the inviter and the invitee are told of the offered match's dice (D271);
    None for a resume or a test's dice."""
    return None if server_seed is None else replies.dice_offered(commitment_of(server_seed))


def new_roller(
    host: TableHost, server_seed: bytes | None, players: tuple[Peer, Peer]
) -> DiceRoller:
    """The dice of a new match of ``players`` (the inviter first): the host's test dice,
    or fair dice of the invitation's ``server_seed`` and each player's seed."""
    if host.dice is not None:
        return host.dice()
    seeds = tuple(p.dice_seed or draw_player_seed(host.entropy) for p in players)
    seed = server_seed if server_seed is not None else draw_server_seed(host.entropy)
    return FairDice(DiceSeeds(seed, seeds))


def resumed_roller(host: TableHost) -> DiceRoller:
    """The dice of a saved match whose state holds none (saved before dice were
    committed, or with a test's dice): the host's test dice, or the CSPRNG's. A saved
    match with a dice state goes on with that one (:func:`backgammon.snapshot.match_from_json`)."""
    return host.dice() if host.dice is not None else SystemDice()


def committed_seeds(live: LiveMatch) -> DiceSeeds | None:
    """The seeds of ``live``'s dice, when they are committed."""
    roller = live.match.roller
    return roller.seeds if isinstance(roller, FairDice) else None


def tell_commitment(host: TableHost, live: LiveMatch) -> None:
    """At the start or resume: the commitment and the seeds to the players and the
    watchers (D272)."""
    seeds = committed_seeds(live)
    if seeds is None:
        return
    (first, second), (first_seed, second_seed) = live.names, seeds.player_seeds
    line = replies.dice_committed(seeds.commitment, first, first_seed, second, second_seed)
    _tell(host, live, line)


def reveal(host: TableHost, live: LiveMatch) -> None:
    """The match is over and its record stored: the server seed to the players and the
    watchers, with the record's id for ``show dice`` (D273)."""
    seeds = committed_seeds(live)
    if seeds is None or live.record_id is None:
        return
    _tell(host, live, replies.dice_revealed(seeds.server_seed.hex(), live.record_id))


def reveal_replaced(host: TableHost, players: tuple[Peer, Peer], saved: SavedMatch) -> None:
    """A new match of ``players`` replaces their ``saved`` one, which so ends unfinished:
    its server seed and commitment to both (D273). Nothing for a saved match without a
    proof, or one that cannot be read."""
    seeds = _saved_seeds(saved)
    if seeds is None:
        return
    server_seed, commitment = seeds.server_seed.hex(), seeds.commitment
    for me, other in (players, players[::-1]):
        host.presence.send(me, replies.saved_dice_revealed(other.name, server_seed, commitment))


def _saved_seeds(saved: SavedMatch) -> DiceSeeds | None:
    """The seeds in a saved match's state, if it has them and can be read."""
    try:
        _, dice = record_proof(whole_snapshot(saved))
    except SnapshotError:
        return None
    return None if dice is None else dice.seeds


def _tell(host: TableHost, live: LiveMatch, line: str) -> None:
    """``line`` to ``live``'s players who are online and its watchers."""
    presence = host.presence
    for peer in (presence.get(name) for name in live.names):
        if peer is not None:
            presence.send(peer, line)
    for watcher in watchers_at(presence, live.names, live.watchers):
        presence.send(watcher, line)


# -- the chouette (D352-D354) ---------------------------------------------------------------


def chouette_next(table: LiveChouette) -> str | None:
    """The commitment to ``table``'s next game's seed (D352); None for a test's dice."""
    seed = table.next_seed
    return None if seed is None else replies.chouette_dice_next(commitment_of(seed))


def start_chouette_game(
    host: TableHost, table: LiveChouette, start: Callable[[], Sequence[ChouetteEvent]]
) -> list[Told]:
    """``start`` (the core's ``start_game``) with the next game's dice: the committed
    seed and the seeds of the players at the table. Before its events: the reveal of a
    draw of the seats whose game never began, this game's dice (D353) and the next
    game's commitment (D352). A refused start changes nothing (its error goes on)."""
    seed, names = table.next_seed, table.present()
    if seed is None or len(names) < 2:  # a test's dice; or one player, whom the core refuses
        return list(start())
    seeds = tuple(_seed_of(host, name) for name in names)
    dice = FairDice(DiceSeeds(seed, seeds))
    core = table.core
    previous, core.roller = core.roller, dice
    try:
        events = start()
    except BaseException:
        core.roller = previous
        raise
    told: list[Told] = [] if table.dice is None else [chouette_reveal(table)]
    table.dice, table.seeded = dice, names
    table.next_seed = draw_server_seed(host.entropy)
    committed = _committed(dice, names)
    return [*told, committed, replies.chouette_dice_next(commitment_of(table.next_seed)), *events]


def chouette_game_dice(table: LiveChouette) -> str | None:
    """D353's line of ``table``'s game under way (told as it starts, and again to a
    player who returns to it); None when no committed dice are out."""
    dice = table.dice
    return None if dice is None else _committed(dice, table.seeded)


def _committed(dice: FairDice, names: Sequence[str]) -> str:
    """D353: the commitment of ``dice`` and each of ``names`` with their seed."""
    pairs = replies.seed_pairs(names, dice.seeds.player_seeds)
    return replies.chouette_dice_committed(dice.seeds.commitment, pairs)


def _seed_of(host: TableHost, name: str) -> str:
    """The seed ``name`` set (``set dice_seed``), or one drawn for them."""
    peer = host.presence.get(name)
    seed = None if peer is None else peer.dice_seed
    return seed or draw_player_seed(host.entropy)


def chouette_revealed(table: LiveChouette, events: Sequence[Told]) -> list[Told]:
    """``events`` with the reveal of the game's seed (D354) right after its end."""
    told: list[Told] = []
    for event in events:
        told.append(event)
        if isinstance(event, ChouetteGameFinished) and table.dice is not None:
            told.append(chouette_reveal(table))
    return told


def chouette_reveal(table: LiveChouette) -> str:
    """The reveal of ``table``'s dice (D354), which are then over."""
    dice = table.dice
    assert dice is not None
    table.dice, table.seeded = None, ()
    return replies.chouette_dice_revealed(dice.seeds.server_seed.hex(), dice.drawn)


def chouette_saved(table: LiveChouette) -> dict[str, Any]:
    """What a saved table keeps of its dice (D362 with D352-D354), beside the core's JSON:
    the game's roller (its seeds and the dice drawn, as a saved match keeps its own),
    whose seeds they are, and the next game's seed, whose commitment was told. The seeds
    are secrets until revealed: like a saved match's, they are in the database alone."""
    dice, seed = table.dice, table.next_seed
    return {
        "chouette_dice": {
            "game": None if dice is None else dice.to_json(),
            "seeded": list(table.seeded),
            "next_server_seed": None if seed is None else seed.hex(),
        }
    }


def chouette_restore(host: TableHost, table: LiveChouette, data: dict[str, Any]) -> None:
    """Give a restored ``table`` the dice :func:`chouette_saved` kept: its game goes on
    with the same dice and verifies as one (the core rolls the saved roller from the
    die it stopped at), and the next game is the one committed. A table saved without a
    next seed (a test's dice, or none yet) draws one now, as a new table does.

    :raises SnapshotError: the saved dice are not such data.
    """
    saved = data.get("chouette_dice") or {}
    try:
        game, seed = saved.get("game"), saved.get("next_server_seed")
        if game is not None:
            dice = FairDice.from_json(game)
            seeded = tuple(str(name) for name in saved["seeded"])
            if len(seeded) != len(dice.seeds.player_seeds):
                raise SnapshotError("a chouette game's dice have a seed for each player")
            table.dice, table.seeded = dice, seeded
            table.core.roller = dice
        next_seed = invitation_seed(host) if seed is None else bytes.fromhex(seed)
        if next_seed is not None and len(next_seed) != SERVER_SEED_BYTES:
            raise SnapshotError("a server seed is 32 bytes")
        table.next_seed = next_seed
    except SnapshotError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SnapshotError(f"not a chouette table's dice: {exc!r}") from exc
