"""`sdd skill save --from RUN NAME` and `sdd skill save --accept NAME`, through the real entry
point: what the person types, what she sees, and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner, run_cli
from tests.runner.scripted import accepted_change, add_role, script, write_call


def _run(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, str]:
    """A run of builder stopped at its write: (run id, stop id)."""
    accepted_change(root)
    add_role(root, "builder")
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Wrote a."}])
    stopped = sdd("role", "run", "builder", "--task", "Write a.txt", "--json")
    assert stopped.code == 3
    stop = json.loads(stopped.stdout)["stop"]
    return str(stop["run"]), str(stop["id"])


def test_save_then_accept_makes_a_skill_runs_find(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, stop_id = _run(sdd, root, tmp_path, monkeypatch)
    refused = sdd("skill", "save", "--from", run_id, "write-a")
    assert refused.code == 1
    assert f"error: run {run_id} ended stopped, not done" in refused.stderr
    assert "hint: answer its stop" in refused.stderr
    assert sdd("allow", stop_id).code == 0
    saved = sdd("skill", "save", "--from", run_id, "write-a")
    assert saved.code == 0, saved.stderr
    assert saved.stdout == ".sdd/local/skill-drafts/write-a/SKILL.md\n"
    assert "sdd skill save --accept write-a" in saved.stderr
    assert json.loads(sdd("skill", "list", "--json").stdout) == []  # a draft is no skill yet
    accepted = sdd("skill", "save", "--accept", "write-a")
    assert accepted.code == 0, accepted.stderr
    assert accepted.stdout == ".sdd/skills/write-a/SKILL.md\n"
    (listed,) = json.loads(sdd("skill", "list", "--json").stdout)
    assert listed["name"] == "write-a" and listed["metadata"]["sdd-from-run"] == run_id
    assert sdd("skill", "validate").code == 0
    again = sdd("skill", "save", "--from", run_id, "write-a")
    assert again.code == 1 and "--force" in again.stderr


def test_save_needs_exactly_one_of_from_and_accept(sdd: SddRunner) -> None:
    for args in (("write-a",), ("--from", "run-x", "--accept", "write-a")):
        result = sdd("skill", "save", *args)
        assert result.code == 2
        assert "error: say either --from RUN (save a draft) or --accept" in result.stderr


def test_a_bad_name_and_an_unknown_run_say_what_is_wrong(sdd: SddRunner) -> None:
    bad = sdd("skill", "save", "--from", "run-20260101-000000-abcdef", "Write_A")
    assert bad.code == 2 and "error: 'Write_A' is not a skill name" in bad.stderr
    unknown = sdd("skill", "save", "--from", "run-20260101-000000-abcdef", "write-a")
    assert unknown.code == 1 and "error: no run log run-20260101-000000-abcdef" in unknown.stderr
    no_draft = sdd("skill", "save", "--accept", "write-a")
    assert no_draft.code == 1 and "error: no draft skill 'write-a'" in no_draft.stderr


def test_inside_a_role_run_the_command_refuses(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id, stop_id = _run(sdd, root, tmp_path, monkeypatch)
    assert sdd("allow", stop_id).code == 0
    result = run_cli(
        "skill", "save", "--from", run_id, "write-a", cwd=root.path, env={"SDD_RUN_ID": run_id}
    )
    assert result.returncode == 1
    assert "error: person commands cannot run inside a role run" in result.stderr
    assert not (root.local / "skill-drafts" / "write-a").exists()
