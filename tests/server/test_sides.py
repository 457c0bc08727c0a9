"""A table's sides (server/tables/sides.py) and announcing by side.

A side has members and the one who acts for it; the lines of an action go to every
member of a side, a notice to the one who acts. At a match each side is one player, so
what a match's players hear is unchanged (the socket tests); here a side of two shows
that the announcing never assumes one player a side.
"""

from __future__ import annotations

import dataclasses

import pytest

from backgammon.notation import format_move
from server.tables.announce import announce
from server.tables.sides import OPPOSITE, Side, Sides
from server.tables.updates import Notice, TableUpdate

from .desk import Desk


def test_a_match_seats_each_player_alone_on_a_side() -> None:
    sides = Sides.of_match(("alice", "bob"))
    assert sides.acting_names == ("alice", "bob") and sides.everyone == ("alice", "bob")
    assert (sides.side_of("alice"), sides.side_of("bob"), sides.side_of("carol")) == (0, 1, None)
    assert sides.members(1) == ("bob",) and sides.acting(0) == "alice"
    assert (OPPOSITE[0], OPPOSITE[1]) == (1, 0)


def test_a_side_of_several_members_acts_through_one() -> None:
    crew = Side(("bob", "carol", "dave"), "carol")
    sides = Sides(Side.alone("alice"), crew)
    assert sides.acting_names == ("alice", "carol")
    assert sides.side_of("dave") == 1 and sides.everyone == ("alice", "bob", "carol", "dave")


@pytest.mark.parametrize(
    ("members", "acting"), [((), "bob"), (("bob", "bob"), "bob"), (("bob", "carol"), "dave")]
)
def test_a_side_refuses_what_cannot_sit(members: tuple[str, ...], acting: str) -> None:
    with pytest.raises(ValueError):
        Side(members, acting)


def test_nobody_sits_on_both_sides() -> None:
    with pytest.raises(ValueError, match="both sides"):
        Sides(Side(("alice", "bob"), "alice"), Side(("bob", "carol"), "carol"))


async def test_every_member_of_a_side_hears_its_lines_and_a_notice_goes_to_who_acts(
    desk: Desk,
) -> None:
    """An action of alice's match announced with a second member (carol, at a table
    herself) beside alice's opponent: carol hears exactly what the opponent hears, the
    notice only the one who acts."""
    for name in ("alice", "bob", "carol", "dave"):
        await desk.login(name)
    await desk.run("alice", "invite bob 1")
    await desk.run("bob", "join alice")
    await desk.run("carol", "invite dave 1")
    await desk.run("dave", "join carol")
    await desk.settle()
    updates: list[TableUpdate] = []
    edge = desk.app.local_tables.edge
    deliver = edge.deliver

    def recorded(update: TableUpdate) -> None:
        updates.append(update)
        deliver(update)

    edge.deliver = recorded  # type: ignore[method-assign]
    live = desk.app.local_tables.matches["alice"]
    match = live.match
    assert match.to_act is not None
    mover, other = live.names[match.to_act], live.names[OPPOSITE[match.to_act]]
    colour = match.colour(match.to_act)
    play = match.legal_plays()[0]
    await desk.run(mover, "move " + " ".join(format_move(m, colour) for m in play.moves))
    (update,) = updates

    side = live.sides.side_of(other)
    assert side is not None
    crew = Side((other, "carol"), other)
    sides = Sides(crew, Side.alone(mover)) if side == 0 else Sides(Side.alone(mover), crew)
    told = (*update.told, Notice(side, "a notice for the one who acts"))
    outbox, _ = announce(desk.app.presence, dataclasses.replace(update, sides=sides, told=told))
    heard = {peer.name: lines for peer, lines in outbox.take()}
    assert heard[other][-1] == "a notice for the one who acts"
    # The move's line and a board, as the opponent got them.
    assert heard["carol"] == heard[other][:-1] and len(heard["carol"]) > 1
    assert heard[mover] and "dave" not in heard
