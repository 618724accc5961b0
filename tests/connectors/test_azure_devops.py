"""The Azure DevOps connector against a loopback Azure DevOps speaking the REST API 7.1's wire
format (fixtures in fixtures/azure-devops/ name the documentation page each follows)."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    NotSignedIn,
    Refused,
    Result,
    Session,
    Unavailable,
)
from sdd_git.connectors.builtin.azure_devops import AzureDevOpsConnector
from sdd_git.connectors.operations import TABLE
from tests.connectors.loopback import (
    Loopback,
    Reply,
    Seen,
    closed_port_url,
    fixture,
    fixture_text,
    json_reply,
    text_reply,
)

TOKEN = "azpat" + "LoopbackPersonalAccessToken" + "7" * 20
PROJECT = "/fabrikam/Fabrikam-Fiber-Git/_apis"
SERVICE = "azure-devops"


def _comments(seen: Seen, match: re.Match[str]) -> Reply:
    if seen.param("continuationToken") == "abc123":
        return json_reply(fixture(SERVICE, "comments_page2"))
    return json_reply(
        fixture(SERVICE, "comments_page1"), headers={"x-ms-continuationtoken": "abc123"}
    )


def routes() -> list[Any]:
    return [
        ("GET", rf"{PROJECT}/wit/workitems/42", json_reply(fixture(SERVICE, "work_item_42"))),
        ("GET", rf"{PROJECT}/wit/workItems/42/comments", _comments),
        ("GET", rf"{PROJECT}/build/builds/301", json_reply(fixture(SERVICE, "build_301_failed"))),
        ("GET", rf"{PROJECT}/build/builds/302", json_reply(fixture(SERVICE, "build_302_running"))),
        ("GET", rf"{PROJECT}/build/builds/303",
         json_reply(fixture(SERVICE, "build_303_succeeded"))),
        ("GET", rf"{PROJECT}/build/builds/301/timeline",
         json_reply(fixture(SERVICE, "timeline_301"))),
        ("GET", rf"{PROJECT}/build/builds/301/logs/7",
         text_reply(fixture_text(SERVICE, "log_7.txt"))),
        ("GET", rf"{PROJECT}/build/builds/301/logs/8",
         json_reply({"count": 2, "value": ["step one", "##[error]step two failed"]})),
        ("GET", rf"{PROJECT}/build/builds/999",
         json_reply(fixture(SERVICE, "error_404_build"), 404)),
        ("POST", rf"{PROJECT}/wit/workItems/42/comments",
         json_reply(fixture(SERVICE, "comment_added"))),
        ("PATCH", rf"{PROJECT}/wit/workitems/42",
         json_reply(fixture(SERVICE, "work_item_updated"))),
    ]  # fmt: skip


@pytest.fixture
def azure() -> Iterator[Loopback]:
    with Loopback(routes(), fallback=json_reply(fixture(SERVICE, "error_404"), 404)) as server:
        yield server


def session(url: str, token: str | None = TOKEN, **settings: Any) -> Session:
    return Session(name=SERVICE, base_url=url, token=token,
                   settings={"organization": "fabrikam", **settings})  # fmt: skip


def call(server: Loopback, operation: str, **args: Any) -> Result:
    args.setdefault("project", "Fabrikam-Fiber-Git")
    return AzureDevOpsConnector().call(session(server.url), operation, args)


def assert_signed(seen: Seen) -> None:
    expected = base64.b64encode(f":{TOKEN}".encode()).decode()
    assert seen.headers["authorization"] == f"Basic {expected}"
    assert TOKEN not in seen.everything_but_auth() and expected not in seen.everything_but_auth()


def test_operations_are_its_rows_of_the_table() -> None:
    assert dict(AzureDevOpsConnector().operations()) == TABLE[SERVICE]


def test_a_work_item_reads_with_its_comments_over_continuation_tokens(azure: Loopback) -> None:
    result = call(azure, "get_work_item", id=42)
    text = result.text
    assert text.startswith(
        "work item 42 of Fabrikam-Fiber-Git: Export drops the header row (Bug, Active)"
    )
    assert "assigned to Jamal Hartnett" in text and "tags export; csv" in text
    assert "The first line of every CSV export is missing." in text and "- since 2.3" in text
    assert "<b>" not in text
    assert "comments, newest first: 3" in text
    assert "- Jamal Hartnett on 2024-03-03T10:00:00Z: Reproduced on main." in text
    assert "Filed from support ticket 991." in text
    assert result.data["title"] == "Export drops the header row"
    item, first, second = azure.requests
    assert (item.raw_path, item.param("api-version")) == (f"{PROJECT}/wit/workitems/42", "7.1")
    assert (
        first.param("api-version") == "7.1-preview.4" and first.param("continuationToken") is None
    )
    assert second.param("continuationToken") == "abc123"
    for seen in azure.requests:
        assert_signed(seen)


def test_a_failed_build_reads_with_its_failed_task_and_log_excerpt(azure: Loopback) -> None:
    result = call(azure, "get_build", build_id=301)
    text = result.text
    assert "finished: failed" in text
    assert "failed tasks: 1" in text
    assert "- Run tests (log 7): Bash exited with code '1'." in text
    assert 'Assert.Equal() Failure: Expected: "id,name" Actual: "1,Ada"' in text
    assert "##[error]Bash exited with code '1'." in text
    assert "2024-03-05T10:01" not in text
    assert [s.raw_path for s in azure.requests] == [
        f"{PROJECT}/build/builds/301", f"{PROJECT}/build/builds/301/timeline",
        f"{PROJECT}/build/builds/301/logs/7",
    ]  # fmt: skip
    assert azure.requests[2].headers["accept"] == "text/plain"


def test_a_build_in_progress_is_said_not_finished(azure: Loopback) -> None:
    result = call(azure, "get_build", build_id=302)
    assert "not finished: status inProgress; no result yet" in result.text
    assert "succeeded" not in result.text and result.data["finished"] is False
    assert len(azure.requests) == 1


def test_a_succeeded_build_reads_without_a_timeline(azure: Loopback) -> None:
    assert "finished: succeeded" in call(azure, "get_build", build_id=303).text
    assert len(azure.requests) == 1


def test_a_build_log_in_either_form(azure: Loopback) -> None:
    text_log = call(azure, "get_build_log", build_id=301, log_id=7)
    assert text_log.text.startswith("log 7 of build 301 of Fabrikam-Fiber-Git: 18 lines;")
    json_log = call(azure, "get_build_log", build_id=301, log_id=8)
    assert "2 | ##[error]step two failed" in json_log.text


def test_a_404_is_missing_naming_the_record(azure: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(azure, "get_work_item", id=999)
    assert caught.value.source == "work item 999 of Fabrikam-Fiber-Git on azure-devops"
    assert "TF401232" not in str(caught.value)
    with pytest.raises(Missing, match="build 999 of Fabrikam-Fiber-Git"):
        call(azure, "get_build", build_id=999)


def test_a_401_or_a_203_sign_in_page_is_not_signed_in() -> None:
    page = text_reply("<html><head><title>Sign In</title></head></html>", 203,
                      content_type="text/html; charset=utf-8")  # fmt: skip
    for reply in (Reply(401, None), page):
        with Loopback([("GET", r".*", reply)]) as server, pytest.raises(NotSignedIn):
            call(server, "get_work_item", id=42)


def test_a_5xx_or_a_closed_port_is_unavailable() -> None:
    with (
        Loopback([("GET", r".*", json_reply(fixture(SERVICE, "error_500"), 503))]) as server,
        pytest.raises(Unavailable, match="VS402337"),
    ):
        call(server, "get_build", build_id=301)
    with pytest.raises(Unavailable):
        AzureDevOpsConnector().call(
            session(closed_port_url()), "get_build", {"project": "P", "build_id": 1}
        )


def test_no_organization_is_said_before_anything_is_sent(azure: Loopback) -> None:
    bare = Session(name=SERVICE, base_url=azure.url, token=TOKEN, settings={})
    with pytest.raises(ConnectorError, match="organization"):
        AzureDevOpsConnector().call(bare, "get_work_item", {"project": "P", "id": 42})
    assert azure.requests == []


def test_a_comment_is_sent_escaped_as_documented(azure: Loopback) -> None:
    result = call(azure, "comment_work_item", id=42, text="Fixed in <b>2.4</b> @Jamal")
    assert result.text == "commented on work item 42 of Fabrikam-Fiber-Git (comment 4)"
    [seen] = azure.requests
    assert (seen.method, seen.raw_path) == ("POST", f"{PROJECT}/wit/workItems/42/comments")
    assert seen.param("api-version") == "7.1-preview.4"
    assert seen.json() == {"text": "<p>Fixed in &lt;b&gt;2.4&lt;/b&gt; @Jamal</p>"}
    assert_signed(seen)


def test_an_update_is_a_json_patch(azure: Loopback) -> None:
    result = call(
        azure, "update_work_item", id=42, fields={"System.Title": "Export drops the CSV header row"}
    )
    assert result.text == "changed System.Title of work item 42 of Fabrikam-Fiber-Git (revision 8)"
    [seen] = azure.requests
    assert (seen.method, seen.raw_path) == ("PATCH", f"{PROJECT}/wit/workitems/42")
    assert seen.headers["content-type"] == "application/json-patch+json"
    assert seen.param("api-version") == "7.1"
    assert seen.json() == [
        {"op": "add", "path": "/fields/System.Title", "value": "Export drops the CSV header row"}
    ]


def test_a_state_that_mirrors_a_stage_is_never_sent(azure: Loopback) -> None:
    with pytest.raises(ConnectorError):
        call(azure, "update_work_item", id=42, fields={"System.State": "Done"})
    assert azure.requests == []


@pytest.mark.parametrize(
    ("operation", "args"),
    [
        ("get_work_item", {"project": "../_apis/projects", "id": 42}),
        ("get_work_item", {"project": "Fabrikam/../../x", "id": 42}),
        ("get_work_item", {"project": "Fabrikam?x=1", "id": 42}),
        ("get_work_item", {"project": "Fabrikam#x", "id": 42}),
        ("get_work_item", {"project": "%2e%2e", "id": 42}),
        ("get_work_item", {"project": "..", "id": 42}),
        ("get_work_item", {"id": "42/../../../_apis/projects"}),
        ("get_work_item", {"id": "42?$expand=all"}),
        ("get_build_log", {"build_id": 301, "log_id": "7/../../../x"}),
        ("get_build", {"build_id": "%2e%2e"}),
        ("update_work_item", {"id": 42, "fields": {"System.Title/../x": "y"}}),
        ("update_work_item", {"id": 42, "fields": {"System.Title": {"op": "remove"}}}),
    ],
)
def test_an_argument_cannot_reach_another_endpoint(
    azure: Loopback, operation: str, args: dict[str, Any]
) -> None:
    with pytest.raises(ConnectorError):
        call(azure, operation, **args)
    assert azure.requests == []


def test_a_refused_update_says_the_service_reason() -> None:
    refused = json_reply({"message": "TF401326: Invalid field status 'ReadOnly' for field "
                                     "'System.CreatedDate'.", "typeKey": "RuleValidationException"},
                         400)  # fmt: skip
    with Loopback([("PATCH", r".*", refused)]) as server, pytest.raises(Refused, match="TF401326"):
        call(server, "update_work_item", id=42, fields={"System.CreatedDate": "2020-01-01"})
