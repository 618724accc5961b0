"""The Aha! connector against a loopback Aha! (REST v1 wire format, fixtures in fixtures/aha/):
a feature reads as plain text with every page of its comments, a 404 is missing, a 401 is a
sign-in to renew, a status or custom field that would hold her verdict is refused before the
PUT, and no id can reach another endpoint."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.connectors.base import ConnectorError, Missing, NotSignedIn, Session
from sdd_git.connectors.builtin import aha
from sdd_git.connectors.builtin.aha import AhaConnector
from sdd_git.connectors.operations import TABLE, classify
from tests.connectors.loopback import (
    Reply,
    Route,
    Seen,
    fixture,
)
from tests.connectors.loopback_trackers import Loopback, signed_in

TOKEN = "584b6d6b83405011f8c6903d2379f4afdf824cef867db391b7bcb5995f603a76"
API = "/api/v1"


def _routes() -> list[Route]:
    guarded = signed_in(f"Bearer {TOKEN}", Reply(401, fixture("aha", "error_401")))

    def comments(seen: Seen, match: re.Match[str]) -> Reply:
        return Reply(200, fixture("aha", f"comments_page{seen.param('page') or '1'}"))

    feature = guarded(lambda s, m: Reply(200, fixture("aha", "feature_PRJ1-1")))
    return [
        ("GET", f"{API}/features/(PRJ1-1|1007868956)", feature),
        ("PUT", f"{API}/features/PRJ1-1", feature),
        ("GET", f"{API}/features/PRJ1-1/comments", guarded(comments)),
        ("POST", f"{API}/features/PRJ1-1/comments",
         guarded(lambda s, m: Reply(200, fixture("aha", "comment_created")))),
    ]  # fmt: skip


@pytest.fixture
def server() -> Iterator[Loopback]:
    with Loopback(_routes(), fallback=Reply(404, fixture("aha", "error_404"))) as running:
        yield running


def call(server: Loopback, operation: str, token: str | None = TOKEN, **args: Any) -> Any:
    return AhaConnector().call(Session("aha", server.url + API, token), operation, args)


def test_the_connector_implements_exactly_its_rows_of_the_table() -> None:
    assert AhaConnector().operations() == TABLE["aha"]


def test_get_feature_reads_the_facts_and_every_page_of_comments(
    server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(aha, "COMMENTS_PER_PAGE", 2)

    result = call(server, "get_feature", id="PRJ1-1")

    assert result.data["name"] == "Faster CSV export"
    assert result.data["status"] == "In development"
    assert result.data["release"] == "Summer release"
    assert result.data["assignee"] == "Mary Humpty"
    assert result.data["description"] == (
        'Exports of 10 rows take a minute.\n\n- Stream the rows\n- Drop the "wait" spinner'
    )
    assert "alert" not in result.text  # a script in the HTML is not words
    assert "Customer impact: High for finance" in result.text
    assert [c["body"] for c in result.data["comments"]] == [
        "Customers ask for this weekly.", "Agreed & scheduled.", "Design is ready."
    ]  # fmt: skip
    feature, first, second = server.requests
    assert feature.raw_path == f"{API}/features/PRJ1-1"
    assert first.raw_path == second.raw_path == f"{API}/features/PRJ1-1/comments"
    assert (first.param("page"), second.param("page")) == ("1", "2")
    assert first.param("per_page") == "2"


def test_the_token_travels_only_in_the_authorization_header(server: Loopback) -> None:
    call(server, "get_feature", id="PRJ1-1")
    for seen in server.requests:
        assert seen.headers["authorization"] == f"Bearer {TOKEN}"
        assert TOKEN not in seen.everything_but_auth()


def test_a_404_is_missing_naming_the_connector_and_the_feature(server: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(server, "get_feature", id="PRJ1-99")
    assert caught.value.source == "Aha! feature PRJ1-99 on aha"


def test_a_refused_token_is_not_signed_in(server: Loopback) -> None:
    with pytest.raises(NotSignedIn):
        call(server, "get_feature", token="0" * 64, id="PRJ1-1")
    with pytest.raises(NotSignedIn):
        call(server, "get_feature", token=None, id="PRJ1-1")


def test_a_custom_field_that_mirrors_qa_is_refused_once_its_key_is_resolved(
    server: Loopback,
) -> None:
    fields = {"custom_fields": {"custom_result": "Passed"}}
    assert classify("aha", "update_feature", {"id": "PRJ1-1", "fields": fields}).kind == "act"

    with pytest.raises(ConnectorError, match="QA status"):
        call(server, "update_feature", id="PRJ1-1", fields=fields)

    assert [(s.method, s.raw_path) for s in server.requests] == [("GET", f"{API}/features/PRJ1-1")]


def test_a_status_that_is_done_or_given_by_id_is_refused_without_a_put(server: Loopback) -> None:
    with pytest.raises(ConnectorError, match="person's"):
        call(server, "update_feature", id="PRJ1-1", fields={"workflow_status": "Done"})
    with pytest.raises(ConnectorError, match="by id"):
        call(server, "update_feature", id="PRJ1-1", fields={"workflow_status": "1020675299"})
    assert server.seen("PUT") == []


def test_an_ordinary_update_puts_the_feature_envelope(server: Loopback) -> None:
    result = call(
        server, "update_feature", id="PRJ1-1",
        fields={"workflow_status": "In design", "tags": "export,csv"},
    )  # fmt: skip

    [put] = server.seen("PUT")
    assert put.raw_path == f"{API}/features/PRJ1-1"
    assert put.json() == {"feature": {"workflow_status": "In design", "tags": "export,csv"}}
    assert result.text == "changed tags, workflow_status of PRJ1-1"


def test_a_comment_is_escaped_html_in_a_comment_envelope(server: Loopback) -> None:
    result = call(
        server, "comment_feature", id="PRJ1-1", body="Checked on main.\n<script>x</script>"
    )

    [post] = server.seen("POST")
    assert post.raw_path == f"{API}/features/PRJ1-1/comments"
    assert post.json() == {
        "comment": {"body": "<p>Checked on main.<br>&lt;script&gt;x&lt;/script&gt;</p>"}
    }
    assert result.data["comment"] == "6654698163583202144"


@pytest.mark.parametrize(
    "given", ["PRJ1-1/../../products", "..", "PRJ1-1?fields=x", "PRJ1-1#", "PRJ1 1", "%2e%2e", ""]
)
def test_injection_in_an_id_cannot_reach_another_endpoint(server: Loopback, given: str) -> None:
    with pytest.raises(ConnectorError):
        call(server, "get_feature", id=given)
    with pytest.raises(ConnectorError):
        call(server, "comment_feature", id=given, body="hello")
    assert server.requests == []
