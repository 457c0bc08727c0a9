"""The one place where a command of the table (:mod:`protocol.commands`) meets its handler.

:data:`BINDINGS` maps every table name a session can run to the handler that answers it;
:data:`DIALOGS` maps each dialog state (a prompt that takes the next line as typed) to
the handler of that line. Dispatch looks them up here and nowhere else. Adding a command: a row in
``protocol/commands.py``, a handler in ``server/handlers/``, a line here
(tests/server/test_bindings.py fails until all three agree).
"""

from __future__ import annotations

from typing import Final

from protocol.commands import SessionState
from server.handlers import (
    DialogHandler,
    Handler,
    account,
    chat,
    chouette,
    general,
    info,
    match,
    ratings,
    records,
    registration,
    settings,
    show,
)

BINDINGS: Final[dict[str, Handler]] = {
    # account and registration
    "bye": account.bye,
    "wave": account.wave,
    "password": account.password,
    "address": account.address,
    "token!": account.token,
    "name": registration.name,
    # chat and lists of people
    "tell": chat.tell,
    "tellx": chat.tellx,
    "alert": chat.alert,
    "say": chat.say,
    "shout": chat.shout,
    "message": chat.message,
    "away": chat.away,
    "back": chat.back,
    "gag": chat.gag,
    "blind": chat.blind,
    "waitfor": chat.waitfor,
    # general
    "help": general.help_,
    "motd": general.motd,
    "version": general.version,
    "about": general.about,
    "stat": general.stat,
    "average": general.average,
    "port": general.port,
    "cls": general.cls,
    "erase": general.admin_only,
    "shutdown": general.admin_only,
    # who is who
    "who": info.who,
    "rawwho": info.rawwho,
    "whois": info.whois,
    "where": info.where,
    "time": info.time_,
    "last": info.last,
    # matches
    "invite": match.invite,
    "join": match.join,
    "roll": match.roll,
    "double": match.double,
    "move": match.move,
    "off": match.off,
    "accept": match.accept,
    "reject": match.reject,
    "redouble": match.redouble,
    "beaver": match.redouble,
    "raccoon": match.redouble,
    "otter": match.redouble,
    "resign": match.resign,
    "panic": match.panic,
    "leave": match.leave,
    "board": match.board,
    "pip": match.pip,
    "look": match.look,
    "oldboard": match.oldboard,
    "oldmoves": match.oldmoves,
    "watch": match.watch,
    "unwatch": match.unwatch,
    "kibitz": match.kibitz,
    "whisper": match.whisper,
    "chouette": chouette.chouette,
    # ratings, records, settings, show
    "ratings": ratings.ratings,
    "export": records.export,
    "analysis": records.analysis,
    "match!": records.match_page,
    "profile!": records.profile_page,
    "dicetest": records.dicetest,
    "toggle": settings.toggle,
    "save": settings.save,
    "set": settings.set_variable,
    "show": show.show,
}
"""Command (table name) -> handler."""

UNBOUND: Final[dict[str, str]] = {
    "co": "no state allows it: dispatch answers the table's refusal, a handler never runs",
    "ne": "no state allows it: dispatch answers the table's refusal, a handler never runs",
    "ye": "no state allows it: dispatch answers the table's refusal, a handler never runs",
}
"""Table commands without a handler, each with the reason why none is needed."""

DIALOGS: Final[dict[SessionState, DialogHandler]] = {
    SessionState.NEW_PASSWORD: registration.new_password,
    SessionState.RETYPE_PASSWORD: registration.retype_password,
}
"""Dialog state -> the handler of the line typed at its prompt."""
