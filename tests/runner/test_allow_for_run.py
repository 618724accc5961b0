""" "Allow for this run": the same tool with the same inputs runs again without a stop for the
rest of that run only, across stops answered in other processes, and never in another run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, events, script, write_call


def _command(text: str, purpose: str = "check") -> dict[str, object]:
    return {"tool": "run_command", "args": {"command": text, "purpose": purpose}}


def test_allow_for_run_lets_the_same_call_run_again_in_that_run_only(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    role_file = add_role(root, "builder")
    before = role_file.read_text()
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [write_call("a.txt", "one\n")]},
            {"tool_calls": [write_call("b.txt")]},  # another call: it stops
            {"tool_calls": [write_call("a.txt", "one\n", purpose="again")]},  # same inputs
            {"say": "Done."},
        ],
    )
    first = json.loads(sdd("role", "run", "builder", "--task", "W", "--json").stdout)
    assert "allow for this run" in first["stop"]["choices"]
    second = sdd("allow", first["stop"]["id"], "--for-run", "--json")
    assert second.code == 3  # b.txt is another call: it stops
    stop_b = json.loads(second.stdout)["stop"]
    assert stop_b["args"]["path"] == "b.txt"
    (root.path / "a.txt").unlink()
    # Answered in another process: the run is rebuilt from its log, and so is the allowance.
    third = sdd("allow", stop_b["id"], "--json")
    assert third.code == 0 and json.loads(third.stdout)["reply"] == "Done."
    assert (root.path / "a.txt").read_text() == "one\n"
    logged = events(root, first["run"])
    decisions = [e["choice"] for e in logged if e["event"] == "decision"]
    assert decisions == ["allow_for_run", "allow_once"]
    done = [e["by"] for e in logged if e["event"] == "action_done"]
    assert done == ["allow_for_run", "allow_once", "for_run"]
    assert role_file.read_text() == before  # nothing saved in the role file

    # A new run of the same role: the earlier answer stands for nothing.
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt", "one\n")]}], name="new")
    again = json.loads(sdd("role", "run", "builder", "--task", "W", "--json").stdout)
    assert again["status"] == "stopped" and again["stop"]["args"]["path"] == "a.txt"


def test_for_run_and_always_together_are_refused_with_exit_2(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "builder")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "ok"}])
    stop = json.loads(sdd("role", "run", "builder", "--task", "W", "--json").stdout)["stop"]
    both = sdd("allow", stop["id"], "--for-run", "--always")
    assert both.code == 2 and "--always and --for-run" in both.stderr
    assert not (root.path / "a.txt").exists()
    listed = json.loads(sdd("stops", "--json").stdout)
    shown = listed if isinstance(listed, list) else listed.get("stops", listed)
    assert any("allow for this run" in s["choices"] for s in shown)


def test_ask_first_offers_no_allow_for_run(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    add_role(root, "builder", extra="boundary:\n  ask_first:\n    - {tool: write_file}\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "ok"}])
    stop = json.loads(sdd("role", "run", "builder", "--task", "W", "--json").stdout)["stop"]
    assert stop["choices"] == ["allow once", "deny"]
    refused = sdd("allow", stop["id"], "--for-run")
    assert refused.code == 2 and "cannot be allowed for the whole run" in refused.stderr
    assert not (root.path / "a.txt").exists()


def test_a_for_run_allowance_still_meets_the_guard(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The allowance is for the same inputs, and the guard judges every later call again:
    a command that is another spelling, or one the guard refuses, is not carried by it."""
    accepted_change(root)
    add_role(root, "builder")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [_command("echo hi > out.txt")]},
            {"tool_calls": [_command("echo hi  > out.txt")]},  # another spelling: stops
        ],
    )
    stop = json.loads(sdd("role", "run", "builder", "--task", "W", "--json").stdout)["stop"]
    after = sdd("allow", stop["id"], "--for-run", "--json")
    assert after.code == 3
    assert json.loads(after.stdout)["stop"]["args"]["command"] == "echo hi  > out.txt"


def test_in_ci_a_stop_offers_allow_once_or_deny_and_no_saved_rule_stands_in(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a CI engine no saved always_allow rule runs an action, and a reviewer answers one
    stop at a time with allow or deny (the exported answer job's choice): no answer there
    stands in for a later call, so neither always allow nor allow for this run is offered."""
    accepted_change(root)
    add_role(
        root,
        "builder",
        extra="boundary:\n  always_allow:\n"
        '    - {tool: write_file, inputs: {path: b.txt, content: "x\\n"}}\n',
    )
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    script(
        tmp_path,
        monkeypatch,
        [
            {"tool_calls": [write_call("a.txt")]},
            {"tool_calls": [write_call("a.txt", purpose="again")]},  # not carried: it stops
            {"tool_calls": [write_call("b.txt")]},
        ],
    )
    first = json.loads(sdd("role", "run", "builder", "--task", "W", "--json").stdout)
    assert first["stop"]["choices"] == ["allow once", "deny"]
    refused = sdd("allow", first["stop"]["id"], "--for-run")
    assert refused.code == 2 and "raised in CI" in refused.stderr
    after = json.loads(sdd("allow", first["stop"]["id"], "--json").stdout)
    assert after["status"] == "stopped" and after["stop"]["args"]["path"] == "a.txt"
    last = json.loads(sdd("allow", after["stop"]["id"], "--json").stdout)
    assert last["status"] == "stopped" and last["stop"]["args"]["path"] == "b.txt"  # no rule
    done = [e["by"] for e in events(root, first["run"]) if e["event"] == "action_done"]
    assert done == ["allow_once", "allow_once"]
