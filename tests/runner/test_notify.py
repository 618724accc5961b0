"""`approvals.notify`: her own command, started when a stop waits, told the stop in its
environment, never through a shell, and only from settings she confirmed."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from sdd_git.root import Root
from sdd_git.runner import stops
from sdd_git.runner.notify import announce
from tests.conftest import commit_all, run_cli
from tests.runner.scripted import accepted_change, script, write_call
from tests.trusthelp import confirm

NOTIFIER = """\
import json, os, sys
seen = {k: v for k, v in os.environ.items() if k.startswith("SDD_") or k.endswith("_KEY")}
seen["argv"] = sys.argv[1:]
seen["cwd"] = os.getcwd()
with open(sys.argv[1] + ".tmp", "w") as f:
    json.dump(seen, f)
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
"""


def notifier(tmp_path: Path) -> Path:
    path = tmp_path / "notifier.py"
    path.write_text(NOTIFIER)
    return path


def wait_for(path: Path, seconds: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"the notify command never wrote {path}"
        time.sleep(0.05)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def set_notify(root: Root, commands: list[Any], file: str = ".sdd/config.yaml") -> None:
    path = root.path / file
    data = yaml.safe_load(path.read_text()) if path.exists() else {}
    data = data or {}
    data["approvals"] = {"notify": commands}
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    confirm(root, file)  # she wrote it herself


def stopped_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: Root, path: str) -> Any:
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call(path)]}, {"say": "Done."}])
    ran = run_cli("role", "run", "builder", "--task", "Write it", "--json", cwd=root.path)
    assert ran.returncode == 3, ran.stderr
    return json.loads(ran.stdout)["stop"]


def test_a_stop_that_waits_starts_her_command_with_the_stop_in_its_environment(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    seen_file = tmp_path / "outside" / "seen.json"
    seen_file.parent.mkdir()
    set_notify(root, [[sys.executable, str(notifier(tmp_path)), str(seen_file)]])
    stop = stopped_run(tmp_path, monkeypatch, root, "a.txt")
    seen = wait_for(seen_file)
    assert seen["SDD_STOP"] == stop["id"]
    assert seen["SDD_STOP_RUN"] == stop["run"]
    assert seen["SDD_STOP_ROLE"] == "builder"
    assert seen["SDD_STOP_KIND"] == "approval"
    assert seen["SDD_STOP_ACTION"] == stop["action"]
    assert seen["SDD_STOP_CHOICES"] == ", ".join(stop["choices"])
    assert seen["SDD_STOP_EXPIRES"] == ""  # her own run's stop never expires
    assert seen["SDD_STOP_TEXT"].startswith("builder waits for you: Create the file a.txt")
    assert f"sdd allow {stop['id']}" in seen["SDD_STOP_TEXT"]
    assert seen["SDD_PRODUCT"] == str(root.path)
    assert "SDD_RUN_ID" not in seen  # hers, not a role's child: her own sdd commands work in it
    # It ran with her rights, outside the role's sandbox: it wrote beside the product.
    assert seen["cwd"] == str(root.path)


def test_one_line_of_words_is_split_as_words_and_never_given_to_a_shell(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    seen_file = tmp_path / "seen file.json"
    line = shlex.join([sys.executable, str(notifier(tmp_path)), str(seen_file), "$HOME", ";id"])
    set_notify(root, [line], file=".sdd/config.local.yaml")
    # The model chooses the words of the stop: none of them may run as code anywhere.
    stopped_run(tmp_path, monkeypatch, root, "$(touch pwned).txt")
    seen = wait_for(seen_file)
    assert seen["argv"] == [str(seen_file), "$HOME", ";id"]
    assert "$(touch pwned).txt" in seen["SDD_STOP_ACTION"]
    assert not (root.path / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_her_user_settings_may_name_the_command_and_every_command_runs(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    accepted_change(root)
    user = isolated_home / ".config" / "sdd" / "config.yaml"
    user.parent.mkdir(parents=True)
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    tool = str(notifier(tmp_path))
    user.write_text(
        yaml.safe_dump(
            {
                "approvals": {
                    "notify": [
                        [sys.executable, tool, str(first)],
                        [sys.executable, tool, str(second)],
                    ]
                }
            }
        )
    )
    confirm(root, str(user))
    stop = stopped_run(tmp_path, monkeypatch, root, "a.txt")
    assert wait_for(first)["SDD_STOP"] == stop["id"]
    assert wait_for(second)["SDD_STOP"] == stop["id"]


def test_no_secret_of_sdds_environment_reaches_the_command(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    seen_file = tmp_path / "seen.json"
    set_notify(root, [[sys.executable, str(notifier(tmp_path)), str(seen_file)]])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-the-notifier")
    monkeypatch.setenv("MY_SERVICE_KEY", "also-not")
    stopped_run(tmp_path, monkeypatch, root, "a.txt")
    seen = wait_for(seen_file)
    assert "ANTHROPIC_API_KEY" not in seen and "MY_SERVICE_KEY" not in seen
    assert not any(k.startswith("SDD_PROVIDER") or k.startswith("SDD_SCRIPT") for k in seen)


def test_a_command_that_cannot_start_is_said_and_the_stop_still_waits(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    set_notify(root, [["no-such-notifier-here", "x"]])
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Done."}])
    ran = run_cli("role", "run", "builder", "--task", "Write it", cwd=root.path)
    assert ran.returncode == 3
    assert "your notify command `no-such-notifier-here x` could not start" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert len(stops.pending(root)) == 1


def test_a_value_that_is_not_a_command_is_said_with_its_file_and_runs_nothing(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    set_notify(root, [{"run": "x"}])
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Done."}])
    ran = run_cli("role", "run", "builder", "--task", "Write it", cwd=root.path)
    assert ran.returncode == 3
    assert "approvals.notify in .sdd/config.yaml:" in ran.stderr
    assert "each command is a list of words or one line of words" in ran.stderr


def test_a_command_that_arrives_by_a_merge_runs_nothing(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    commit_all(root.path, "start")
    seen_file = tmp_path / "seen.json"
    config = root.path / ".sdd" / "config.yaml"
    data = yaml.safe_load(config.read_text()) or {}
    data["approvals"] = {"notify": [[sys.executable, str(notifier(tmp_path)), str(seen_file)]]}
    config.write_text(yaml.safe_dump(data))  # as a merge writes it: not confirmed by her
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Done."}])
    ran = run_cli("role", "run", "builder", "--task", "Write it", cwd=root.path)
    assert ran.returncode == 3 and "sdd trust review" in ran.stderr  # the run itself waits
    # And a stop raised while that file is not hers (the check at the notifier itself):
    stop = stops.Stop(
        id="stop-abc123", run="r", role="builder", kind="approval", action="Create a.txt",
        choices=stops.APPROVAL_CHOICES, origin="person", created_at=time.time(), expires_at=None,
    )  # fmt: skip
    announce(root, stop)
    time.sleep(0.5)
    assert not seen_file.exists()


def test_a_routines_stop_tells_her_its_expiry(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.runner.run import RunRequest, start

    accepted_change(root)
    seen_file = tmp_path / "seen.json"
    set_notify(root, [[sys.executable, str(notifier(tmp_path)), str(seen_file)]])
    script(tmp_path, monkeypatch, [{"tool_calls": [write_call("a.txt")]}, {"say": "Done."}])
    outcome = start(root, RunRequest("builder", "Write", origin="routine"), clock=lambda: 0.0)
    assert outcome.stop is not None
    seen = wait_for(seen_file)
    assert seen["SDD_STOP_EXPIRES"] == "1970-01-01T00:10:00Z"
    assert os.environ.get("SDD_STOP") is None  # told to the command, not to sdd itself
