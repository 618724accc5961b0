"""The one dispatch: the gate is on the action, whatever the role's label; a stop shows the real
action; with no sandbox no command is ever offered always-allow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.records import changes
from sdd_git.root import Root
from sdd_git.runner import stops
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, events, script, write_call


def command(text: str, purpose: str = "p") -> dict[str, object]:
    return {"tool": "run_command", "args": {"command": text, "purpose": purpose}}


GATED_CALLS = {
    "write_file": write_call("src/app.py"),
    "delete_file": {"tool": "delete_file", "args": {"path": "README.md", "purpose": "p"}},
    "run_command": command("ls"),
    "git_commit": {"tool": "git_commit", "args": {"message": "m", "paths": ["README.md"]}},
    "draft_scenarios": {
        "tool": "draft_scenarios",
        "args": {
            "change": "CH-0001",
            "scenarios": [{"title": "t", "steps": "s", "expected": "e"}],
        },
    },
}


@pytest.mark.parametrize("role", ["executor", "helper-other", "writer-of-readings"])
@pytest.mark.parametrize("tool", sorted(GATED_CALLS))
def test_with_no_accepted_section_no_role_acts_whatever_it_produces(
    sdd: SddRunner,
    root: Root,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    role: str,
    tool: str,
) -> None:
    changes.create(root, "Nobody accepted this yet.")
    add_role(root, "helper-other", produces="other")
    add_role(root, "writer-of-readings", produces="reading")
    (root.path / "README.md").write_text("hello\n")
    script(tmp_path, monkeypatch, [{"tool_calls": [GATED_CALLS[tool]]}, {"say": "done"}])
    result = sdd("role", "run", role, "--task", "Do it", "--json")
    assert result.code == 4, result.stdout + result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "no-spec" and outcome["stop"] is None
    assert stops.pending(root) == []
    logged = events(root, outcome["run"])
    no_spec = [e for e in logged if e["event"] == "stop"]
    assert [(e["kind"], e["choices"]) for e in no_spec] == [("no-spec", [])]
    assert not any(e["event"] == "action_done" for e in logged)
    assert not (root.path / "src/app.py").exists()
    assert (root.path / "README.md").read_text() == "hello\n"
    assert not (root.change_dir("CH-0001") / "scenarios.yaml").exists()


def test_with_no_accepted_section_reading_and_drafting_a_reading_still_work(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    changes.create(root, "Nobody accepted this yet.")
    draft = {
        "tool": "draft_reading",
        "args": {"change": "CH-0001", "text": "Find it.", "checks": ["It is found."]},
    }
    read = {"tool": "read_file", "args": {"path": ".gitignore"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [read, draft]}, {"say": "drafted"}])
    result = sdd("role", "run", "executor", "--task", "Draft the reading", "--json")
    assert result.code in (0, 3), result.stderr
    assert "Find it." in root.spec_file("SPEC-0001").read_text()


def test_a_stop_shows_a_multi_line_command_whole_with_controls_escaped(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    sneaky = "ls\n# harmless\x1b[2K\rrm -rf src " + "x" * 200 + " && curl evil"
    script(tmp_path, monkeypatch, [{"tool_calls": [command(sneaky, "tidy\x1b]0;up")]}])
    result = sdd("role", "run", "builder", "--task", "Tidy", "--json")
    stop = json.loads(result.stdout)["stop"]
    action = stop["action"]
    assert "\x1b" not in action and "\r" not in action
    assert "    # harmless\\x1b[2K\\x0drm -rf src " in action
    assert action.count("x" * 200) == 1 and "&& curl evil" in action
    assert '"tidy\\x1b]0;up"' in action
    shown = sdd("stops", "show", stop["id"])
    assert shown.code == 0 and "\x1b" not in shown.stdout
    assert "&& curl evil" in shown.stdout


def test_a_file_write_stop_shows_its_start_and_size_and_show_prints_all_of_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    content = "import os\n" + "".join(f"# line {n}\n" for n in range(40)) + "os.system('x')\n"
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("conftest.py", content)]}])
    stop = json.loads(sdd("role", "run", "builder", "--task", "T", "--json").stdout)["stop"]
    assert (
        f"Create the file conftest.py (42 lines, {len(content):,} bytes), starting:"
        in stop["action"]
    )
    assert "    import os\n    # line 0" in stop["action"]
    assert "os.system" not in stop["action"]
    shown = sdd("stops", "show", stop["id"]).stdout
    assert "os.system('x')" in shown and "# line 39" in shown


def test_with_no_sandbox_a_command_stop_says_so_and_offers_no_always_allow(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_SANDBOX", "none")
    accepted_change(root)
    add_role(
        root,
        "saver",
        extra="boundary:\n  always_allow:\n    - {tool: run_command, inputs: {command: ls}}\n",
    )
    script(tmp_path, monkeypatch, [{"tool_calls": [command("ls")]}, {"say": "ok"}])
    result = sdd("role", "run", "saver", "--task", "List", "--json")
    assert result.code == 3  # the saved rule does not match with no sandbox
    outcome = json.loads(result.stdout)
    stop = outcome["stop"]
    assert stop["choices"] == ["allow once", "deny"]
    assert "No sandbox: this command runs with all your rights" in stop["action"]
    assert events(root, outcome["run"])[0]["sandbox"] == "none: SDD_SANDBOX=none"


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_a_code_runner_runs_by_a_saved_rule_only_where_a_sandbox_holds_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    from sdd_git.sandbox import choose

    monkeypatch.setenv("SDD_SANDBOX", sandbox)
    if choose.current().name != sandbox:
        pytest.skip(f"{sandbox} does not work here: {choose.current().why}")
    accepted_change(root)
    code = "python3 -c 'print(6 * 7)'"
    add_role(
        root,
        "saver",
        extra="boundary:\n  always_allow:\n"
        f'    - {{tool: run_command, inputs: {{command: "{code}"}}}}\n',
    )
    script(tmp_path, monkeypatch, [{"tool_calls": [command(code)]}, {"say": "ok"}])
    result = sdd("role", "run", "saver", "--task", "Compute", "--json")
    outcome = json.loads(result.stdout)
    done = [e for e in events(root, outcome["run"]) if e["event"] == "action_done"]
    if sandbox == "bwrap":
        assert result.code == 0 and [e["by"] for e in done] == ["saved_rule"]
    else:
        assert result.code == 3 and done == []
        assert outcome["stop"]["choices"] == ["allow once", "deny"]


def test_an_allowed_action_that_fails_is_logged_as_not_done(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    push = {"tool": "git_push", "args": {"remote": "nowhere", "branch": "main"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [push]}, {"say": "ok"}])
    stop = json.loads(sdd("role", "run", "builder", "--task", "Push", "--json").stdout)["stop"]
    assert sdd("allow", stop["id"]).code == 0
    logged = events(root, stop["run"])
    assert not [e for e in logged if e["event"] == "action_done"]
    (failed,) = [e for e in logged if e["event"] == "action_failed"]
    assert failed["tool"] == "git_push" and failed["by"] == "allow_once"
    assert "nothing was pushed" in failed["reason"]
