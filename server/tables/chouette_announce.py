"""What everyone at a chouette table hears of one action: its events as lines, then each
one's board, then a prompt to whoever must act (D305-D307, D311).

The events' lines are the same for everyone (names, never ``You``: a chouette's events
concern several players at once); the boards differ by viewer (:meth:`LiveChouette.
board_for`: the viewer's side and their own cube) and by board style. Every player at
the table and every watcher of one of them gets one write (shared when the lines are
equal, :func:`server.tables.edge.send`).
"""

from __future__ import annotations

from collections.abc import Sequence

from backgammon.board import Colour
from backgammon.chouette_events import (
    ActingCaptain,
    AutoDoubleDeclined,
    BoxDoubled,
    ChouetteEvent,
    ChouetteGameFinished,
    ChouetteGameStarted,
    CubeSettled,
    DoubleBeavered,
    DoubleDropped,
    DoubleRaccooned,
    DoublesClosed,
    DoubleTaken,
    OrderRolled,
    PartnerAnswered,
    PartnerOffered,
    PartnerShare,
    PlayerJoined,
    PlayerLeft,
    PresenceChanged,
    ProxyChanged,
    ResignAccepted,
    ResignOffered,
    ResignRejected,
    ResignWithdrawn,
    SeatsChanged,
    TeamDoubled,
    TimedOut,
)
from backgammon.chouette_state import BOX, ChouettePhase
from backgammon.events import (
    AutoDoubled,
    CheckersMoved,
    DiceRolled,
    OpeningRoll,
    TurnPassed,
)
from backgammon.notation import format_move
from protocol import replies
from server.tables.announce import Outbox
from server.tables.chouette_table import LiveChouette
from server.tables.edge import send
from server.world.presence import Presence

Told = ChouetteEvent | str
"""What a table is told, in order: a core event, or a line the server tells among them
(the dice's, D352-D354, :mod:`server.tables.dice_proof`)."""
Movers = tuple[str | None, str | None]
"""Who plays for the box's side and for the team's (None: nobody yet)."""


def announce(
    presence: Presence, table: LiveChouette, events: Sequence[Told], before: Movers
) -> None:
    """Tell the table and its watchers what ``events`` did; ``before``: who played for
    each side before them (the events name the side, the lines the player)."""
    lines = event_lines(events, before)
    core = table.core
    waiting = set(core.waiting_for())
    doubled = any(isinstance(e, BoxDoubled) for e in events)
    outbox = Outbox()
    present = table.present()
    for name in present:
        peer = presence.get(name)
        if peer is None:
            continue
        outbox.add(peer, *lines)
        outbox.add(peer, *table.board_for(name, peer.settings.boardstyle))
        if name in waiting:
            outbox.add(peer, *_prompt(table, name, doubled=doubled))
    for watcher in presence.watchers_of(present):
        style = watcher.settings.boardstyle
        outbox.add(watcher, *lines)
        outbox.add(watcher, *table.board_for(watcher.name, style, watching=watcher.watching))
    send(presence, outbox)


def _prompt(table: LiveChouette, name: str, *, doubled: bool) -> tuple[str, ...]:
    """What ``name``, whom the table waits for, is asked to do (the match's texts)."""
    core = table.core
    phase = core.phase
    if core.resignation is not None:
        return ()
    if phase is ChouettePhase.TURN:
        return (replies.ROLL_OR_DOUBLE,)
    if phase is ChouettePhase.MOVE:
        return (replies.please_move(core.moves_required()),)
    if phase is ChouettePhase.TEAM_ANSWER and doubled:
        return (replies.CHOUETTE_ANSWER_BOX_DOUBLE,)
    if phase is ChouettePhase.AUTO_DOUBLE:
        return (replies.CHOUETTE_AUTO_DOUBLE_OPTION,)
    return ()


def event_lines(events: Sequence[Told], before: Movers) -> list[str]:
    """The lines of ``events`` in order (the same for every viewer)."""
    box, captain = before
    lines: list[str] = []
    for event in events:
        match event:
            case str():
                lines.append(event)
            case PlayerJoined(name, seated):
                lines.append(replies.chouette_joins(name))
                if not seated and box is not None:
                    lines.append(replies.chouette_waits(name))
            case PlayerLeft(name, _):
                lines.append(replies.chouette_leaves(name))
            case PresenceChanged(name, present):
                lines.append(replies.chouette_presence(name, present))
                if name == box and not present:
                    lines.append(replies.chouette_held(name))
            case ProxyChanged(member, proxy):
                lines.append(
                    replies.chouette_proxy_ended(member)
                    if proxy is None
                    else replies.chouette_proxy(member, proxy)
                )
            case OrderRolled(names, dice):
                lines += [replies.chouette_draws(n, d) for n, d in zip(names, dice, strict=True)]
            case SeatsChanged(new_box, partner, line):
                box = new_box
                lines.append(replies.chouette_seats(new_box, line))
                if partner is not None:
                    lines.append(replies.chouette_partner(partner))
            case PartnerOffered(name):
                lines.append(replies.chouette_partner_offered(name))
            case PartnerAnswered(name, accepted):
                lines.append(replies.chouette_partner_answered(name, accepted))
            case ChouetteGameStarted(game, new_box, _, line):
                box, captain = new_box, line[0]
                lines.append(replies.chouette_game_starts(game, new_box, line[0]))
            case OpeningRoll(dice, starter):
                lines.append(
                    replies.opening_roll_watched(box or "", dice[0], captain or "", dice[1])
                )
                if starter is not None:
                    lines.append(
                        replies.makes_first_move((box if starter == BOX else captain) or "")
                    )
            case AutoDoubled(cube):
                lines.append(replies.cube_now(cube))
            case AutoDoubleDeclined(name):
                lines.append(replies.chouette_auto_double_declined(name))
            case ActingCaptain(name):
                captain = name
                if name is not None:
                    lines.append(replies.chouette_acting_captain(name))
            case DiceRolled(side, roll, _):
                mover = (box if side == BOX else captain) or ""
                lines.append(replies.rolls(mover, roll.d1, roll.d2))
            case CheckersMoved(side, moves, _):
                mover = (box if side == BOX else captain) or ""
                colour = Colour.O if side == BOX else Colour.X
                lines.append(replies.moves(mover, [format_move(m, colour) for m in moves]))
            case TurnPassed(side):
                lines.append(replies.cant_move((box if side == BOX else captain) or ""))
            case TeamDoubled(member, value, by):
                lines.append(
                    replies.chouette_team_doubles(member, value)
                    if by == member
                    else replies.chouette_doubles_for(by, member, value)
                )
            case DoublesClosed(members):
                lines.append(replies.chouette_box_answers(members))
            case BoxDoubled(member, value):
                lines.append(replies.chouette_box_doubles(member, value))
            case DoubleTaken(member, value, _, box_takes):
                lines.append(
                    replies.chouette_box_accepts(member, value)
                    if box_takes
                    else replies.chouette_member_accepts(member, value)
                )
            case DoubleDropped(member, _, box_drops):
                lines.append(
                    replies.chouette_box_rejects(member)
                    if box_drops
                    else replies.chouette_member_rejects(member)
                )
            case DoubleBeavered(member, value, _, _):
                lines.append(replies.chouette_beavers(member, value))
            case DoubleRaccooned(member, value):
                lines.append(replies.chouette_raccoons(member, value))
            case TimedOut(names):
                lines.append(replies.chouette_timed_out(names))
            case CubeSettled(member, won, _, _):
                lines.append(
                    replies.chouette_member_wins(member, won)
                    if won > 0
                    else replies.chouette_box_wins(member, -won)
                )
            case ResignOffered(member, by, kind, value):
                to = (box or "") if by == member else member
                lines.append(replies.chouette_resign_offered(by, to, kind, value))
            case ResignAccepted(_, by, _):
                lines.append(replies.chouette_resign_accepted(by))
            case ResignRejected(_, by):
                lines.append(replies.chouette_resign_rejected(by))
            case ResignWithdrawn(member):
                lines.append(replies.chouette_resign_withdrawn(member))
            case PartnerShare(partner, won):
                lines.append(replies.chouette_partner_share(partner, won))
            case ChouetteGameFinished(game, _, box_net, box_stays):
                lines.append(replies.chouette_game_over(game, box_net, box_stays))
    return lines
