"""Attack routes on `handoff` and groups: each closed route is a short passing test; a route
left open is a failing `test_closed_...`."""

from __future__ import annotations

from typing import Any

import pytest

from sdd_git.errors import InsideRunError, UsageError
from sdd_git.network import groups
from sdd_git.root import Root
from sdd_git.tools import handoff as handoff_module
from sdd_git.tools.toolbox import TOOLS
from tests.runner.scripted import accepted_change, add_role
from tests.tools import SECRET, fails, make_context


@pytest.fixture
def pair(root: Root) -> str:
    change = accepted_change(root)
    add_role(root, "sender")
    add_role(root, "receiver")
    return change


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Capture what the handoff would start, instead of starting it."""
    seen: list[dict[str, Any]] = []

    def fake_popen(argv: list[str], **kw: Any) -> object:
        seen.append({"argv": list(argv), **kw})
        return object()

    monkeypatch.setattr(handoff_module.subprocess, "Popen", fake_popen)
    return seen


def _parsed(argv: list[str]) -> dict[str, Any]:
    from sdd_git.cli.run_cmds import role_run

    assert argv[1:6] == ["-P", "-m", "sdd_git", "role", "run"]  # -P: no product module
    ctx = role_run.make_context("run", list(argv[6:]))
    return dict(ctx.params)


@pytest.mark.parametrize(
    "task",
    [
        "--always",
        "--origin person",
        "x --origin=person --with builder",
        "a\n--origin person\n; rm -rf / && echo $(id)",
        "-- sender",
        "--task=other",
    ],
)
def test_task_with_cli_options_or_shell_text_stays_data(
    root: Root, pair: str, started: list[dict[str, Any]], task: str
) -> None:
    context = make_context(root, role="sender", change=pair)
    TOOLS["handoff"].run({"to": "receiver", "task": task}, context)
    (call,) = started
    assert "shell" not in call or not call["shell"]
    params = _parsed(call["argv"])
    assert params["name"] == "receiver"
    assert params["task"] == task.strip()
    assert params["origin"] == "role"
    assert params["critic"] is None
    assert params["change"] == pair


@pytest.mark.parametrize(
    "to",
    [
        "--origin",
        "builder --with x",
        "receiver\n--origin person",
        "rec eiver",
        "-receiver",
        "../receiver",
        "receiver;id",
        "RECEIVER",
        "receiver\x00",
    ],
)
def test_to_with_options_spaces_or_newlines_is_refused(
    root: Root, pair: str, started: list[dict[str, Any]], to: str
) -> None:
    context = make_context(root, role="sender", change=pair)
    fails(context, "handoff", to=to, task="Check it")
    assert started == []
    assert not (root.local / "handoffs").exists()


def test_to_with_surrounding_whitespace_reaches_only_the_named_role(
    root: Root, pair: str, started: list[dict[str, Any]]
) -> None:
    context = make_context(root, role="sender", change=pair)
    TOOLS["handoff"].run({"to": " receiver\n", "task": "Check"}, context)
    assert _parsed(started[0]["argv"])["name"] == "receiver"


def test_task_of_a_lone_dash_cannot_make_the_receiver_read_stdin(
    root: Root, pair: str, started: list[dict[str, Any]]
) -> None:
    context = make_context(root, role="sender", change=pair)
    for task in ("-", "  -\n"):
        assert "say the task in words" in fails(context, "handoff", to="receiver", task=task)
    assert started == []


def test_woken_run_has_origin_role_even_toward_a_higher_level_receiver(
    root: Root, started: list[dict[str, Any]]
) -> None:
    change = accepted_change(root)
    add_role(root, "sender")
    add_role(
        root,
        "boss",
        extra="level: 9\nboundary:\n  always_allow:\n"
        "    - {tool: write_file, inputs: {path: a.txt, content: x}}\n",
    )
    context = make_context(root, role="sender", change=change)
    TOOLS["handoff"].run({"to": "boss", "task": "Write everything"}, context)
    params = _parsed(started[0]["argv"])
    assert params["origin"] == "role" and params["name"] == "boss"
    # nothing of the sender's (no rule, stop id, or approval) is in the receiver's command line
    assert not any("allow" in a or "stop" in a for a in started[0]["argv"][5:])


def test_secret_in_task_is_masked_in_conversations_command_line_and_result(
    root: Root, pair: str, started: list[dict[str, Any]]
) -> None:
    from sdd_git.runner import conversation

    context = make_context(root, role="sender", change=pair)
    outcome = TOOLS["handoff"].run({"to": "receiver", "task": f"use {SECRET} now"}, context)
    assert SECRET not in str(started[0]["argv"])
    assert SECRET not in outcome.text and SECRET not in str(outcome.data)
    for role in ("sender", "receiver"):
        assert SECRET not in str(conversation.messages(root, role))
    for path in root.sdd.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


def test_woken_process_environment_has_no_run_id(
    root: Root, pair: str, started: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_RUN_ID", "run-sender")
    context = make_context(root, role="sender", change=pair)
    TOOLS["handoff"].run({"to": "receiver", "task": "Check"}, context)
    env = started[0]["env"]
    assert "SDD_RUN_ID" not in env
    assert started[0]["start_new_session"] is True
    assert started[0]["stdin"] is handoff_module.subprocess.DEVNULL


def test_handoff_output_log_stays_under_local_handoffs(
    root: Root, pair: str, started: list[dict[str, Any]]
) -> None:
    context = make_context(root, role="sender", change=pair)
    outcome = TOOLS["handoff"].run({"to": "receiver", "task": "Check"}, context)
    out = (root.path / outcome.data["handoff"]["output"]).resolve()
    assert out.parent == (root.local / "handoffs").resolve()


@pytest.mark.parametrize("value", ['"off "', '" OFF"', "'Off'", "false", "off", "no"])
def test_messaging_off_spellings_send_nothing(
    root: Root, pair: str, started: list[dict[str, Any]], value: str
) -> None:
    from sdd_git.errors import RecordError

    config = root.config.read_text()
    root.config.write_text(config.replace("messaging: on", f"messaging: {value}"))
    context = make_context(root, role="sender", change=pair)
    try:
        outcome = TOOLS["handoff"].run({"to": "receiver", "task": "Check"}, context)
    except RecordError:
        outcome = None  # refused as an unknown value: also nothing sent
    if outcome is not None:
        assert outcome.data["handoff"]["sent"] is False
    assert started == []
    assert not (root.local / "handoffs").exists()


@pytest.mark.parametrize("value", ['"of"', '"1"', "[on]", '"on; off"'])
def test_messaging_odd_values_are_refused_not_taken_as_on(
    root: Root, pair: str, started: list[dict[str, Any]], value: str
) -> None:
    from sdd_git.errors import RecordError
    from sdd_git.tools.base import ToolFailed

    config = root.config.read_text()
    root.config.write_text(config.replace("messaging: on", f"messaging: {value}"))
    context = make_context(root, role="sender", change=pair)
    with pytest.raises((RecordError, ToolFailed)):
        TOOLS["handoff"].run({"to": "receiver", "task": "Check"}, context)
    assert started == []


def test_group_say_and_create_refuse_inside_a_role_run(
    root: Root, pair: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_RUN_ID", "run-x")
    with pytest.raises(InsideRunError):
        groups.say(root, "team", "hello")
    with pytest.raises(InsideRunError):
        groups.create(root, "team", change=pair)


def test_group_say_by_run_command_is_refused(root: Root, sdd: Any) -> None:
    import subprocess
    import sys

    from sdd_git.masking.reach import child_environment

    env = dict(child_environment(__import__("os").environ, "run-x", []))
    done = subprocess.run(
        [sys.executable, "-m", "sdd_git", "group", "say", "team", "hi"],
        cwd=root.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "inside a role run" in done.stderr


@pytest.mark.parametrize(
    "name", ["../x", "../../etc/passwd", "a/b", "..", "x.json", "/tmp/x", "-x", "A", ""]
)
def test_group_name_with_path_text_is_refused(root: Root, name: str) -> None:
    with pytest.raises(UsageError):
        groups.group_path(root, name)


def test_closed_group_name_with_trailing_newline_passes_the_name_check(root: Root) -> None:
    # GROUP_NAME uses `$`, which matches before a final "\n": "team\n" is taken as a name and
    # becomes the file ".sdd/local/groups/team\n.json" (and lock "group-team\n.lock").
    with pytest.raises(UsageError):
        groups.group_path(root, "team\n")


def test_closed_role_name_pattern_accepts_trailing_newline() -> None:
    # NAME_PATTERN (roles/profile.py) has the same `$` flaw; handoff strips `to` first so the
    # receiver is safe, but any other caller that trusts NAME_PATTERN takes "builder\n".
    from sdd_git.roles.profile import NAME_PATTERN

    assert not NAME_PATTERN.match("builder\n")
