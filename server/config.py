"""The server's configuration: ``fibs.conf`` (INI) into a frozen :class:`Settings`.

Every setting has a default; ``fibs.conf`` documents each one. A bad value stops the
start with a one-line :class:`ConfigError` that names the setting.
"""

from __future__ import annotations

import configparser
import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from backgammon.match import MatchOptions, MatchOptionsError


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the setting."""


@dataclass(frozen=True)
class RulesDefaults:
    """Match rules the server applies where the FIBS protocol has no way to choose them."""

    holland: bool = False
    jacoby: bool = False
    auto_doubles: int = 0
    """Automatic doubles per game in unlimited matches (both players need ``autodouble``)."""
    cube_limit: int | None = None
    dead_cube_doubles: bool = True


@dataclass(frozen=True)
class Settings:
    """Everything the server reads from ``fibs.conf`` (section and key in brackets)."""

    host: str = "127.0.0.1"  # [server] host
    port: int = 4321  # [server] port
    database: str = "sqlite+aiosqlite:///fibs.db"  # [server] database
    motd_file: str = ""  # [server] motd_file
    server_name: str = "fibs-server"  # [server] name
    listen_backlog: int = 4096  # [server] listen_backlog, capped by the kernel's somaxconn
    min_free_disk_mb: int = 100  # [server] min_free_disk_mb: a warning below it; 0: off (D302)
    event_loop: str = "uvloop"  # [server] event_loop: uvloop or asyncio (EVENT_LOOPS)
    allocator: str = "jemalloc"  # [server] allocator: jemalloc, pymalloc or malloc (D434, D450)
    proxy_protocol: bool = False  # [server] proxy_protocol: a PROXY header first (D368)
    agent_port: int = 0  # [server] agent_port: HAProxy's agent check (D369); 0: none
    drain_grace: float = 60.0  # [server] drain_grace: seconds a drained node's users have (D415)
    idle_timeout: float = 3600.0  # [limits] idle_timeout, seconds; 0 disables
    idle_warning: float = 60.0  # [limits] idle_warning, seconds before the timeout
    negotiation_wait: float = 0.5  # [limits] negotiation_wait
    max_line_length: int = 1024  # [limits] max_line_length
    commands_per_second: float = 20.0  # [limits] commands_per_second
    command_burst: int = 40  # [limits] command_burst
    max_unread_input: int = 65_536  # [limits] max_unread_input, bytes
    max_input_rate: int = 16_384  # [limits] max_input_rate, bytes a second; 0: no limit
    write_buffer_limit: int = 1_048_576  # [limits] write_buffer_limit, bytes
    login_attempts: int = 5  # [limits] login_attempts per connection
    login_delay: float = 1.0  # [limits] login_delay, seconds after a failure (doubles)
    login_timeout: float = 60.0  # [limits] login_timeout, seconds to log in; 0 disables
    guest_timeout: float = 600.0  # [limits] guest_timeout, seconds to register; 0 disables
    max_pre_login: int = 2000  # [limits] max_pre_login, connections not logged in
    max_pre_login_per_address: int = 20  # [limits] max_pre_login_per_address
    # [limits] max_pre_login_per_trusted_address; 0: half of the total cap (D295)
    max_pre_login_per_trusted_address: int = 0
    trusted_networks: tuple[str, ...] = ("127.0.0.0/8", "::1")  # [limits] trusted_networks
    max_logins: int = 10_000  # [limits] max_logins
    max_visitors: int = 100  # [limits] max_visitors; 0: no visitors (D257)
    max_visitors_per_address: int = 10  # [limits] max_visitors_per_address (D268)
    registrations_per_minute: int = 30  # [limits] registrations_per_minute, in all (D267)
    registrations_per_address: int = 5  # [limits] registrations_per_address, a minute (D267)
    shouts_per_minute: int = 10  # [limits] shouts_per_minute, per user (D300)
    invitations_per_minute: int = 5  # [limits] invitations_per_minute, per user and target (D301)
    max_stored_messages: int = 100  # [limits] max_stored_messages, per recipient (D270)
    max_stored_messages_per_sender: int = 20  # [limits] max_stored_messages_per_sender (D270)
    status_interval: float = 1.0  # [limits] status_interval, seconds between status batches
    match_reminder: float = 120.0  # [limits] match_reminder, seconds; 0 disables
    match_timeout: float = 600.0  # [limits] match_timeout, seconds; 0 disables
    chouette_answer_time: float = 30.0  # [limits] chouette_answer_time, seconds; 0 disables (D360)
    web_host: str = "127.0.0.1"  # [web] host
    web_port: int = 8080  # [web] port; 0: no web listener
    web_origins: str = ""  # [web] origins, space-separated; empty: same origin only
    web_hosts: tuple[str, ...] = ("127.0.0.1", "localhost")  # [web] hosts, with [web] host
    web_proxy_protocol: bool = False  # [web] proxy_protocol: a PROXY header first (D368)
    web_request_timeout: float = 5.0  # [web] request_timeout, seconds for an HTTP request
    web_token_lifetime: int = 43200  # [web] token_lifetime, seconds a session token lasts
    web_tokens_per_user: int = 10  # [web] tokens_per_user, tokens a user holds at most
    analysis: str = "auto"  # [analysis] enabled: auto (on when gnubg is found), yes or no
    analysis_processes: int = 1  # [analysis] processes: gnubg processes at most at once
    analysis_ply: int = 0  # [analysis] ply: 0, 1 or 2
    analysis_queue: int = 1000  # [analysis] queue: requests waiting at most (oldest dropped)
    analysis_gnubg: str = ""  # [analysis] gnubg: its path; empty: /usr/games/gnubg or PATH
    analysis_timeout: float = 600.0  # [analysis] timeout, seconds for one match
    analysis_pause_above: float = 0.1  # [analysis] pause_above: loop's core share; 1: never
    cluster: str = ""  # [cluster] nats: NATS URLs, comma-separated; "" = one node (D340)
    cluster_node: str = ""  # [cluster] node: this node's name; "" = <host>-<port>
    cluster_prefix: str = "fibs"  # [cluster] prefix: the world's NATS subjects' first token
    scrypt_n: int = 16384  # [passwords] scrypt_n
    scrypt_r: int = 8  # [passwords] scrypt_r
    scrypt_p: int = 1  # [passwords] scrypt_p
    rules: RulesDefaults = field(default_factory=RulesDefaults)

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (``settings.replace(port=0)``)."""
        return dataclasses.replace(self, **changes)

    def motd(self) -> list[str]:
        """The message of the day, line by line (empty without a motd file)."""
        if not self.motd_file:
            return []
        return Path(self.motd_file).read_text(encoding="utf-8").splitlines()


EVENT_LOOPS: Final = ("uvloop", "asyncio")

_NODE_NAME: Final = re.compile(r"[A-Za-z0-9_-]+")
"""A node's name or the world's prefix: one token of a NATS subject."""
"""The event loops the server runs on ([server] event_loop): uvloop (libuv, the default:
docs/performance.md §14) or the standard library's."""


ALLOCATORS: Final = ("jemalloc", "pymalloc", "malloc")
"""``[server] allocator``: where Python's objects come from (D434, D450). ``jemalloc``
(the default): every object from jemalloc's ``malloc`` (preloaded; Debian's
``libjemalloc2``), which gives freed pages back between live objects, at 2.7 % more
instructions per match action; Python's pymalloc where it is not installed.
``pymalloc``: Python's own, whose 1 MiB arenas go back only when every object in them
has gone, so that a flood's peak stays in RSS; ``malloc``: glibc's allocator for every
object, whose ``malloc_trim`` gives back free pages between live blocks, at about a
tenth more instructions per match action (docs/performance.md §16)."""


ANALYSIS_MODES: Final = ("auto", "yes", "no")
"""``[analysis] enabled``: on when gnubg is found (the default), on, off (docs/analysis.md)."""


# (section, key) -> (attribute, type) ; rules keys go to RulesDefaults.
_KEYS: Mapping[tuple[str, str], tuple[str, type]] = {
    ("server", "host"): ("host", str),
    ("server", "port"): ("port", int),
    ("server", "database"): ("database", str),
    ("server", "motd_file"): ("motd_file", str),
    ("server", "min_free_disk_mb"): ("min_free_disk_mb", int),
    ("server", "name"): ("server_name", str),
    ("server", "listen_backlog"): ("listen_backlog", int),
    ("server", "event_loop"): ("event_loop", str),
    ("server", "allocator"): ("allocator", str),
    ("server", "proxy_protocol"): ("proxy_protocol", bool),
    ("server", "agent_port"): ("agent_port", int),
    ("server", "drain_grace"): ("drain_grace", float),
    ("limits", "idle_timeout"): ("idle_timeout", float),
    ("limits", "idle_warning"): ("idle_warning", float),
    ("limits", "negotiation_wait"): ("negotiation_wait", float),
    ("limits", "max_line_length"): ("max_line_length", int),
    ("limits", "commands_per_second"): ("commands_per_second", float),
    ("limits", "command_burst"): ("command_burst", int),
    ("limits", "max_unread_input"): ("max_unread_input", int),
    ("limits", "max_input_rate"): ("max_input_rate", int),
    ("limits", "write_buffer_limit"): ("write_buffer_limit", int),
    ("limits", "login_attempts"): ("login_attempts", int),
    ("limits", "login_delay"): ("login_delay", float),
    ("limits", "login_timeout"): ("login_timeout", float),
    ("limits", "guest_timeout"): ("guest_timeout", float),
    ("limits", "max_pre_login"): ("max_pre_login", int),
    ("limits", "max_pre_login_per_address"): ("max_pre_login_per_address", int),
    ("limits", "max_pre_login_per_trusted_address"): ("max_pre_login_per_trusted_address", int),
    ("limits", "trusted_networks"): ("trusted_networks", tuple),
    ("limits", "max_logins"): ("max_logins", int),
    ("limits", "max_visitors"): ("max_visitors", int),
    ("limits", "max_visitors_per_address"): ("max_visitors_per_address", int),
    ("limits", "registrations_per_minute"): ("registrations_per_minute", int),
    ("limits", "registrations_per_address"): ("registrations_per_address", int),
    ("limits", "shouts_per_minute"): ("shouts_per_minute", int),
    ("limits", "invitations_per_minute"): ("invitations_per_minute", int),
    ("limits", "max_stored_messages"): ("max_stored_messages", int),
    ("limits", "max_stored_messages_per_sender"): ("max_stored_messages_per_sender", int),
    ("limits", "status_interval"): ("status_interval", float),
    ("limits", "match_reminder"): ("match_reminder", float),
    ("limits", "match_timeout"): ("match_timeout", float),
    ("limits", "chouette_answer_time"): ("chouette_answer_time", float),
    ("web", "host"): ("web_host", str),
    ("web", "port"): ("web_port", int),
    ("web", "origins"): ("web_origins", str),
    ("web", "hosts"): ("web_hosts", tuple),
    ("web", "proxy_protocol"): ("web_proxy_protocol", bool),
    ("web", "request_timeout"): ("web_request_timeout", float),
    ("web", "token_lifetime"): ("web_token_lifetime", int),
    ("web", "tokens_per_user"): ("web_tokens_per_user", int),
    ("analysis", "enabled"): ("analysis", str),
    ("analysis", "processes"): ("analysis_processes", int),
    ("analysis", "ply"): ("analysis_ply", int),
    ("analysis", "queue"): ("analysis_queue", int),
    ("analysis", "gnubg"): ("analysis_gnubg", str),
    ("analysis", "timeout"): ("analysis_timeout", float),
    ("analysis", "pause_above"): ("analysis_pause_above", float),
    ("cluster", "nats"): ("cluster", str),
    ("cluster", "node"): ("cluster_node", str),
    ("cluster", "prefix"): ("cluster_prefix", str),
    ("passwords", "scrypt_n"): ("scrypt_n", int),
    ("passwords", "scrypt_r"): ("scrypt_r", int),
    ("passwords", "scrypt_p"): ("scrypt_p", int),
}
_RULE_KEYS: Mapping[str, type] = {
    "holland": bool,
    "jacoby": bool,
    "auto_doubles": int,
    "cube_limit": int,
    "dead_cube_doubles": bool,
}


def load(path: Path | None, **overrides: Any) -> Settings:
    """Read ``path`` (or only the defaults when None) and apply ``overrides``.

    :raises ConfigError: an unreadable file, an unknown section or key, or a bad value.
    """
    values: dict[str, Any] = {}
    rules: dict[str, Any] = {}
    if path is not None:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            with path.open(encoding="utf-8") as handle:
                parser.read_file(handle)
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from exc
        except configparser.Error as exc:
            raise ConfigError(f"{path}: {exc.message}") from exc
        for section in parser.sections():
            for key, raw in parser.items(section):
                if section == "rules":
                    if key not in _RULE_KEYS:
                        raise ConfigError(f"unknown setting [rules] {key}")
                    rules[key] = _convert(f"[rules] {key}", raw, _RULE_KEYS[key])
                    continue
                if (section, key) not in _KEYS:
                    raise ConfigError(f"unknown setting [{section}] {key}")
                attribute, kind = _KEYS[(section, key)]
                values[attribute] = _convert(f"[{section}] {key}", raw, kind)
    values.update({k: v for k, v in overrides.items() if v is not None})
    settings = Settings(rules=RulesDefaults(**rules), **values)
    _validate(settings)
    return settings


def _convert(name: str, raw: str, kind: type) -> Any:
    text = raw.strip()
    if kind is bool:
        lowered = text.lower()
        if lowered in ("yes", "true", "on", "1"):
            return True
        if lowered in ("no", "false", "off", "0"):
            return False
        raise ConfigError(f"{name} must be yes or no, not {text!r}")
    if kind is int:
        if kind is int and name == "[rules] cube_limit" and text.lower() in ("", "none"):
            return None
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"{name} must be a whole number, not {text!r}") from None
    if kind is tuple:  # a list: words separated by commas or spaces
        return tuple(word for word in text.replace(",", " ").split())
    if kind is float:
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{name} must be a number, not {text!r}") from None
    return text


def _is_origin(text: str) -> bool:
    """``scheme://host[:port]`` and nothing more (what a browser sends as Origin)."""
    scheme, sep, rest = text.partition("://")
    return scheme in ("http", "https") and bool(sep) and bool(rest) and "/" not in rest


_HOST = re.compile(r"[A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]")
"""A host name, an IPv4 address, or an IPv6 address in brackets, as a ``Host`` header
names them (RFC 9110 §7.2) without the port."""


def _is_host(text: str) -> bool:
    """A host as ``[web] hosts`` lists it: a name or address, no scheme, path or port."""
    return _HOST.fullmatch(text) is not None


def _validate(settings: Settings) -> None:
    checks = [
        (0 <= settings.port <= 65535, "[server] port must be 0..65535"),
        (0 <= settings.agent_port <= 65535, "[server] agent_port must be 0 (none) or 1..65535"),
        (0 <= settings.drain_grace <= 3600, "[server] drain_grace must be 0..3600 seconds"),
        (
            not settings.cluster or not settings.database.startswith("sqlite"),
            "a cluster ([cluster] nats, --cluster) needs PostgreSQL: every node shares one "
            "database, and [server] database is SQLite",
        ),
        (
            all(
                _NODE_NAME.fullmatch(n)
                for n in (settings.cluster_node, settings.cluster_prefix)
                if n
            ),
            "[cluster] node and prefix must be letters, digits, - and _ only",
        ),
        (bool(settings.database), "[server] database must be a database URL"),
        (settings.listen_backlog >= 1, "[server] listen_backlog must be 1 or more"),
        (
            settings.event_loop in EVENT_LOOPS,
            f"[server] event_loop must be {' or '.join(EVENT_LOOPS)}, not {settings.event_loop!r}",
        ),
        (
            settings.allocator in ALLOCATORS,
            f"[server] allocator must be {' or '.join(ALLOCATORS)}, not {settings.allocator!r}",
        ),
        (settings.idle_timeout >= 0, "[limits] idle_timeout must be 0 (off) or more"),
        (settings.idle_warning >= 0, "[limits] idle_warning must be 0 or more"),
        (settings.negotiation_wait >= 0, "[limits] negotiation_wait must be 0 or more"),
        (settings.max_line_length >= 80, "[limits] max_line_length must be 80 or more"),
        (settings.commands_per_second > 0, "[limits] commands_per_second must be above 0"),
        (settings.command_burst >= 1, "[limits] command_burst must be 1 or more"),
        (
            settings.max_unread_input >= max(4096, 2 * settings.max_line_length),
            "[limits] max_unread_input must be at least 4096 and twice max_line_length",
        ),
        (
            settings.max_input_rate == 0 or settings.max_input_rate >= 1024,
            "[limits] max_input_rate must be 0 (no limit) or at least 1024",
        ),
        (settings.write_buffer_limit >= 4096, "[limits] write_buffer_limit must be 4096 or more"),
        (settings.login_attempts >= 1, "[limits] login_attempts must be 1 or more"),
        (settings.login_delay >= 0, "[limits] login_delay must be 0 or more"),
        (settings.login_timeout >= 0, "[limits] login_timeout must be 0 (off) or more"),
        (settings.guest_timeout >= 0, "[limits] guest_timeout must be 0 (off) or more"),
        (settings.min_free_disk_mb >= 0, "[server] min_free_disk_mb must be 0 (off) or more"),
        (settings.max_pre_login >= 1, "[limits] max_pre_login must be 1 or more"),
        (
            settings.max_pre_login_per_address >= 1,
            "[limits] max_pre_login_per_address must be 1 or more",
        ),
        (
            settings.max_pre_login_per_trusted_address >= 0,
            "[limits] max_pre_login_per_trusted_address must be 0 or more",
        ),
        (settings.max_logins >= 1, "[limits] max_logins must be 1 or more"),
        (settings.max_visitors >= 0, "[limits] max_visitors must be 0 or more"),
        (
            settings.max_visitors_per_address >= 1,
            "[limits] max_visitors_per_address must be 1 or more",
        ),
        (
            settings.registrations_per_minute >= 1,
            "[limits] registrations_per_minute must be 1 or more",
        ),
        (
            settings.registrations_per_address >= 1,
            "[limits] registrations_per_address must be 1 or more",
        ),
        (settings.shouts_per_minute >= 1, "[limits] shouts_per_minute must be 1 or more"),
        (
            settings.invitations_per_minute >= 1,
            "[limits] invitations_per_minute must be 1 or more",
        ),
        (settings.max_stored_messages >= 1, "[limits] max_stored_messages must be 1 or more"),
        (
            settings.max_stored_messages_per_sender >= 1,
            "[limits] max_stored_messages_per_sender must be 1 or more",
        ),
        (settings.status_interval >= 0, "[limits] status_interval must be 0 or more"),
        (settings.match_reminder >= 0, "[limits] match_reminder must be 0 (off) or more"),
        (settings.match_timeout >= 0, "[limits] match_timeout must be 0 (off) or more"),
        (
            settings.chouette_answer_time >= 0,
            "[limits] chouette_answer_time must be 0 (off) or more",
        ),
        (
            settings.scrypt_n >= 2 and settings.scrypt_n & (settings.scrypt_n - 1) == 0,
            "[passwords] scrypt_n must be a power of two, 2 or more",
        ),
        (0 <= settings.web_port <= 65535, "[web] port must be 0 (off) or 1..65535"),
        (
            all(_is_origin(o) for o in settings.web_origins.split()),
            "[web] origins must be origins such as https://example.org, space-separated",
        ),
        (
            all(_is_host(h) for h in settings.web_hosts),
            "[web] hosts must be host names or addresses without scheme or port, "
            "such as play.example.org or [::1]",
        ),
        (settings.web_request_timeout > 0, "[web] request_timeout must be above 0"),
        (settings.web_token_lifetime >= 60, "[web] token_lifetime must be 60 seconds or more"),
        (settings.web_tokens_per_user >= 1, "[web] tokens_per_user must be 1 or more"),
        (
            settings.analysis in ANALYSIS_MODES,
            f"[analysis] enabled must be {', '.join(ANALYSIS_MODES)}, not {settings.analysis!r}",
        ),
        (
            1 <= settings.analysis_processes <= 64,
            "[analysis] processes must be 1..64",
        ),
        (settings.analysis_ply in (0, 1, 2), "[analysis] ply must be 0, 1 or 2"),
        (settings.analysis_queue >= 1, "[analysis] queue must be 1 or more"),
        (settings.analysis_timeout > 0, "[analysis] timeout must be above 0"),
        (
            0 < settings.analysis_pause_above <= 1,
            "[analysis] pause_above must be above 0 and at most 1",
        ),
        (settings.scrypt_r >= 1, "[passwords] scrypt_r must be 1 or more"),
        (settings.scrypt_p >= 1, "[passwords] scrypt_p must be 1 or more"),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(message)
    for network in settings.trusted_networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise ConfigError(
                f"[limits] trusted_networks: {network!r} is not an address or network"
            ) from None
    if settings.motd_file and not Path(settings.motd_file).is_file():
        raise ConfigError(f"[server] motd_file {settings.motd_file!r} is not a readable file")
    try:
        MatchOptions(
            auto_doubles=settings.rules.auto_doubles,
            cube_limit=settings.rules.cube_limit,
        )
    except MatchOptionsError as exc:
        raise ConfigError(f"[rules] {exc}") from exc
