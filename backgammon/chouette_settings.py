"""A chouette table's settings: :class:`ChouetteSettings`, with the defaults of the rules.

The rules are ``shared/docs/chouette-rules.md`` (cited as §n); where its sources differ,
the choice is a table setting and the default is the one it puts in bold. Whoever opens
a table chooses them, and everyone who joins accepts them by joining (§1). The core
applies every rule setting; the three timing settings (§8) are kept here so that a table
carries all its settings in one value, and the server's timers read them (the core has
no clock: a timer that runs out is :meth:`backgammon.chouette.Chouette.time_out`).
"""

from __future__ import annotations

import enum
import typing
from dataclasses import dataclass, fields
from typing import Any

from backgammon.errors import BackgammonError


class CubeMode(enum.Enum):
    """§2: one cube per team member against the box, or one cube for the whole team."""

    MULTIPLE = "multiple"
    SINGLE = "single"


class InitialDoubles(enum.Enum):
    """§2: what the box may answer when every member doubles initially at once."""

    HALF_OR_NONE = "half_or_none"
    """ESK: accept at least half or reject all; two members: both or neither."""
    FREE = "free"
    """The option "none": any answer."""


class LoneTaker(enum.Enum):
    """§2: the box doubled every member and exactly one took."""

    NOTHING = "nothing"
    MANDATORY_BEAVER = "mandatory_beaver"
    """The lone taker's take becomes a beaver."""


class AutoDoubles(enum.Enum):
    """§2: automatic doubles on opening ties (an automatic double raises every cube)."""

    OFF = "off"
    AT_MOST_ONE = "at_most_one"
    """The first opening tie of a game doubles every cube; later ties do not."""
    BOX_OPTION = "box_option"
    """At the first opening tie the box chooses whether every cube doubles."""


class Rotation(enum.Enum):
    """§5: who stays in the box."""

    KIT = "kit"
    """The box stays when it beat the captain."""
    LA = "la"
    """L.A.: the box stays when its net result for the game is 0 or more."""


class Consultation(enum.Enum):
    """§6: who may use team talk."""

    FREE = "free"
    """Every member still in the game."""
    NONE = "none"
    OWN_CUBE_TURNED = "own_cube_turned"
    """A member still in the game whose own cube has been turned."""


class BoxPartner(enum.Enum):
    """§7: when the box has a partner (the next in line after the captain)."""

    OFF = "off"
    OPTIONAL_AT_6 = "optional_at_6"
    """With 6 or more players the next in line is offered the seat, and may decline."""
    MANDATORY_AT_7 = "mandatory_at_7"
    """With 7 or more players the next in line is the partner."""


class Leaving(enum.Enum):
    """§8: what happens to the cube of a member who leaves mid-game."""

    RESIGN = "resign"
    """The cube is resigned at its value (a single game) at once."""
    FOLLOW_CAPTAIN = "follow_captain"
    """The cube stays in the game, its box doubles answered as the captain answers
    them, until the game ends."""


class ChouetteSettingsError(BackgammonError):
    """Settings that do not go together (raccoons without beavers, ...)."""


@dataclass(frozen=True)
class ChouetteSettings:
    """A table's rules (each field's default is the rules' default, §2-§8).

    The fields marked "multiple cubes" shape how the members' cubes move one by one;
    with a single cube they have nothing to act on: the off-by-default ones are refused
    when turned on, and the box's constraint on initial doubles (on by default) is met
    by the single cube's all-or-nothing answer anyway.
    """

    cubes: CubeMode = CubeMode.MULTIPLE
    """§2: multiple cubes or a single cube."""
    initial_doubles: InitialDoubles = InitialDoubles.HALF_OR_NONE
    """§2, multiple cubes: the box's constraint on initial doubles from every member."""
    box_double_takes_captain: bool = False
    """§2, multiple cubes, the L.A. option: with all cubes in the game at one level, a box
    double must include the captain."""
    beavers: bool = False
    """§2, multiple cubes: a member doubled by the box may beaver."""
    raccoons: bool = False
    """§2, multiple cubes, with beavers only: the box may raccoon a beaver."""
    lone_taker: LoneTaker = LoneTaker.NOTHING
    """§2, multiple cubes: the lone taker of a box double to every member."""
    auto_doubles: AutoDoubles = AutoDoubles.OFF
    """§2: automatic doubles on opening ties."""
    jacoby: bool = True
    """§2, per member: a gammon or backgammon counts for or against a member only once
    that member's cube was turned."""
    rotation: Rotation = Rotation.KIT
    """§5: Kit's rule or the L.A. net-result option."""
    consultation: Consultation = Consultation.OWN_CUBE_TURNED
    """§6: who may use team talk (the server keeps the channel; the core answers who may)."""
    box_partner: BoxPartner = BoxPartner.OPTIONAL_AT_6
    """§7: the box partner."""
    leaving: Leaving = Leaving.RESIGN
    """§8: a member leaving mid-game resigns their cube, or follows the captain."""
    team_autoroll: bool = True
    """§8 (timers): the team's dice are rolled for the captain when the doubling window
    closes. Read by the server."""
    double_window: int = 10
    """§8 (timers): seconds the members have to double before the captain's roll goes
    ahead. Read by the server."""
    box_timeout_accepts: bool = True
    """§8 (timers): when the box's cube-answer timer runs out, it accepts every double
    (False: it rejects every one)."""

    def __post_init__(self) -> None:
        if self.raccoons and not self.beavers:
            raise ChouetteSettingsError("raccoons need beavers")
        if self.double_window < 0:
            raise ChouetteSettingsError("the doubling window must be 0 seconds or more")
        if self.cubes is CubeMode.SINGLE and (
            self.beavers
            or self.box_double_takes_captain
            or self.lone_taker is not LoneTaker.NOTHING
        ):
            raise ChouetteSettingsError(
                "beavers, the L.A. captain rule and the lone taker's beaver are for multiple cubes"
            )

    @property
    def multiple(self) -> bool:
        return self.cubes is CubeMode.MULTIPLE


_ENUMS: dict[str, type[enum.Enum]] = {
    name: hint
    for name, hint in typing.get_type_hints(ChouetteSettings).items()
    if isinstance(hint, type) and issubclass(hint, enum.Enum)
}
"""The settings whose values are enums, by field name."""


def settings_to_json(settings: ChouetteSettings) -> dict[str, Any]:
    """The settings as plain JSON data (enums as their values)."""
    return {
        f.name: getattr(settings, f.name).value if f.name in _ENUMS else getattr(settings, f.name)
        for f in fields(ChouetteSettings)
    }


def settings_from_json(data: dict[str, Any]) -> ChouetteSettings:
    """The settings of :func:`settings_to_json`'s data.

    :raises ChouetteSettingsError: data that are not settings, or settings that do not go
        together.
    """
    names = {f.name for f in fields(ChouetteSettings)}
    if set(data) != names:
        raise ChouetteSettingsError(f"the settings must name exactly {sorted(names)}")
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name in _ENUMS:
            try:
                values[name] = _ENUMS[name](value)
            except ValueError as exc:
                raise ChouetteSettingsError(f"setting {name} cannot be {value!r}") from exc
        elif type(value) is not type(getattr(ChouetteSettings, name)):
            raise ChouetteSettingsError(f"setting {name} has the wrong type: {value!r}")
        else:
            values[name] = value
    return ChouetteSettings(**values)
