"""The network runs an accepted plan (issue 12, item 4): real roots, real node processes, the
scripted provider addressed by role (CONTRACT §9)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.network.drive import drive, status
from sdd_git.records import acceptance, scopes
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.network.test_route import set_scope
from tests.runner.scripted import accepted_change, add_role, script, transcript
from tests.trusthelp import confirm

SUMMARY = {"tool": "return_artifact", "args": {"kind": "summary", "ref": "-", "summary": "done"}}


def role_file(root: Root, name: str, level: int, delegation: str, scope: str) -> None:
    path = root.sdd / "roles" / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}\njob: Do {name} work\nlevel: {level}\n"
        f"toolPolicy.delegation: {delegation}\nproduces: code\nscope: {scope}\n---\nRules.\n"
    )
    confirm(root, path.relative_to(root.path).as_posix())  # as `sdd role create` records it


@pytest.fixture
def money(root: Root) -> tuple[Root, str]:
    """Module money with services expenses and billing, a lead, and an accepted change."""
    for name in ("expenses-dev", "billing-dev"):
        add_role(root, name, extra=f"scope: service:{name[:-4]}\n")
    add_role(root, "money-lead", produces="plan", extra="scope: module:money\n")
    lead = root.sdd / "roles" / "money-lead" / "ROLE.md"
    lead.write_text(
        lead.read_text()
        .replace("level: 10", "level: 50")
        .replace("delegation: deny", "delegation: allow")
    )
    confirm(root, ".sdd/roles/money-lead/ROLE.md")  # she raised the lead (as `sdd role edit`)
    scopes.add_module(root, "money")
    scopes.add_service(root, "expenses", "money", owner="expenses-dev")
    scopes.add_service(root, "billing", "money", owner="billing-dev")
    change = accepted_change(root)
    set_scope(root, change, "scope: module:money\n")
    return root, change


def node(node_id: str, owner: str, scope: str, **more: Any) -> dict[str, Any]:
    return {
        "id": node_id,
        "scope": scope,
        "owner": owner,
        "task": f"Do {node_id}",
        "returns": "summary",
        **more,
    }


def accept(root: Root, change: str, nodes: list[dict[str, Any]]) -> None:
    path = root.path / "changes" / change / "plan.yaml"
    path.write_text(yaml.safe_dump({"nodes": nodes}, sort_keys=False))
    acceptance.accept_plan(root, change)


def node_runs(root: Root) -> dict[str, list[list[dict[str, Any]]]]:
    found: dict[str, list[list[dict[str, Any]]]] = {}
    for path in sorted((root.sdd / "role-runs").glob("*.jsonl")):
        events = [json.loads(line) for line in path.read_text().splitlines() if line]
        route = next((e for e in events if e["event"] == "route"), None)
        if route and route.get("node"):
            found.setdefault(route["node"], []).append(events)
    return found


def network_events(root: Root, change: str) -> list[dict[str, Any]]:
    path = root.local / "network" / f"{change}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_a_branch_waits_for_its_prerequisites_and_each_node_runs_once(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    accept(
        root,
        change,
        [
            node("N1", "expenses-dev", "expenses"),
            node("N2", "billing-dev", "billing", needs=["N1"]),
        ],
    )
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "billing-dev", "tool_calls": [SUMMARY]},
            {"role": "billing-dev", "say": "Billing done."},
            {"role": "expenses-dev", "tool_calls": [SUMMARY]},
            {"role": "expenses-dev", "say": "Expenses done."},
        ],
    )
    finished = drive(root, change)
    assert (finished.status, finished.exit_code) == ("done", 0), finished.message
    rounds = [e for e in network_events(root, change) if e["event"] == "round"]
    assert [r["ran"] for r in rounds] == [["N1"], ["N2"]]  # N2 only after N1 had its result
    runs = node_runs(root)
    assert {k: len(v) for k, v in runs.items()} == {"N1": 1, "N2": 1}
    n1_end = runs["N1"][0][-1]["ts"]
    n2_start = runs["N2"][0][0]["ts"]
    assert n2_start >= n1_end
    again = drive(root, change)  # a finished network starts nothing
    assert again.exit_code == 0 and {k: len(v) for k, v in node_runs(root).items()} == {
        "N1": 1,
        "N2": 1,
    }
    views = {v.id: v for v in status(root, change)}
    assert views["N2"].artifact == {"kind": "summary", "ref": "-", "summary": "done"}


def test_ready_siblings_run_in_parallel_processes(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    accept(
        root, change, [node("N1", "expenses-dev", "expenses"), node("N2", "billing-dev", "billing")]
    )
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "expenses-dev", "tool_calls": [SUMMARY]},
            {"role": "expenses-dev", "say": "ok"},
            {"role": "billing-dev", "tool_calls": [SUMMARY]},
            {"role": "billing-dev", "say": "ok"},
        ],
    )
    finished = drive(root, change)
    assert finished.exit_code == 0, finished.message
    (round_one,) = [e for e in network_events(root, change) if e["event"] == "round"]
    assert round_one["ran"] == ["N1", "N2"]
    runs = node_runs(root)
    assert runs["N1"][0][0]["run"] != runs["N2"][0][0]["run"]  # each its own run log


def test_a_denied_spawn_starts_nothing(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    role_file(root, "boss", 90, "allow", "service:billing")  # above the lead (50)
    accept(root, change, [node("N1", "boss", "billing")])
    script(tmp_path, monkeypatch, [{"role": "boss", "say": "never"}])
    finished = drive(root, change)
    assert finished.exit_code == 1 and "spawn denied" in finished.message
    (denied,) = [e for e in network_events(root, change) if e["event"] == "role_spawn_denied"]
    assert denied["node"] == "N1" and "may not spawn boss" in denied["why"]
    assert node_runs(root) == {}  # nothing started


def test_the_parent_waits_for_every_child(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    role_file(root, "money-dev", 20, "allow", "module:money")
    child = node("N11", "expenses-dev", "expenses")
    accept(root, change, [node("N1", "money-dev", "expenses", children=[child])])
    write = {"tool": "write_file", "args": {"path": "x.txt", "content": "x", "purpose": "p"}}
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "money-dev", "tool_calls": [SUMMARY]},
            {"role": "money-dev", "say": "mine is done"},
            {"role": "expenses-dev", "tool_calls": [write]},  # the child stops at a stop
            {"role": "expenses-dev", "tool_calls": [SUMMARY]},
            {"role": "expenses-dev", "say": "child done"},
        ],
    )
    first = drive(root, change)
    assert first.exit_code == 3, first.message
    views = {v.id: v for v in first.nodes}
    assert views["N11"].state == "stopped" and views["N11"].stop
    assert views["N1"].state == "waiting" and "children" in (views["N1"].why or "")
    from sdd_git.runner.run import answer

    resumed = answer(root, views["N11"].stop or "", "allow_once")
    assert resumed.exit_code == 0, resumed.message
    second = drive(root, change)
    assert second.exit_code == 0, second.message
    assert {k: len(v) for k, v in node_runs(root).items()} == {"N1": 1, "N11": 1}


def test_two_rounds_without_a_result_stall_and_a_second_stall_needs_a_new_plan(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    accept(root, change, [node("N1", "expenses-dev", "expenses")])
    script(tmp_path, monkeypatch, [{"role": "expenses-dev", "say": "no result"}] * 8)
    first = drive(root, change)
    assert (first.status, first.exit_code) == ("waiting", 3) and "two rounds" in first.message
    runs_before = len(node_runs(root)["N1"])
    assert drive(root, change).exit_code == 3  # no new plan: the stall holds, still waiting
    assert len(node_runs(root)["N1"]) == runs_before  # and nothing started
    accept(root, change, [node("N1", "expenses-dev", "expenses", task="Try again")])
    second = drive(root, change)  # one rebuild, and it stalls again: stalled for good
    assert (second.status, second.exit_code) == ("stalled", 1)
    kinds = [e["event"] for e in network_events(root, change)]
    assert kinds.count("rebuild") == 1
    runs_before = len(node_runs(root)["N1"])
    assert drive(root, change).exit_code == 1  # nothing starts until a new plan
    assert len(node_runs(root)["N1"]) == runs_before


def test_the_network_keeps_the_artifact_and_summary_never_the_transcript(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    accept(root, change, [node("N1", "expenses-dev", "expenses")])
    secretive = {"role": "expenses-dev", "say": "INNER-TRANSCRIPT-WORDS are mine"}
    lead_says = {"role": "money-lead", "say": "All done."}
    script(
        tmp_path,
        monkeypatch,
        [{"role": "expenses-dev", "tool_calls": [SUMMARY]}, secretive, lead_says],
    )
    assert drive(root, change).exit_code == 0
    from sdd_git.runner.run import RunRequest, start

    after = start(root, RunRequest("money-lead", "How did the plan go?", change=change))
    assert after.status == "done"
    lead_requests = [t for t in transcript(tmp_path) if t["role"] == "money-lead"]
    assert lead_requests and "INNER-TRANSCRIPT-WORDS" not in json.dumps(lead_requests)
    ledger = (root.local / "network" / f"{change}.json").read_text()
    log = (root.local / "network" / f"{change}.jsonl").read_text()
    assert "INNER-TRANSCRIPT-WORDS" not in ledger + log
    assert "INNER-TRANSCRIPT-WORDS" in json.dumps(node_runs(root))  # it is in the node's own log


def test_killing_the_driver_and_running_again_runs_no_node_twice(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    accept(
        root,
        change,
        [
            node("N1", "expenses-dev", "expenses"),
            node("N2", "billing-dev", "billing", needs=["N1"]),
        ],
    )
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "expenses-dev", "tool_calls": [SUMMARY]},
            {"role": "expenses-dev", "say": "ok"},
            {"role": "billing-dev", "tool_calls": [SUMMARY]},
            {"role": "billing-dev", "say": "ok"},
        ],
    )
    driver = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "work", change, "--json"],
        cwd=root.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        e["event"] == "run_ended" for runs in node_runs(root).get("N1", []) for e in runs
    ):
        time.sleep(0.02)
    driver.send_signal(signal.SIGKILL)  # at once, wherever it is
    driver.wait()
    finished = drive(root, change)
    assert finished.exit_code == 0, finished.message
    assert {k: len(v) for k, v in node_runs(root).items()} == {"N1": 1, "N2": 1}


def test_a_node_that_names_no_owner_gets_the_depth_derived_default_role(
    money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    child = {"id": "N11", "scope": "expenses", "task": "leaf work", "returns": "summary"}
    accept(root, change, [node("N1", "money-lead", "expenses", children=[child])])
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "money-lead", "tool_calls": [SUMMARY]},
            {"role": "money-lead", "say": "ok"},
            {"role": "executor", "tool_calls": [SUMMARY]},
            {"role": "executor", "say": "ok"},
        ],
    )
    finished = drive(root, change)
    assert finished.exit_code == 0, finished.message
    spawned = [e for e in network_events(root, change) if e["event"] == "spawn"]
    assert [(e["node"], e["owner"]) for e in spawned] == [("N1", "money-lead"), ("N11", "executor")]


def test_a_stall_holds_until_she_accepts_a_new_plan_and_a_stall_after_that_ends_it(
    sdd: SddRunner, money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    accept(
        root,
        change,
        [
            node("N1", "expenses-dev", "expenses"),
            node("N2", "billing-dev", "billing", needs=["N1"]),
        ],
    )
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "expenses-dev", "tool_calls": [SUMMARY]},
            {"role": "expenses-dev", "say": "ok"},
            {"role": "billing-dev", "say": "no result"},  # every run of N2 ends without one
        ],
    )
    first = sdd("work", change, "--json")
    assert first.code == 3, first.stdout + first.stderr
    assert json.loads(first.stdout)["status"] == "waiting"
    # N1 had its result in round 1; N2 none in rounds 2 and 3: the first stall.
    assert [r["progress"] for r in network_events(root, change) if r["event"] == "round"] == [
        ["N1"],
        [],
        [],
    ]
    calls = len(transcript(tmp_path))
    held = sdd("work", change, "--json")  # the stall holds: nothing starts
    assert held.code == 3, held.stdout + held.stderr
    assert len(transcript(tmp_path)) == calls
    shown = json.loads(sdd("work", change, "--status", "--json").stdout)
    assert {n["id"]: n["state"] for n in shown["nodes"]} == {"N1": "done", "N2": "stalled"}
    assert "N2 billing billing-dev: stalled" in sdd("work", change, "--status").stdout
    # She edits the plan (N1 kept as it was) and accepts it: one rebuild.
    accept(
        root,
        change,
        [
            node("N1", "expenses-dev", "expenses"),
            node("N2", "billing-dev", "billing", needs=["N1"], task="Try it another way"),
        ],
    )
    second = sdd("work", change, "--json")
    assert second.code == 1, second.stdout + second.stderr
    assert json.loads(second.stdout)["status"] == "stalled"
    kinds = [e["event"] for e in network_events(root, change)]
    assert kinds.count("rebuild") == 1 and kinds.count("stalled") == 2
    runs = node_runs(root)
    assert len(runs["N1"]) == 1  # the finished node the new plan keeps did not run again
    tasks = sorted(r[0]["task"] for r in runs["N2"])
    assert tasks == ["Do N2", "Do N2", "Try it another way", "Try it another way"]
    calls = len(transcript(tmp_path))
    again = sdd("work", change, "--json")  # stalled: nothing starts until a new plan
    assert again.code == 1 and len(transcript(tmp_path)) == calls
    shown = json.loads(sdd("work", change, "--status", "--json").stdout)
    assert {n["id"]: n["state"] for n in shown["nodes"]} == {"N1": "done", "N2": "stalled"}


def test_each_returned_artifact_reaches_the_leads_record_and_none_of_the_specialists_words(
    sdd: SddRunner, money: tuple[Root, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, change = money
    returned = {
        "tool": "return_artifact",
        "args": {"kind": "summary", "ref": "-", "summary": "Expenses can be marked reimbursed"},
    }
    draft = {
        "tool": "draft_plan",
        "args": {"change": change, "nodes": [node("N1", "expenses-dev", "expenses")]},
    }
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "money-lead", "tool_calls": [draft]},
            {"role": "money-lead", "say": "Plan drafted."},
            {"role": "expenses-dev", "say": "INNERWORDS first", "tool_calls": [returned]},
            {"role": "expenses-dev", "say": "INNERWORDS are mine alone"},
        ],
    )
    drafted = json.loads(sdd("work", change, "--json").stdout)
    lead_run = drafted["run"]
    assert sdd("accept", "plan", change).code == 0
    assert sdd("work", change).code == 0
    assert sdd("work", change).code == 0  # a finished network: recorded once, not twice
    lead_log = (root.sdd / "role-runs" / f"{lead_run}.jsonl").read_text()
    (artifact,) = [e for e in map(json.loads, lead_log.splitlines()) if e["event"] == "artifact"]
    assert {k: artifact[k] for k in ("node", "kind", "ref", "summary")} == {
        "node": "N1",
        "kind": "summary",
        "ref": "-",
        "summary": "Expenses can be marked reimbursed",
    }
    conversation = root.local / "roles" / "money-lead" / "conversation.jsonl"
    lines = [json.loads(line) for line in conversation.read_text().splitlines()]
    (said,) = [m for m in lines if m["from"] == "network"]
    assert said["node"] == "N1" and "Expenses can be marked reimbursed" in said["text"]
    assert "INNERWORDS" not in lead_log + conversation.read_text()
    assert "INNERWORDS" in json.dumps(node_runs(root))  # it stays in the node's own log
