"""A routine that could not run says so (issue 22, 3): fired by a real merge through the real hook
worker with no model key, it shows in `sdd routine history`, in `sdd stops` (what did not run,
why, and what she can do) and on her page's routine history, not only in the worker's log."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git.events import hooks as core
from sdd_git.events.queue import done_folder
from sdd_git.root import Root
from sdd_git.routines.hookindex import write_index
from tests.conftest import SddRunner
from tests.events.hookhelp import (
    ROLE,
    event_files,
    merge_feature,
    product,
    routine,
    script,
    wait_until,
    worker_idle,
)

REASON = "no model key: set OPENAI_API_KEY (the openai service needs it)"


@pytest.fixture
def repo(root: Root, monkeypatch: pytest.MonkeyPatch) -> Iterator[Root]:
    """The product, committed, hooks installed, one routine on merges, and no model key."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SDD_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    product(root)
    core.install(root)
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    yield root
    worker_idle(root)


def _merged_and_done(repo: Root) -> dict[str, Any]:
    merge_feature(repo)
    [event] = [e for e in event_files(repo) if e["kind"] == "pr-merged"]
    wait_until((done_folder(repo) / f"{event['id']}.json").exists, what="the event's end")
    worker_idle(repo)
    return event


def _waiting(sdd: SddRunner) -> list[dict[str, Any]]:
    listed = sdd("stops", "--json")
    assert listed.code == 0, listed.stderr
    found = json.loads(listed.stdout)
    assert isinstance(found, list)
    return found


def test_a_routine_that_could_not_run_shows_in_history_stops_and_her_page(
    sdd: SddRunner, repo: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = _merged_and_done(repo)

    history = json.loads(sdd("routine", "history", "on-merge", "--json").stdout)
    assert [(r["event"], r["status"], r["reason"]) for r in history] == [
        (event["id"], "could-not-run", REASON)
    ]
    shown = sdd("routine", "history", "on-merge")
    assert "could not run" in shown.stdout and REASON in shown.stdout

    [item] = _waiting(sdd)
    assert item["kind"] == "could-not-run" and item["origin"] == "routine"
    assert (item["role"], item["run"], item["expires_at"]) == (ROLE, history[0]["run"], None)
    assert item["choices"] == ["fire again", "dismiss"]
    assert item["action"].startswith(
        f"The routine {ROLE}/on-merge did not run for event {event['id']}: {REASON} (export "
        "OPENAI_API_KEY=... (or point base_url at a local server))."
    )
    assert f"sdd routine fire {ROLE}/on-merge --event " in item["action"]
    assert f"sdd stops dismiss {item['id']}" in item["action"]
    said = sdd("stops")
    assert f"{item['id']}  {ROLE}  could not run  from routine: The routine" in said.stdout

    detail = sdd("stops", "show", item["id"])
    assert detail.code == 0 and item["action"] in detail.stdout
    refused = sdd("allow", item["id"])  # no approval: nothing to allow
    assert refused.code == 2 and "there is nothing to allow or deny" in refused.stderr

    from starlette.testclient import TestClient

    from sdd_git.page.app import build_app

    page = TestClient(build_app(repo)).get(f"/routines/{ROLE}/on-merge/history")
    assert page.status_code == 200
    assert f"it could not run: {REASON}" in page.text.replace("&#39;", "'")

    # Once the cause is fixed, the command it names runs it; it waits no more.
    monkeypatch.setenv("SDD_PROVIDER", script(tmp_path, [{"say": "Read the merge."}]))
    again = sdd(*shlex.split(item["refire"])[1:])
    assert again.code == 0, again.stderr
    assert "already ran" not in again.stderr
    assert _waiting(sdd) == []
    statuses = [
        r["status"] for r in json.loads(sdd("routine", "history", "on-merge", "--json").stdout)
    ]
    assert sorted(statuses) == ["could-not-run", "done"]


def test_dismissing_it_leaves_sdd_stops_and_the_history_keeps_it(
    sdd: SddRunner, repo: Root
) -> None:
    _merged_and_done(repo)
    [item] = _waiting(sdd)
    dismissed = sdd("stops", "dismiss", item["id"])
    assert dismissed.code == 0, dismissed.stderr
    assert f"dismissed: {ROLE}/on-merge did not run" in dismissed.stderr
    assert _waiting(sdd) == []
    [run] = json.loads(sdd("routine", "history", "on-merge", "--json").stdout)
    assert run["status"] == "could-not-run"
    log = (repo.sdd / "role-runs" / f"{run['run']}.jsonl").read_text()
    assert '"event": "dismissed"' in log
    assert sdd("stops", "dismiss", item["id"]).code == 1  # nothing left to dismiss
