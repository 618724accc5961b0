"""The connector commands from the command line: `sdd connectors` statuses, and `sdd change new
--from` starting a change from a tracker issue (read through the connector, nothing written
back; a missing issue creates nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sdd_git.connectors.signin import store_token
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.connectors.core_support import (
    GH_TOKEN,
    TOKEN_VARIABLE,
    calls,
    configure,
    file_keyring,
    scripted,
)

__all__ = ["file_keyring"]


def statuses(sdd: SddRunner) -> dict[str, dict[str, object]]:
    result = sdd("connectors", "--json")
    assert result.code == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_connectors_json_lists_the_services_and_tells_configured_from_not(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = statuses(sdd)
    assert {"github", "gitlab", "jenkins", "jira", "slack", "teams"} <= set(before)
    assert all(row["status"] == "not configured" for row in before.values())
    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    configure(
        root,
        connectors={
            "github": {"token_env": TOKEN_VARIABLE},
            "jira": {"base_url": "https://acme.atlassian.net"},
            "slack": {},
            "jenkins": {},
        },
    )
    store_token("slack", "xoxb-4242-1717-QwErTyUiOpAsDfGh")
    after = statuses(sdd)
    assert after["github"]["status"] == f"configured, signed in (env {TOKEN_VARIABLE})"
    assert after["jira"]["status"] == "configured, no token"
    assert after["slack"]["status"] == "configured, signed in (keyring)"
    assert after["jenkins"]["status"] == "configured, no base_url"
    assert after["teams"]["status"] == "not configured"
    assert after["github"]["status"] != before["github"]["status"]
    shown = sdd("connectors")
    assert shown.code == 0 and "configured, signed in" in shown.stdout
    assert GH_TOKEN not in shown.stdout + json.dumps(after)


def test_help_lists_the_connector_commands(sdd: SddRunner) -> None:
    shown = sdd("--help").stdout
    for command in ("connect", "disconnect", "connectors", "drafts", "send"):
        assert f"  {command} " in shown, command


@pytest.fixture
def tracker(root: Root, tmp_path: Path) -> None:
    configure(
        root,
        connectors={
            "github": scripted(
                tmp_path,
                "github",
                {
                    "get_issue": [
                        {
                            "when": {"number": 34},
                            "data": {"number": 34, "title": "Export is slow",
                                     "body": "It takes a minute for 10 rows.\nUse ghp_" + "q" * 36},
                        },
                        {"missing": True, "source": "issue acme/app#35"},
                    ]
                },
                repo="acme/app",
            ),
            "jira": scripted(
                tmp_path,
                "jira",
                {"get_issue": {"data": {"key": "ABC-12", "fields": {
                    "summary": "Receipts vanish",
                    "description": {"type": "doc", "version": 1, "content": [
                        {"type": "paragraph", "content": [
                            {"type": "text", "text": "After upload the receipt is gone."}]}]},
                }}}},
                like="jira",
            ),
        },
    )  # fmt: skip


def test_change_new_from_a_github_issue_starts_with_its_words(
    sdd: SddRunner, root: Root, tmp_path: Path, tracker: None
) -> None:
    result = sdd("change", "new", "--from", "github:#34")
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "CH-0001"
    change = yaml.safe_load((root.change_dir("CH-0001") / "change.yaml").read_text())
    assert change["source"] == "github:acme/app#34"
    assert change["title"] == "Export is slow"
    assert change["words"] == "Export is slow\n\nIt takes a minute for 10 rows.\nUse [secret]"
    spec = root.spec_file("SPEC-0001").read_text()
    assert "It takes a minute" in spec and "ghp_" not in spec
    (read,) = calls(tmp_path, "github")  # one read, nothing written back
    assert read["operation"] == "get_issue" and read["args"] == {"repo": "acme/app", "number": 34}
    shown = json.loads(sdd("change", "show", "CH-0001", "--json").stdout)
    assert shown["words"].startswith("Export is slow")


def test_change_new_from_a_jira_issue_reads_its_document_text(
    sdd: SddRunner, root: Root, tracker: None
) -> None:
    result = sdd("change", "new", "--from", "jira:ABC-12")
    assert result.code == 0, result.stderr
    change = yaml.safe_load((root.change_dir("CH-0001") / "change.yaml").read_text())
    assert change["source"] == "jira:ABC-12"
    assert change["words"] == "Receipts vanish\n\nAfter upload the receipt is gone."


def test_change_new_from_a_missing_issue_creates_nothing(
    sdd: SddRunner, root: Root, tracker: None
) -> None:
    before = sorted(p.name for p in root.changes.iterdir()), sorted(root.specs.iterdir())
    result = sdd("change", "new", "--from", "github:acme/app#35")
    assert result.code == 1
    assert "missing: issue acme/app#35 on github" in result.stderr
    assert (sorted(p.name for p in root.changes.iterdir()), sorted(root.specs.iterdir())) == before


def test_change_new_from_takes_no_words_and_refuses_inside_a_run(
    sdd: SddRunner, root: Root, tmp_path: Path, tracker: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    both = sdd("change", "new", "my words", "--from", "jira:ABC-12")
    assert both.code == 2 and "--from takes the issue's words" in both.stderr
    assert sdd("change", "new").code == 2
    assert sdd("change", "new", "--from", "nonsense").code == 2
    monkeypatch.setenv("SDD_RUN_ID", "run-x")
    inside = sdd("change", "new", "--from", "jira:ABC-12")
    assert inside.code == 1 and "inside a role run" in inside.stderr
    assert calls(tmp_path, "jira") == []  # refused before the read
