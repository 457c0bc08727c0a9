"""The pure helpers of benchmarks/load.py: the run's configuration against the shipped
fibs.conf (issue 19: shipped limits by default, every change listed), and the counting of
stalled games. The scenarios themselves run against a real server only by hand
(docs/performance.md, Reproducing): they take seconds to minutes; but for one tiny run
of the ``--nodes`` mode (issue 32 item 6), which keeps it working."""

from __future__ import annotations

import asyncio
import os
import shutil

import pytest

from tests.benchmark_scripts import load_script
from tests.conftest import PG_URL_VARIABLE

load = load_script("load")


def test_default_run_is_the_shipped_configuration() -> None:
    args = load.parse_args(["--scenario", "matches"])
    shipped = load.read_config(load.SHIPPED_CONFIG)
    run = load.run_config(
        shipped,
        load.requested_overrides(args),
        {"host": "127.0.0.1", "port": "0", "database": "sqlite+aiosqlite:///x.db"},
    )
    assert load.config_differences(shipped, run) == {}
    report = load.settings_report(shipped, run, args, load.production_cost(run))
    assert report["shipped"] is True and report["relaxed"] == []
    # the run's own address and database are set, not listed
    assert run["server"]["port"] == "0" and shipped["server"]["port"] != "0"


def test_every_requested_change_is_listed() -> None:
    args = load.parse_args(
        ["--relaxed", "--set", "limits.command_burst=80", "--set", "rules.jacoby=yes"]
    )
    shipped = load.read_config(load.SHIPPED_CONFIG)
    before = {s: dict(shipped[s]) for s in shipped.sections()}
    run = load.run_config(shipped, load.requested_overrides(args), {})
    differences = load.config_differences(shipped, run)
    assert differences["limits.command_burst"] == {
        "fibs_conf": shipped["limits"]["command_burst"],
        "run": "80",
    }  # --set wins over --relaxed
    assert differences["limits.commands_per_second"]["run"] == "100000"
    assert differences["rules.jacoby"] == {"fibs_conf": "no", "run": "yes"}
    assert {s: dict(shipped[s]) for s in shipped.sections()} == before
    report = load.settings_report(shipped, run, args, load.production_cost(run))
    assert report["shipped"] is False
    assert "limits.command_burst = 80 (fibs.conf: 40)" in report["relaxed"]


def test_the_web_listener_runs_on_a_port_of_the_runs_own() -> None:
    """On (as shipped) on any port: no difference; off (``--set web.port=0``): one."""
    shipped = load.read_config(load.SHIPPED_CONFIG)
    assert shipped["web"]["port"] != "0"
    run = load.run_config(shipped, {}, {})
    run["web"]["port"] = str(load.free_port())
    assert load.config_differences(shipped, run) == {}
    args = load.parse_args(["--set", "web.port=0"])
    off = load.run_config(shipped, load.requested_overrides(args), {})
    assert load.config_differences(shipped, off) == {
        "web.port": {"fibs_conf": shipped["web"]["port"], "run": "0"}
    }


def test_cheap_hashes_are_a_listed_relaxation() -> None:
    args = load.parse_args(["--cheap-hashes"])
    shipped = load.read_config(load.SHIPPED_CONFIG)
    run = load.run_config(shipped, load.requested_overrides(args), {})
    report = load.settings_report(shipped, run, args, load.production_cost(run))
    assert report["shipped"] is False
    assert any(line.startswith("bulk accounts' password hashes") for line in report["relaxed"])


@pytest.mark.parametrize(
    "text", ["limits.command_burst", "command_burst=3", "limits.=3", "limits.x=", ".x=1"]
)
def test_bad_setting_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"SECTION\.KEY=VALUE"):
        load.parse_setting(text)


def test_run_specific_setting_cannot_be_set() -> None:
    with pytest.raises(SystemExit):
        load.parse_args(["--set", "server.port=4321"])  # parsed only: refused


def test_full_speed_means_no_pacing() -> None:
    assert load.parse_args(["--scenario", "matches", "--full-speed"]).rate == 0.0
    assert load.parse_args(["--scenario", "matches"]).rate == 1.0


def test_stall_counted_once_until_the_game_moves_on() -> None:
    tracker = load.StallTracker(10.0)
    assert tracker.check(100.0, {"a": 95.0, "b": 80.0}) == ["b"]
    assert tracker.check(101.0, {"a": 95.0, "b": 80.0}) == []  # still the same stall
    assert tracker.check(106.0, {"a": 95.0, "b": 105.0}) == ["a"]  # b moved on
    assert tracker.stalled == {"a"}
    assert tracker.check(120.0, {"a": 95.0, "b": 105.0}) == ["b"]  # b stalls again
    assert tracker.episodes == 3


def test_stuck_game_counts_at_once() -> None:
    tracker = load.StallTracker(10.0)
    assert tracker.check(100.0, {"a": 99.0, "b": 99.0}, stuck=["b"]) == ["b"]
    assert tracker.episodes == 1


def test_stall_cause_and_exit_status() -> None:
    assert load.stall_cause(1, 1, True) == "too_fast"
    assert load.stall_cause(0, 2, True) == "refused"
    assert load.stall_cause(0, 0, True) == "unanswered"
    assert load.stall_cause(0, 0, False) == "no_line"
    assert load.is_slow_down(b"** You are sending commands too fast. Please slow down.")
    assert not load.is_slow_down(b"** You did already roll the dice.")
    stalled = {"games_stalled": 2, "games": 50, "by_cause": {"too_fast": 2}, "too_fast_replies": 2}
    status, lines = load.verdict({"stalls": stalled, "settings": {"relaxed": []}})
    assert status == load.STALLED_EXIT != 0 and "STALLED" in lines[-1]
    status, lines = load.verdict({"stalls": {**stalled, "games_stalled": 0}})
    assert (status, lines) == (0, [])


def test_hostile_defaults_are_the_issue_18_attack() -> None:
    args = load.parse_args(["--scenario", "hostile"])
    assert (args.hostile_inputs, args.hostile_connections, args.long_line_mb) == (100_000, 30, 4.0)
    assert args.chatters == 4 and args.chat_rate == 10.0  # well under the command rate
    assert load.parse_args(["--scenario", "hostile", "--chat-rate", "2"]).chat_rate == 2.0
    assert load.parse_args(["--scenario", "chat"]).chat_rate == 1.0


def test_hostile_inputs_are_hostile_and_reproducible() -> None:
    import random

    first = [load.hostile_input(random.Random(5)) for _ in range(1)]
    assert first == [load.hostile_input(random.Random(5))]
    rng = random.Random(18)
    inputs = [load.hostile_input(rng) for _ in range(10_000)]
    assert any(b"\xff\xfa" in x and x.endswith(b"\xff\xf0") for x in inputs)  # subnegotiations
    assert any(len(x) == 3 and x[0] == 0xFF for x in inputs)  # negotiations
    assert any(len(x) > 1_000 and x.endswith(b"\r\n") for x in inputs)  # over-long lines
    assert len({x[2] for x in inputs if len(x) == 3 and x[0] == 0xFF}) > 240  # option bytes


def test_hostile_defaults_include_the_issue_34_web_attack() -> None:
    """Issue 34: the hostile scenario goes on to the web door: slow HTTP, WebSocket
    floods, 1,000 WebSockets held; their accounts have cheap hashes (they log in by the
    thousand), the web bystander's too; other scenarios have none."""
    args = load.parse_args(["--scenario", "hostile"])
    assert (args.web_slow, args.web_floods, args.web_sockets) == (1000, 30, 1000)
    assert args.web_quiet == 90.0  # RSS read once the second trim has run (item 9: "back")
    groups = load.plan_accounts(args)
    assert len(groups["web_held"]) == 1000 and len(groups["web_bystander"]) == 1
    assert all(n.replace("_", "").isalpha() for n in groups["web_held"])
    idle = load.plan_accounts(load.parse_args(["--scenario", "idle"]))
    assert idle["web_held"] == [] and idle["web_bystander"] == []


def test_the_web_floods_are_masked_frames_of_their_kind() -> None:
    """Every flood is whole client frames (masked, RFC 6455 §5.3) of its kind."""
    import hostile_web

    for kind in hostile_web.FLOOD_KINDS:
        data = hostile_web._flood_data(kind)
        pos, opcodes = 0, []
        while pos < len(data):
            first, second = data[pos], data[pos + 1]
            assert second & 0x80, "a client frame is masked"
            size, pos = second & 0x7F, pos + 2
            if size == 126:
                size, pos = int.from_bytes(data[pos : pos + 2]), pos + 2
            opcodes.append(first & 0x0F)
            pos += 4 + size
        assert pos == len(data) and len(opcodes) > 50
        wanted = {"pings": {0x9}, "newlines": {0x1}, "empty_frames": {0x1, 0x0}}[kind]
        assert set(opcodes) == wanted


def test_two_nodes_tells_and_a_match_across_them() -> None:
    """``--nodes 2`` (issue 32 item 6) stays working: two real nodes on a fresh
    PostgreSQL database, a NATS and HAProxy of the run's own; two tellers and one match
    whose users are on different nodes; everyone listed by ``rawwho`` on node 1 and
    through HAProxy; every tell delivered, moves verified, no error in the nodes' logs."""
    server = os.environ.get(PG_URL_VARIABLE)
    if not server:
        pytest.skip(f"a cluster needs PostgreSQL: set {PG_URL_VARIABLE} (README, 'Tests')")
    if shutil.which("nats-server") is None or shutil.which("haproxy") is None:
        pytest.skip("needs nats-server and haproxy")
    args = load.parse_args(
        [
            *("--nodes", "2", "--scenario", "chat", "--clients", "2", "--chatters", "2"),
            *("--chat-rate", "5", "--pairs", "1", "--rate", "4", "--warmup", "1"),
            *("--duration", "2", "--settle", "0.5", "--time-limit", "60", "--postgres", server),
        ]
    )
    import cluster_bench  # benchmarks/cluster_bench.py (load.py's --nodes mode)

    summary = asyncio.run(cluster_bench.run(args))
    assert summary["logged_in"] == 6, summary
    assert summary["errors"] == {}, summary["error_samples"]
    assert summary["who"]["node1"]["listed_everyone"]
    assert summary["who"]["haproxy"]["listed_everyone"]
    assert summary["tell_delivery"]["count"] >= 10 and summary["tells_undelivered"] == 0
    assert summary["moves_verified"] >= 1 and summary["cpu_unit"] == "action"
    assert set(summary["cpu_seconds"]) >= {"node1", "node2", "nats"}
    assert all(log["errors"] == 0 for log in summary["node_logs"].values())
