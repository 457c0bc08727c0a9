"""A player's game action at a match, from the command as data to the core and back.

The owner's side of :meth:`server.tables.seam.Tables.act`: the caller's match is looked
up, the command (:data:`server.tables.seam.TableCommand`) becomes the core's action
(:func:`action`), run by :func:`server.tables.match_lifecycle.play` under the match's
lock, and the core's refusals become FIBS's replies here (§4.4-§4.7,
docs/protocol-decisions.md), with the explanation telnet mode adds to a refused move
(D171).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from backgammon.board import BAR, Colour, to_absolute
from backgammon.errors import ActionError, IllegalMoveError, MoveSyntaxError, Refusal
from backgammon.events import Event
from backgammon.match import Action, Match, Phase
from backgammon.moves import Move
from backgammon.notation import format_move, parse_moves
from protocol import replies
from protocol.replies import GameCommand, MoveErrorReason
from server.errors import Reply
from server.tables import match_lifecycle
from server.tables.host import TableHost
from server.tables.matches import LiveMatch
from server.tables.seam import (
    Accept,
    BearOff,
    Double,
    Moves,
    Redouble,
    Reject,
    Resign,
    Roll,
    TableCommand,
)
from server.tables.sides import OPPOSITE
from server.world.presence import Caller


def live_match(host: TableHost, name: str) -> LiveMatch:
    """``name``'s running match, or ``** You're not playing.``."""
    live = host.matches.get(name)
    if live is None:
        raise Reply(replies.NOT_PLAYING)
    return live


async def act(host: TableHost, session: Caller, command: TableCommand) -> None:
    """Run ``command`` for ``session`` at its match, mapping the core's refusals to
    FIBS replies."""
    live = live_match(host, session.name)
    player = live.player_of(session.name)
    run = _action(command, player)
    notice = run.notice if isinstance(run, _BearOff) else None
    try:
        await match_lifecycle.play(host, live, lambda: run(live.match), notice=notice)
    except ActionError as error:
        raise Reply(_refusal(command_name(command), error.reason, live, player)) from None
    except IllegalMoveError as error:
        help_ = _move_help(live, player, error, _typed(command))
        raise Reply(_move_error(error, live, player), telnet=help_) from None
    except MoveSyntaxError as error:
        help_ = _move_help(live, player, error, _typed(command))
        if error.incomplete:
            required = live.match.moves_required()
            first = replies.move_error(MoveErrorReason.TOO_FEW, count=required)
            raise Reply(first, telnet=help_) from None
        first = replies.move_error(MoveErrorReason.BAD_WORD, error.index)
        raise Reply(first, telnet=help_) from None


def _action(command: TableCommand, player: int) -> Callable[[Match], list[Event]]:
    """The core's action for ``command`` by ``player``, run under the match's lock: what
    it reads of the match, the checks the server adds (``off``'s play, a redouble's
    name) included, is read there."""
    match command:
        case Roll():
            return lambda m: m.roll(player)
        case Double():
            return lambda m: m.double(player)
        case Moves(text):
            return lambda m: m.move(player, parse_moves(text, m.colour(player)))
        case BearOff():
            return _BearOff(player)
        case Accept():
            return lambda m: (
                m.accept_resignation(player) if m.resignation is not None else m.take(player)
            )
        case Reject():
            return lambda m: (
                m.reject_resignation(player) if m.resignation is not None else m.drop(player)
            )
        case Redouble(name):

            def redouble(m: Match) -> list[Event]:
                _check_redouble_name(m, player, name)
                return m.redouble(player)

            return redouble
        case Resign(kind):
            return lambda m: m.resign(player, kind)
        case _:
            assert_never(command)


def command_name(command: TableCommand) -> GameCommand:
    """The command's name in the refusal texts (protocol.replies.refusal)."""
    match command:
        case Roll():
            return GameCommand.ROLL
        case Double():
            return GameCommand.DOUBLE
        case Moves() | BearOff():
            return GameCommand.MOVE
        case Accept():
            return GameCommand.ACCEPT
        case Reject():
            return GameCommand.REJECT
        case Redouble():
            return GameCommand.REDOUBLE
        case Resign():
            return GameCommand.RESIGN
        case _:
            assert_never(command)


def _typed(command: TableCommand) -> str | None:
    """The moves as typed, for the explanation of a refused move (D171)."""
    return command.text if isinstance(command, Moves) else None


class _BearOff:
    """``off`` as an action: the play that bears every die off, found under the lock
    (§4.5), kept for its ``Bear off:`` line, which goes with the action's own lines
    after the save."""

    def __init__(self, player: int) -> None:
        self.player = player
        self.moves: tuple[Move, ...] = ()
        self.colour = Colour.O

    def __call__(self, match: Match) -> list[Event]:
        self.moves = _bear_off(match, self.player)
        self.colour = match.colour(self.player)
        return match.move(self.player, self.moves)

    def notice(self) -> tuple[int, str]:
        """The ``Bear off:`` line of the play, once it has run."""
        texts = (format_move(m, self.colour).split("-")[0] for m in self.moves)
        return self.player, replies.bear_off(texts)


def _bear_off(match: Match, player: int) -> tuple[Move, ...]:
    """The play of ``off``: every die borne off, when that is a legal play (§4.5)."""
    if match.to_act != player or match.phase is not Phase.MOVE:
        raise Reply(replies.NOT_YOUR_TURN)
    play = next((p for p in match.legal_plays() if all(m.dst == 0 for m in p.moves)), None)
    if play is None or len(play.moves) < len(match.dice.dice if match.dice else ()):
        raise Reply(replies.CANT_BEAR_OFF_WITH_EVERY_NUMBER)
    return play.moves


def _check_redouble_name(match: Match, player: int, name: str) -> None:
    """``beaver``/``raccoon``/``otter`` name the 1st/2nd/3rd redouble (§4.6)."""
    offer = match.offer
    allowed = match.may(player, Action.REDOUBLE)
    if name in replies.REDOUBLE_NAMES and offer is not None and allowed:
        wanted = replies.REDOUBLE_NAMES.index(name)
        if offer.redoubles != wanted:
            expected = replies.redouble_name(offer.redoubles)
            raise Reply(replies.wrong_redouble_name(name, expected))


def _move_help(
    live: LiveMatch,
    player: int,
    error: IllegalMoveError | MoveSyntaxError,
    typed: str | None,
) -> list[str]:
    """For telnet mode: the typed move that failed and why, and which way the player
    moves (D171); CLIP clients get FIBS's line alone (:attr:`server.errors.Reply.telnet`)."""
    if typed is None:
        return []
    match = live.match
    colour = match.colour(player)
    d1, d2 = match.dice if match.dice is not None else (0, 0)
    if isinstance(error, MoveSyntaxError):
        if error.incomplete:
            first = replies.move_incomplete(error.word)
        elif "/" in error.word:
            first = replies.move_slash(error.word)
        else:
            first = replies.move_problem(MoveErrorReason.BAD_WORD, error.word, "", d1, d2)
    else:
        moves = parse_moves(typed, colour)
        reason = MoveErrorReason(error.reason.value)
        if reason in (MoveErrorReason.TOO_FEW, MoveErrorReason.TOO_MANY):
            first = replies.move_count_problem(len(moves), error.count, d1, d2)
        else:
            what = format_move(moves[error.index], colour) if error.index < len(moves) else typed
            first = replies.move_problem(reason, what, named_point(error, colour), d1, d2)
    direction = replies.move_direction(
        colour.name, to_absolute(24, colour), to_absolute(1, colour), to_absolute(6, colour)
    )
    return [first, direction]


def named_point(error: IllegalMoveError, colour: Colour) -> int | str:
    """The point a move error names, in the mover's absolute FIBS numbers (distances stay)."""
    if error.point is None:
        return ""
    if error.reason.value == MoveErrorReason.WRONG_DISTANCE.value:
        return error.point
    if error.point == BAR:
        return replies.BAR_POINT
    if 1 <= error.point <= 24:
        return to_absolute(error.point, colour)
    return error.point


def _refusal(command: GameCommand, reason: Refusal, live: LiveMatch, player: int) -> str:
    """The FIBS reply for a refused action (§4.5-§4.7; docs/protocol-decisions.md)."""
    opponent_moving = live.match.phase is Phase.MOVE
    opponent = live.names[OPPOSITE[player]]
    return replies.refusal(command, reason, opponent, opponent_moving=opponent_moving)


def _move_error(error: IllegalMoveError, live: LiveMatch, player: int) -> str:
    """§4.5's texts; points in the mover's absolute FIBS numbers (distances stay)."""
    reason = MoveErrorReason(error.reason.value)
    point = named_point(error, live.match.colour(player))
    return replies.move_error(reason, error.index, None if point == "" else point, error.count)
