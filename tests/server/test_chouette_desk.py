"""The chouette's commands without sockets (docs/chouette.md; D303-D312): the desk runs
every line through the real dispatch, handlers, table seam and owner, with seeded dice."""

from __future__ import annotations

from backgammon.board import Colour
from backgammon.chouette_events import OrderRolled
from backgammon.chouette_state import BOX, ChouettePhase, Cube, CubeOwner
from backgammon.events import WinKind
from backgammon.notation import format_moves
from protocol import replies
from protocol.board_fibs import parse_board
from protocol.board_view import BoardView
from server.connection import end_session
from server.tables.chouette_table import LiveChouette
from server.tables.sides import Side, Sides

from .desk import Desk

NAMES = ("ann", "bob", "cat", "dan")


async def seated(desk: Desk, *names: str, words: str = "") -> LiveChouette:
    """``names[0]`` opens a table (with ``words``) and the others join it; telnet users."""
    host = names[0]
    for name in names:
        await desk.login(name, clip=False)
    opened = await desk.run(host, f"chouette open {words}".strip())
    assert replies.CHOUETTE_OPENED in opened
    for name in names[1:]:
        assert replies.you_invite_to_chouette(name) in await desk.run(
            host, f"chouette invite {name}"
        )
        assert replies.chouette_invites_you(host) in desk.heard(name)
        await desk.run(name, f"chouette join {host}")
    for name in names:
        desk.heard(name)
    return desk.app.local_tables.chouettes[host]


async def started(desk: Desk, *names: str, words: str = "") -> LiveChouette:
    """:func:`seated`, then ``names[0]`` starts the first game; what it said is read."""
    table = await seated(desk, *names, words=words)
    await desk.run(names[0], "chouette start")
    for name in names:
        desk.heard(name)
    return table


async def play_turn(desk: Desk, table: LiveChouette) -> list[str]:
    """The side on roll rolls, or moves its first legal play."""
    core = table.core
    mover = core.mover()
    assert mover is not None
    if core.phase is ChouettePhase.TURN:
        return await desk.run(mover, "roll")
    assert core.phase is ChouettePhase.MOVE
    play = core.legal_plays()[0]
    colour = Colour.O if core.turn == BOX else Colour.X
    return await desk.run(mover, f"move {format_moves(play.moves, colour)}")


async def test_open_invite_join_start(desk: Desk) -> None:
    table = await seated(desk, *NAMES[:3])
    heard = await desk.run("bob", "chouette start")
    core = table.core
    box, line = core.box, core.line
    assert box is not None
    draws = [
        replies.chouette_draws(n, d)
        for e in core.record
        if isinstance(e, OrderRolled)
        for n, d in zip(e.names, e.dice, strict=True)
    ]
    assert heard[: len(draws) + 2] == [
        *draws,
        replies.chouette_seats(box, line),
        replies.chouette_game_starts(1, box, line[0]),
    ]
    assert table.sides() == Sides(Side((box,), box), Side(line, line[0]))
    assert any(h.startswith(f"{box} rolled ") for h in heard)
    assert any("+---" in h for h in heard)  # an ASCII board
    for name in NAMES[:3]:
        peer = desk.app.presence.get(name)
        assert peer is not None and peer.opponent == (line[0] if name == box else box)
    assert "board:" not in "".join(heard)


async def test_refusals_of_the_table(desk: Desk) -> None:
    await desk.login("eve", clip=False)
    assert await desk.run("eve", "chouette start") == [replies.NOT_AT_CHOUETTE, "> "]
    assert await desk.run("eve", "chouette frobnicate") == [replies.CHOUETTE_USAGE, "> "]
    assert await desk.run("eve", "chouette open beavers=maybe") == [
        replies.chouette_bad_setting("beavers=maybe"),
        "> ",
    ]
    assert (await desk.run("eve", "chouette open cubes=single beavers=on"))[0].startswith(
        "** These chouette settings do not go together"
    )
    await seated(desk, "ann", "bob")
    assert (await desk.run("eve", "chouette join ann"))[-2:] == [
        replies.no_chouette_invitation("ann"),
        "> ",
    ]
    await desk.run("ann", "chouette invite eve")
    assert await desk.run("ann", "roll") == [replies.CHOUETTE_NO_GAME, "> "]
    await desk.run("ann", "chouette start")
    table = desk.app.local_tables.chouettes["ann"]
    core = table.core
    box = core.box
    assert box is not None
    member = core.line[0]
    if core.turn == BOX:
        assert await desk.run(member, "roll") == [replies.NOT_YOUR_TURN_TO_ROLL, "> "]
    else:
        assert await desk.run(box, "roll") == [replies.NOT_YOUR_TURN_TO_ROLL, "> "]
    # the invitee joins mid-game: seated when the game ends
    heard = await desk.run("eve", "chouette join ann")
    assert replies.chouette_waits("eve") in heard
    assert "eve" in core.waiting


async def test_boards_show_the_viewers_side_and_own_cube(desk: Desk) -> None:
    table = await seated(desk, *NAMES[:3])
    for name in NAMES[:3]:
        await desk.run(name, "set boardstyle 3")
    await desk.run("ann", "chouette start")
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    while not (core.turn != BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)
    for name in NAMES[:3]:
        desk.heard(name)
    # The second member doubles their own cube; the captain's roll closes the window.
    assert replies.chouette_team_doubles(other, 2) in await desk.run(other, "double")
    await desk.run(captain, "roll")
    at_box = desk.heard(box)
    assert replies.chouette_box_answers([other]) in at_box
    assert _last_board(at_box).was_doubled
    seen = {n: _last_board(await desk.run(n, "board")) for n in (box, captain, other)}
    assert seen[box].player == "You" and seen[box].colour is Colour.O
    assert seen[captain].player == "You" and seen[captain].colour is Colour.X
    assert seen[other].player == captain and seen[other].colour is Colour.X
    assert seen[other].cube == 1 and not seen[other].player_may_double  # pending
    assert seen[captain].cube == 1 and seen[captain].player_may_double
    await desk.run(box, "accept")
    assert core.cubes[other].value == 2 and core.cubes[other].owner is CubeOwner.BOX
    assert core.cubes[captain].value == 1
    own = _last_board(await desk.run(other, "board"))
    assert own.cube == 2 and not own.player_may_double and own.opponent_may_double
    captains = _last_board(await desk.run(captain, "board"))
    assert captains.cube == 1 and captains.player_may_double
    shown = await desk.run(other, "show chouette")
    assert replies.chouette_show_cube(other, 2, "box", True, None) in shown


async def test_box_answers_named_members_and_doubles_some(desk: Desk) -> None:
    table = await started(desk, *NAMES)
    core = table.core
    box = core.box
    assert box is not None
    while not (core.turn != BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)
    first, second, third = core.line
    await desk.run(second, "double")
    await desk.run(third, "double")
    await desk.run(first, "roll")
    # ESK: accepting half of the two is fine; accept the second, reject the third
    await desk.run(box, f"accept {second}")
    assert core.cubes[second].value == 2
    assert core.results[third] == 1 and core.totals[third] == 1
    while not (core.turn == BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)
    # the box doubles the captain alone (the second's cube is the box's own: it may)
    heard = await desk.run(box, f"double {first}")
    assert replies.chouette_box_doubles(first, 2) in heard
    assert replies.CHOUETTE_ANSWER_BOX_DOUBLE in desk.heard(first)
    desk.heard(second)
    assert await desk.run(second, "accept") == [replies.CHOUETTE_NOTHING_TO_ANSWER, "> "]
    await desk.run(first, "reject")
    assert core.results[first] == -1
    # the captain is out: the second member plays for the team now
    assert core.acting_captain() == second
    assert replies.chouette_acting_captain(second) in desk.heard(third)


async def test_a_member_leaves_mid_game_and_the_game_goes_on_to_the_rotation(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3])
    core = table.core
    box = core.box
    assert box is not None
    leaver = core.line[1]
    heard = await desk.run(leaver, "leave")
    assert replies.chouette_leaves(leaver) in heard
    assert leaver not in desk.app.local_tables.chouettes
    peer = desk.app.presence.get(leaver)
    assert peer is not None and peer.opponent is None
    assert core.results[leaver] == -1  # the cube resigned at its value
    others = [n for n in NAMES[:3] if n != leaver]
    assert replies.chouette_leaves(leaver) in desk.heard(others[0])
    captain = core.line[0]
    turns = 0
    while core.game == 1:
        await play_turn(desk, table)
        turns += 1
        assert turns < 400
    assert core.game == 2 and leaver not in core.players
    # Kit's rotation: the box stays when it beat the captain, else the captain is box
    finished = table.core.history[-1]
    from backgammon.chouette_events import ChouetteGameFinished

    end = next(e for e in finished if isinstance(e, ChouetteGameFinished))
    assert core.box == (box if end.box_stays else captain)
    assert sum(core.totals.values()) == 0
    desk.heard(box)
    shown = await desk.run(box, "show chouette")
    assert shown[0] == replies.chouette_heading("ann", 2)


async def test_show_chouette_lines_for_programs(desk: Desk) -> None:
    await started(desk, "ann", "bob")
    await desk.login("eve")  # a CLIP client
    shown = await desk.run("eve", "show chouette ann")
    assert shown[0].startswith("chouette:ann:1:")
    assert shown[-1] == replies.CHOUETTE_END_LINE
    fields = shown[0].split(":")
    assert len(fields) == 8
    assert [line.split(":")[0] for line in shown[1:-1]] == ["chouette-cube"] + [
        "chouette-total"
    ] * 2
    assert await desk.run("eve", "show chouette") == [replies.NOT_AT_CHOUETTE]
    # The page's command box (D376): the text for people, between the markers.
    typed = await desk.run("eve", "text! show chouette ann")
    assert typed[0] == replies.TEXT_BEGIN and typed[-1] == replies.TEXT_END
    assert typed[1] == replies.chouette_heading("ann", 1)


async def test_team_talk(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3], words="consultation=free")
    core = table.core
    box, first, second = core.box, core.line[0], core.line[1]
    assert box is not None
    assert await desk.run(first, "chouette team hold the anchor") == [
        replies.you_team_talk("hold the anchor"),
        "> ",
    ]
    assert desk.heard(second) == [replies.team_talks(first, "hold the anchor")]
    assert desk.heard(box) == []
    assert await desk.run(box, "chouette team hi") == [replies.CHOUETTE_TEAM_TALK_BOX, "> "]


async def test_team_talk_needs_a_turned_cube_by_default(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3])
    member = table.core.line[0]
    assert await desk.run(member, "chouette team hi") == [
        replies.CHOUETTE_TEAM_TALK_REFUSED,
        "> ",
    ]


def _last_board(lines: list[str]) -> BoardView:
    board = [line for line in lines if line.startswith("board:")][-1]
    return parse_board(board)


async def test_a_watcher_sees_the_side_and_cube_of_whom_they_watch(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3])
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    await desk.login("eve")
    await desk.run("eve", "set boardstyle 3")
    first = _last_board(await desk.run("eve", f"watch {other}"))
    assert first.player == captain and first.colour is Colour.X
    await play_turn(desk, table)
    seen = desk.heard("eve")
    assert any(line.startswith("board:") for line in seen)
    assert _last_board(await desk.run("eve", "board")).player == captain
    # kibitz reaches the players and the other watchers
    await desk.run("eve", "kibitz nice")
    assert any("nice" in line for line in desk.heard(box))
    await desk.run("eve", "unwatch")
    from_box = _last_board(await desk.run("eve", f"watch {box}"))
    assert from_box.player == box and from_box.colour is Colour.O
    assert await desk.run("eve", "chouette join ann") == [replies.no_chouette_invitation("ann")]


async def test_resignation_on_one_cube(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3])
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    while core.phase is not ChouettePhase.TURN:
        await play_turn(desk, table)
    heard = await desk.run(other, "resign n")
    assert replies.chouette_resign_offered(other, box, WinKind.SINGLE, 1) in heard
    assert await desk.run(other, "accept") == [replies.CHOUETTE_NOTHING_TO_ANSWER, "> "]
    await desk.run(box, "accept")
    assert core.results[other] == -1 and core.in_game(captain)
    assert replies.chouette_resign_accepted(box) in desk.heard(captain)


async def test_beavers_when_the_table_allows_them(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3], words="beavers=on")
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    while not (core.turn == BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)
    await desk.run(box, "double")
    heard = await desk.run(other, "beaver")
    assert replies.chouette_beavers(other, 4) in heard
    await desk.run(captain, "accept")
    assert core.cubes[other].value == 4 and core.cubes[captain].value == 2
    after = table.core  # not narrowed by the loop above
    assert after.phase is ChouettePhase.MOVE and after.turn == BOX  # the box's roll followed


async def test_a_member_who_logs_out_stays_at_the_table_away(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3])
    core = table.core
    other = core.line[1]
    await end_session(desk.app, desk.sessions[other])  # the connection's end (D361)
    assert desk.app.local_tables.chouettes[other] is table
    assert other in core.absent and core.in_game(other)
    assert replies.chouette_presence(other, False) in desk.heard(core.line[0])


async def test_a_player_who_logs_out_before_the_first_game_leaves(desk: Desk) -> None:
    table = await seated(desk, *NAMES[:3])
    await end_session(desk.app, desk.sessions["cat"])
    assert "cat" not in desk.app.local_tables.chouettes
    assert table.present() == ("ann", "bob")


async def test_the_box_chooses_the_automatic_double_on_an_opening_tie(desk: Desk) -> None:
    table = await seated(desk, "ann", "bob", words="auto_doubles=box_option")
    core = table.core
    last = await desk.run("ann", "chouette start")
    for _ in range(60):  # games end at once: a double, rejected, until an opening tie
        if core.phase is ChouettePhase.AUTO_DOUBLE:
            break
        while core.phase is ChouettePhase.MOVE:
            await play_turn(desk, table)
        mover = core.mover()
        other = core.box if mover != core.box else core.line[0]
        assert mover is not None and other is not None
        await desk.run(mover, "double")
        last = await desk.run(other, "reject")
    assert core.phase is ChouettePhase.AUTO_DOUBLE
    box = core.box
    assert box is not None
    told = (last if box == "ann" else []) + desk.heard(box)  # the last game's lines
    assert replies.CHOUETTE_AUTO_DOUBLE_OPTION in told
    await desk.run(box, "accept")
    assert core.cubes[core.line[0]].value == 2


async def test_a_single_cube_moves_for_the_whole_team(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3], words="cubes=single")
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    while not (core.turn != BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)
    desk.heard(other)
    assert (await desk.run(other, "double"))[-2:] == [replies.CHOUETTE_NOT_CAPTAIN, "> "]
    heard = await desk.run(captain, "double")
    assert replies.chouette_team_doubles(captain, 2) in heard
    assert replies.chouette_doubles_for(captain, other, 2) in heard
    assert replies.chouette_box_answers([captain, other]) in heard
    desk.heard(box)
    assert await desk.run(box, f"accept {captain}") == [replies.CHOUETTE_SINGLE_CUBE, "> "]
    await desk.run(box, "accept")
    assert {m: c.value for m, c in core.cubes.items()} == {captain: 2, other: 2}


async def test_the_box_raccoons_a_beaver(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3], words="beavers=on raccoons=on")
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    while not (core.turn == BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)
    await desk.run(box, "double")
    desk.heard(other)
    assert await desk.run(other, "raccoon") == [replies.NOT_ALLOWED_TO_REDOUBLE, "> "]
    await desk.run(other, "beaver")
    await desk.run(captain, "accept")
    assert table.core.phase is ChouettePhase.RACCOON
    heard = await desk.run(box, "raccoon")
    assert replies.chouette_raccoons(other, 8) in heard
    assert core.cubes[other] == Cube(8, CubeOwner.BOX, True)


async def test_a_proxy_doubles_and_answers_for_a_member(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3])
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    assert await desk.run(other, f"chouette delegate {box}") == [
        replies.CHOUETTE_BAD_PROXY,
        "> ",
    ]
    heard = await desk.run(other, f"chouette delegate {captain}")
    assert replies.chouette_proxy(other, captain) in heard
    assert core.proxies == {other: captain}
    while not (core.turn != BOX and core.phase is ChouettePhase.TURN):
        await play_turn(desk, table)
    heard = await desk.run(captain, f"double {other}")
    assert replies.chouette_doubles_for(captain, other, 2) in heard
    assert replies.chouette_proxy_ended(other) in await desk.run(other, "chouette delegate")
    assert core.proxies == {}


async def test_the_box_leaving_mid_game_ends_it_and_the_next_begins(desk: Desk) -> None:
    table = await started(desk, *NAMES[:3])
    core = table.core
    box, captain, other = core.box, core.line[0], core.line[1]
    assert box is not None
    await desk.run(box, "leave")
    assert core.history and core.game == 2
    assert core.box == captain and core.line == (other,)  # as if the box lost (§8)
    heard = desk.heard(other)
    assert replies.chouette_leaves(box) in heard
    assert replies.chouette_game_starts(2, captain, other) in heard
    assert sum(core.totals.values()) == 0 and core.totals[box] == -2
    await desk.run(captain, "leave")
    assert core.phase is ChouettePhase.WAITING and core.players == (other,)
    desk.heard(other)
    assert await desk.run(other, "chouette start") == [replies.CHOUETTE_NEEDS_TWO, "> "]


async def test_a_refused_move_answers_the_match_texts(desk: Desk) -> None:
    table = await started(desk, "ann", "bob")
    core = table.core
    while core.phase is not ChouettePhase.MOVE:
        await play_turn(desk, table)
    mover = core.mover()
    assert mover is not None
    desk.heard(mover)
    assert (await desk.run(mover, "move 13-12"))[0].startswith("** ")
    assert await desk.run(mover, "move x-y") == [
        replies.move_error(replies.MoveErrorReason.BAD_WORD, 0),
        "> ",
    ]
    assert core.phase is ChouettePhase.MOVE and core.mover() == mover  # nothing changed


async def test_show_games_lists_the_chouettes_with_a_game(desk: Desk) -> None:
    table = await seated(desk, *NAMES[:3])
    await desk.login("eve", clip=False)
    assert await desk.run("eve", "show games") == [replies.GAMES_HEADER, "> "]
    await desk.run("ann", "chouette start")
    core = table.core
    box = core.box
    assert box is not None
    assert await desk.run("eve", "show games") == [
        replies.GAMES_HEADER,
        replies.chouette_game_line(box, core.line[0], 3, 1),
        "> ",
    ]
