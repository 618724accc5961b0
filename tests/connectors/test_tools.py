"""connector_read and connector_act, end to end with the scripted provider and the scripted
connector: `@NAME` attaches, reads run with no stop, acts stop and run only when allowed, a
missing record is `missing: <source>`, and the older pull-request and deploy tools go through
connectors too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.runner import stops
from tests.conftest import SddRunner, git
from tests.connectors.core_support import (
    GH_TOKEN,
    TOKEN_VARIABLE,
    calls,
    configure,
    file_keyring,
    scripted,
)
from tests.runner.scripted import accepted_change, add_role, events, script, transcript

__all__ = ["file_keyring"]

ISSUE = {"title": "The export is slow", "body": "It takes a minute for 10 rows."}


def read(operation: str, **args: Any) -> dict[str, Any]:
    return {
        "tool": "connector_read",
        "args": {"connector": "github", "operation": operation, "args": args},
    }


def act(operation: str, purpose: str = "the checks passed", **args: Any) -> dict[str, Any]:
    return {
        "tool": "connector_act",
        "args": {"connector": "github", "operation": operation, "args": args, "purpose": purpose},
    }


@pytest.fixture
def github(root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    entry = scripted(
        tmp_path,
        "github",
        {
            "get_issue": [
                {"when": {"number": 7}, "text": "Issue 7: The export is slow", "data": ISSUE},
                {"missing": True, "source": "issue acme/app#99"},
            ],
            "merge_pull_request": {"text": "Merged acme/app#12 as 3f2a9b1."},
            "get_workflow_run": {"error": "unavailable", "message": "GitHub answered 503"},
        },
        token_env=TOKEN_VARIABLE,
        needs_token=True,
        repo="acme/app",
    )
    configure(root, connectors={"github": entry})
    return entry


def outcome(result: Any) -> dict[str, Any]:
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def tool_results(root: Root, run_id: str) -> list[str]:
    return [str(e["content"]) for e in events(root, run_id) if e["event"] == "tool_result"]


def test_at_name_attaches_the_connector_and_its_tools(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    script(tmp_path, monkeypatch, [{"say": "ok"}, {"say": "ok"}])
    with_it = outcome(sdd("role", "run", "executor", "--task", "Look at @github issue 7", "--json"))
    offered = [t["name"] for t in transcript(tmp_path)[0]["tools"]]
    assert "connector_read" in offered and "connector_act" in offered
    started = events(root, with_it["run"])[0]
    assert started["event"] == "run_started" and started["connectors"] == ["github"]
    user = transcript(tmp_path)[0]["messages"][1]["content"]
    assert "Connectors attached to this run" in user and "get_issue {repo, number}" in user
    assert "never, by any route: create_release" in user
    without = outcome(sdd("role", "run", "executor", "--task", "Look at issue 7", "--json"))
    offered = [t["name"] for t in transcript(tmp_path)[1]["tools"]]
    assert "connector_read" not in offered and "connector_act" not in offered
    assert "connectors" not in events(root, without["run"])[0]


def test_a_role_mention_still_resolves_beside_a_connector(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    add_role(root, "reviewer", produces="review")
    script(tmp_path, monkeypatch, [{"say": "ok"}])
    result = sdd("role", "run", "executor", "--task", "Ask @reviewer about @github issue 7")
    assert result.code == 0, result.stderr
    sent = transcript(tmp_path)[0]["messages"][1]["content"]
    assert "Roles mentioned: @reviewer" in sent and "Connectors attached" in sent


def test_a_read_runs_with_no_stop_and_the_role_reads_the_record(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    script(
        tmp_path,
        monkeypatch,
        [{"tool_calls": [read("get_issue", repo="acme/app", number=7)]}, {"say": "Read it."}],
    )
    result = outcome(sdd("role", "run", "executor", "--task", "Read @github issue 7", "--json"))
    assert result["status"] == "done" and result["exit_code"] == 0
    assert stops.pending(root) == []
    assert tool_results(root, result["run"]) == ["Issue 7: The export is slow"]
    (call,) = calls(tmp_path, "github")
    assert call["operation"] == "get_issue" and call["args"] == {"repo": "acme/app", "number": 7}
    assert call["signed_in"] is True


def test_a_missing_record_is_missing_with_its_source_and_no_field(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    script(
        tmp_path,
        monkeypatch,
        [{"tool_calls": [read("get_issue", repo="acme/app", number=99)]}, {"say": "Missing."}],
    )
    result = outcome(sdd("role", "run", "executor", "--task", "Read @github issue 99", "--json"))
    (said,) = tool_results(root, result["run"])
    assert said.startswith("missing: issue acme/app#99 on github")
    assert "export" not in said and "title" not in said  # nothing of any record


def test_a_connector_failure_is_its_own_words_never_a_value(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    call = read("get_workflow_run", repo="acme/app", run_id=5)
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "It failed."}])
    result = outcome(sdd("role", "run", "executor", "--task", "Check @github run 5", "--json"))
    (said,) = tool_results(root, result["run"])
    assert said == "connector_read failed: GitHub answered 503"


def test_an_act_stops_in_plain_words_and_runs_only_when_allowed(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    accepted_change(root)
    merge = act("merge_pull_request", repo="acme/app", number=12)
    after = read("get_issue", repo="acme/app", number=7)
    script(tmp_path, monkeypatch, [{"tool_calls": [merge]}, {"tool_calls": [after]}, {"say": "ok"}])
    stopped = outcome(sdd("role", "run", "executor", "--task", "Merge via @github", "--json"))
    assert stopped["exit_code"] == 3
    action = stopped["stop"]["action"]
    assert action.startswith("On github: merge pull request acme/app#12")
    assert action.endswith('— because "the checks passed".')
    assert calls(tmp_path, "github") == []  # nothing ran before she answered
    allowed = sdd("allow", stopped["stop"]["id"])
    assert allowed.code == 0, allowed.stderr
    ran = [c["operation"] for c in calls(tmp_path, "github")]
    assert ran == ["merge_pull_request", "get_issue"]  # the resumed run keeps its connector
    logged = events(root, stopped["run"])
    assert any(e["event"] == "action_done" and e["tool"] == "connector_act" for e in logged)


def test_a_denied_act_does_not_run(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    accepted_change(root)
    merge = act("merge_pull_request", repo="acme/app", number=12)
    script(tmp_path, monkeypatch, [{"tool_calls": [merge]}, {"say": "Not merged."}])
    stopped = outcome(sdd("role", "run", "executor", "--task", "Merge via @github", "--json"))
    assert sdd("deny", stopped["stop"]["id"]).code == 0
    assert calls(tmp_path, "github") == []
    assert not any(e["event"] == "action_done" for e in events(root, stopped["run"]))


def test_an_act_on_a_missing_record_is_not_done(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    accepted_change(root)
    configure(
        root,
        connectors={
            "github": {
                **github,
                "file": scripted(
                    tmp_path, "github", {"merge_pull_request": {"missing": True,
                                                                "source": "pull request #404"}}
                )["file"],
            }
        },
    )  # fmt: skip
    merge = act("merge_pull_request", repo="acme/app", number=404)
    script(tmp_path, monkeypatch, [{"tool_calls": [merge]}, {"say": "It is not there."}])
    stopped = outcome(sdd("role", "run", "executor", "--task", "Merge via @github", "--json"))
    assert sdd("allow", stopped["stop"]["id"]).code == 0
    logged = events(root, stopped["run"])
    failed = [e for e in logged if e["event"] == "action_failed"]
    assert failed and failed[0]["reason"].startswith("missing: pull request #404 on github")
    assert not any(e["event"] == "action_done" for e in logged)


def test_a_role_whose_tools_list_leaves_connectors_out_gets_none_and_a_warning(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    add_role(root, "narrow", produces="other", extra="tools: [read_file]\n")
    script(tmp_path, monkeypatch, [{"say": "ok"}])
    result = outcome(sdd("role", "run", "narrow", "--task", "Read @github issue 7", "--json"))
    offered = [t["name"] for t in transcript(tmp_path)[0]["tools"]]
    assert offered == ["read_file"]
    warnings = [e["message"] for e in events(root, result["run"]) if e["event"] == "warning"]
    assert any("leaves out connector_read" in w for w in warnings)


# -- the older tools, through connectors ------------------------------------------------------


def test_merge_pull_request_goes_through_the_code_host_when_allowed(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    accepted_change(root)
    call = {"tool": "merge_pull_request", "args": {"number": 12}}
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "Merged."}])
    stopped = outcome(sdd("role", "run", "executor", "--task", "Merge 12", "--json"))
    assert stopped["stop"]["action"] == "Merge pull request #12 on github (acme/app)."
    assert calls(tmp_path, "github") == []
    assert sdd("allow", stopped["stop"]["id"]).code == 0
    (merged,) = calls(tmp_path, "github")
    assert merged["operation"] == "merge_pull_request"
    assert merged["args"] == {"repo": "acme/app", "number": 12}
    assert tool_results(root, stopped["run"]) == ["Merged acme/app#12 as 3f2a9b1."]


def test_open_pull_request_takes_the_repository_from_the_origin_remote(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    entry = scripted(tmp_path, "github", {"open_pull_request": {"text": "Opened #13."}})
    configure(root, connectors={"github": entry})
    git(
        root.path,
        "remote",
        "add",
        "origin",
        "https://x-token:sekrit-value@github.com/acme/shop.git",
    )
    call = {"tool": "open_pull_request", "args": {"title": "Faster export", "head": "fast"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "Opened."}])
    stopped = outcome(sdd("role", "run", "executor", "--task", "Open it", "--json"))
    assert sdd("allow", stopped["stop"]["id"]).code == 0
    (opened,) = calls(tmp_path, "github")
    assert opened["args"] == {
        "repo": "acme/shop", "title": "Faster export", "head": "fast", "base": "main"
    }  # fmt: skip


def test_deploy_goes_through_its_configured_target_when_allowed(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    entry = scripted(tmp_path, "jenkins", {"trigger_build": {"text": "Queued build #41."}},
                     like="jenkins")  # fmt: skip
    configure(
        root,
        connectors={"jenkins": entry},
        deploy={"production": {"connector": "jenkins", "job": "deploy-prod",
                               "parameters": {"ENV": "prod"}}},
    )  # fmt: skip
    call = {"tool": "deploy", "args": {"target": "production"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "Deployed."}])
    stopped = outcome(sdd("role", "run", "executor", "--task", "Ship it", "--json"))
    assert stopped["stop"]["action"] == (
        "Deploy to production: on jenkins, start Jenkins job deploy-prod (with parameters="
        '{"ENV": "prod"}).'
    )
    assert sdd("allow", stopped["stop"]["id"]).code == 0
    (ran,) = calls(tmp_path, "jenkins")
    assert ran["operation"] == "trigger_build"
    assert ran["args"] == {"job": "deploy-prod", "parameters": {"ENV": "prod"}}


def test_deploy_to_a_target_nobody_configured_says_so_and_does_nothing(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    accepted_change(root)
    call = {"tool": "deploy", "args": {"target": "moon"}}
    script(tmp_path, monkeypatch, [{"tool_calls": [call]}, {"say": "No."}])
    stopped = outcome(sdd("role", "run", "executor", "--task", "Ship it", "--json"))
    assert "(no such deploy target is configured)" in stopped["stop"]["action"]
    assert sdd("allow", stopped["stop"]["id"]).code == 0
    (said,) = tool_results(root, stopped["run"])
    assert "no deploy target 'moon' is configured" in said


def test_always_allow_saves_the_exact_act_and_the_same_act_then_runs_without_a_stop(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, github: Any
) -> None:
    accepted_change(root)
    merge = act("merge_pull_request", repo="acme/app", number=12)
    other = act("merge_pull_request", purpose="another reason", repo="acme/app", number=13)
    script(tmp_path, monkeypatch, [{"tool_calls": [merge]}, {"say": "ok"}])
    add_role(root, "merger", produces="other")
    first = outcome(sdd("role", "run", "merger", "--task", "Merge via @github", "--json"))
    assert sdd("allow", first["stop"]["id"], "--always").code == 0
    script(tmp_path, monkeypatch, [{"tool_calls": [merge]}, {"tool_calls": [other]}], name="s2")
    again = outcome(sdd("role", "run", "merger", "--task", "Merge via @github", "--json"))
    assert again["exit_code"] == 3  # the same act ran under the rule; #13 stops
    assert "acme/app#13" in again["stop"]["action"]
    assert [c["args"]["number"] for c in calls(tmp_path, "github")] == [12, 12]
