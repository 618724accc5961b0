"""The Asana connector against a loopback Asana (REST 1.0 wire format: `data` envelopes,
`errors` bodies, `next_page.offset` pagination; fixtures in fixtures/asana/): a task reads with
every page of its comments, a 404 or 403 is missing, a 401 is a sign-in to renew, completing a
task or setting a custom field that mirrors a stage is refused before the PUT, and no gid can
reach another endpoint."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.connectors.base import ConnectorError, Missing, NotSignedIn, Refused, Session
from sdd_git.connectors.builtin import asana
from sdd_git.connectors.builtin.asana import AsanaConnector
from sdd_git.connectors.operations import TABLE, classify
from tests.connectors.loopback import (
    Reply,
    Route,
    Seen,
    fixture,
)
from tests.connectors.loopback_trackers import Loopback, signed_in

TOKEN = "2/1200000000000001/1204567890999999:0b5e3a1f9c8d7e6f5a4b3c2d1e0f9a8b"
API = "/api/1.0"
TASK = "1204567890123456"
HIDDEN = "1204567890000403"
QA_STAGE, PASSED = "1200000000000401", "1200000000000421"
COLUMN, ACCEPTED = "1200000000000402", "1200000000000431"
PRIORITY, HIGH = "1200000000000400", "1200000000000410"


def _routes() -> list[Route]:
    guarded = signed_in(f"Bearer {TOKEN}", Reply(401, fixture("asana", "error_401")))

    def task(seen: Seen, match: re.Match[str]) -> Reply:
        if "enum_options" in (seen.param("opt_fields") or ""):
            return Reply(200, fixture("asana", "task_custom_fields"))
        return Reply(200, fixture("asana", f"task_{TASK}"))

    def stories(seen: Seen, match: re.Match[str]) -> Reply:
        return Reply(
            200, fixture("asana", "stories_page2" if seen.param("offset") else "stories_page1")
        )

    def create(seen: Seen, match: re.Match[str]) -> Reply:
        if seen.json()["data"]["projects"] == ["999"]:
            return Reply(400, fixture("asana", "error_400"))
        return Reply(201, fixture("asana", "task_created"))

    return [
        ("GET", f"{API}/tasks/{TASK}", guarded(task)),
        ("PUT", f"{API}/tasks/{TASK}",
         guarded(lambda s, m: Reply(200, fixture("asana", "task_updated")))),
        ("GET", f"{API}/tasks/{TASK}/stories", guarded(stories)),
        ("POST", f"{API}/tasks/{TASK}/stories",
         guarded(lambda s, m: Reply(201, fixture("asana", "story_created")))),
        ("POST", f"{API}/tasks", guarded(create)),
        ("GET", f"{API}/tasks/{HIDDEN}",
         guarded(lambda s, m: Reply(403, {"errors": [{"message": "Forbidden"}]}))),
    ]  # fmt: skip


@pytest.fixture
def server() -> Iterator[Loopback]:
    with Loopback(_routes(), fallback=Reply(404, fixture("asana", "error_404"))) as running:
        yield running


def call(server: Loopback, operation: str, token: str | None = TOKEN, **args: Any) -> Any:
    return AsanaConnector().call(Session("asana", server.url + API, token), operation, args)


def test_the_connector_implements_exactly_its_rows_of_the_table() -> None:
    assert AsanaConnector().operations() == TABLE["asana"]


def test_get_task_reads_the_facts_and_every_page_of_comments(server: Loopback) -> None:
    result = call(server, "get_task", task=TASK)

    assert result.data["name"] == "Make the CSV export stream"
    assert result.data["assignee"] == "Ada Lovelace"
    assert result.data["completed"] is False
    assert result.data["places"] == ["Expenses / Doing"]
    assert "Priority: High" in result.text
    assert result.data["notes"].startswith("Exports of 10 rows take a minute.")
    assert [c["text"] for c in result.data["comments"]] == [
        "Reproduced with 10 rows.", "Streaming fixes it locally."
    ]  # the system story ("assigned to ...") is not a comment  # fmt: skip
    task, first, second = server.requests
    assert task.raw_path == f"{API}/tasks/{TASK}"
    assert "custom_fields.display_value" in (task.param("opt_fields") or "")
    assert first.raw_path == second.raw_path == f"{API}/tasks/{TASK}/stories"
    assert first.param("offset") is None and first.param("limit") == str(asana.STORIES_PAGE)
    assert second.param("offset") == "eyJ0eXAiOJiKV1iQLCJhbGciOiJIUzI1NiJ9"


def test_the_token_travels_only_in_the_authorization_header(server: Loopback) -> None:
    call(server, "get_task", task=TASK)
    call(server, "comment_task", task=TASK, text="hello")
    for seen in server.requests:
        assert seen.headers["authorization"] == f"Bearer {TOKEN}"
        assert TOKEN not in seen.everything_but_auth()


def test_a_404_or_a_task_hidden_from_the_account_is_missing(server: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(server, "get_task", task="1204567890000000")
    assert caught.value.source == "Asana task 1204567890000000 on asana"
    assert "Unknown object" not in str(caught.value)
    with pytest.raises(Missing, match=f"Asana task {HIDDEN} on asana"):
        call(server, "get_task", task=HIDDEN)


def test_a_refused_token_is_not_signed_in(server: Loopback) -> None:
    with pytest.raises(NotSignedIn, match="Not Authorized"):
        call(server, "get_task", token="1/bad", task=TASK)


def test_an_errors_body_is_refused_with_asanas_words(server: Loopback) -> None:
    with pytest.raises(Refused, match="Not a valid gid"):
        call(server, "create_task", project="999", name="x")


def test_completing_a_task_is_refused_before_any_request(server: Loopback) -> None:
    with pytest.raises(ConnectorError, match="completed"):
        call(server, "update_task", task=TASK, fields={"completed": True})
    assert server.requests == []


@pytest.mark.parametrize(
    ("field", "option", "named"),
    [(QA_STAGE, PASSED, "QA stage"), (COLUMN, ACCEPTED, "Board column")],
)
def test_a_custom_field_mirroring_a_stage_is_refused_once_resolved(
    server: Loopback, field: str, option: str, named: str
) -> None:
    fields = {"custom_fields": {field: option}}
    assert classify("asana", "update_task", {"task": TASK, "fields": fields}).kind == "act"

    with pytest.raises(ConnectorError, match=named):
        call(server, "update_task", task=TASK, fields=fields)

    [seen] = server.requests
    assert (seen.method, seen.raw_path) == ("GET", f"{API}/tasks/{TASK}")
    assert server.seen("PUT") == []


def test_an_ordinary_update_puts_the_data_envelope(server: Loopback) -> None:
    fields = {"custom_fields": {PRIORITY: HIGH}, "due_on": "2024-06-15"}
    result = call(server, "update_task", task=TASK, fields=fields)

    [put] = server.seen("PUT")
    assert put.raw_path == f"{API}/tasks/{TASK}"
    assert put.json() == {"data": fields}
    assert result.text == f"changed custom_fields, due_on of task {TASK}"


def test_create_and_comment_send_the_documented_bodies(server: Loopback) -> None:
    made = call(server, "create_task", project="1200000000000100", name="Export times out",
                notes="Twice today.")  # fmt: skip
    commented = call(server, "comment_task", task=TASK, text="Checked on main.")

    create, comment = server.seen("POST")
    assert create.raw_path == f"{API}/tasks"
    assert create.json() == {
        "data": {
            "name": "Export times out",
            "projects": ["1200000000000100"],
            "notes": "Twice today.",
        }
    }
    assert comment.raw_path == f"{API}/tasks/{TASK}/stories"
    assert comment.json() == {"data": {"text": "Checked on main."}}
    assert made.data["gid"] == "1204567890123999"
    assert commented.data["story"] == "1204567890200099"


@pytest.mark.parametrize(
    "given", [f"{TASK}/../../users/me", "..", f"{TASK}?opt_fields=x", "me", "12 34", "%2e%2e", ""]
)
def test_injection_in_a_gid_cannot_reach_another_endpoint(server: Loopback, given: str) -> None:
    with pytest.raises(ConnectorError):
        call(server, "get_task", task=given)
    with pytest.raises(ConnectorError):
        call(server, "update_task", task=given, fields={"name": "x"})
    with pytest.raises(ConnectorError):
        call(server, "create_task", project=given, name="x")
    assert server.requests == []
