"""Drafts for chat: a role's Slack message is kept for the person, in her conversation with the
role, and leaves the machine only when she runs `sdd send` (a person command, refused inside a
run). The scripted connector's call log proves what was posted, and when."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdd_git.roles.conversation import messages
from sdd_git.root import Root
from sdd_git.runner import stops
from tests.conftest import SddRunner
from tests.connectors.core_support import calls, configure, file_keyring, scripted
from tests.runner.scripted import events, script

__all__ = ["file_keyring"]

POST = {
    "tool": "connector_read",
    "args": {
        "connector": "slack",
        "operation": "post_message",
        "args": {"channel": "releases", "text": "Export is 10x faster in 1.4."},
    },
}


@pytest.fixture
def slack(root: Root, tmp_path: Path) -> dict[str, Any]:
    entry = scripted(tmp_path, "slack", {}, like="slack", send_draft={"text": "ok: ts 1712.0042"})
    configure(root, connectors={"slack": entry})
    return entry


def draft_by_role(sdd: SddRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    script(tmp_path, monkeypatch, [{"tool_calls": [POST]}, {"say": "Drafted it for you."}])
    result = sdd("role", "run", "executor", "--task", "Tell @slack #releases", "--json")
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_slack_message_is_a_draft_and_is_not_posted_until_sdd_send(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack: Any
) -> None:
    outcome = draft_by_role(sdd, tmp_path, monkeypatch)
    assert outcome["status"] == "done" and stops.pending(root) == []  # no stop: nothing left
    assert calls(tmp_path, "slack") == []  # nothing reached Slack
    saved = json.loads((root.local / "drafts" / "DR-0001.json").read_text())
    assert saved["channel"] == "releases" and saved["text"] == "Export is 10x faster in 1.4."
    assert saved["role"] == "executor" and saved["run"] == outcome["run"]
    said = [m for m in messages(root, "executor") if m.get("draft") == "DR-0001"]
    assert said and said[0]["from"] == "executor"
    assert said[0]["text"].startswith("Draft for #releases on slack:\nExport is 10x faster")
    assert said[0]["text"].endswith("— send it with: sdd send DR-0001")
    result = next(e for e in events(root, outcome["run"]) if e["event"] == "tool_result")
    assert "it was not posted" in result["content"]

    listed = sdd("drafts", "--json")
    assert listed.code == 0
    (row,) = json.loads(listed.stdout)
    assert row["id"] == "DR-0001" and row["text"] == "Export is 10x faster in 1.4."
    assert (row["connector"], row["channel"], row["role"]) == ("slack", "releases", "executor")

    sent = sdd("send", "DR-0001")
    assert sent.code == 0, sent.stderr
    assert sent.stdout.strip() == "DR-0001"
    (posted,) = calls(tmp_path, "slack")
    assert posted["operation"] == "send_draft"
    assert posted["args"] == {"channel": "releases", "text": "Export is 10x faster in 1.4."}
    assert json.loads(sdd("drafts", "--json").stdout) == []
    (kept,) = json.loads(sdd("drafts", "--json", "--all").stdout)
    assert kept["status"] == "sent" and kept["sent"] == "ok: ts 1712.0042"


def test_a_draft_is_posted_once(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack: Any
) -> None:
    draft_by_role(sdd, tmp_path, monkeypatch)
    assert sdd("send", "DR-0001").code == 0
    again = sdd("send", "DR-0001")
    assert again.code == 1 and "already sent" in again.stderr
    assert len(calls(tmp_path, "slack")) == 1


def test_sdd_send_refuses_inside_a_run(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack: Any
) -> None:
    draft_by_role(sdd, tmp_path, monkeypatch)
    monkeypatch.setenv("SDD_RUN_ID", "run-someone")
    refused = sdd("send", "DR-0001")
    assert refused.code == 1 and "inside a role run" in refused.stderr
    assert calls(tmp_path, "slack") == []
    assert json.loads((root.local / "drafts" / "DR-0001.json").read_text())["status"] == "waiting"


def test_sending_a_draft_that_is_not_there_says_so(sdd: SddRunner, slack: Any) -> None:
    missing = sdd("send", "DR-0042")
    assert missing.code == 1 and "no draft DR-0042" in missing.stderr
    bad = sdd("send", "../../config")
    assert bad.code == 2 and "not a draft id" in bad.stderr
    assert sdd("drafts").stderr.startswith("no drafts waiting")
