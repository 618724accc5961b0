"""The Jira connector against a loopback Jira Cloud (REST v3 wire format, fixtures in
fixtures/jira/): reads return the record's facts with the description as plain text, the search
follows `nextPageToken`, a 404 or an empty search is missing, a 401 is a sign-in to renew, a
transition or a field that would make Jira hold her verdict is refused before anything is sent,
and no argument can reach another endpoint."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import pytest

from sdd_git.connectors.base import ConnectorError, Missing, NotSignedIn, Refused, Session
from sdd_git.connectors.builtin.jira import JiraConnector, adf_to_text, text_to_adf
from sdd_git.connectors.operations import TABLE, classify
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.connectors.core_support import configure, file_keyring
from tests.connectors.loopback import (
    Reply,
    Route,
    Seen,
    fixture,
)
from tests.connectors.loopback_trackers import Loopback, signed_in

TOKEN = "ATATT3xFfGF0jiraTokenForTests9fJ2kq"
EMAIL = "ada@acme.test"
BASIC = "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()
API = "/rest/api/3"
__all__ = ["file_keyring"]  # a file keyring: no test touches the real one


def _jira_routes() -> list[Route]:
    guarded = signed_in((BASIC, f"Bearer {TOKEN}"), Reply(401, fixture("jira", "error_401")))

    def issue(seen: Seen, match: re.Match[str]) -> Reply:
        return Reply(200, fixture("jira", "issue_ACME-7"))

    def search(seen: Seen, match: re.Match[str]) -> Reply:
        if "nothing" in (seen.param("jql") or ""):
            return Reply(200, fixture("jira", "search_empty"))
        if seen.param("nextPageToken") == "CAEaAggD":
            return Reply(200, fixture("jira", "search_page2"))
        page = fixture("jira", "search_page1")
        wanted = int(seen.param("maxResults") or 50)
        if wanted < len(page["issues"]):
            page["issues"] = page["issues"][:wanted]
        return Reply(200, page)

    return [
        ("GET", f"{API}/issue/ACME-7", guarded(issue)),
        ("GET", f"{API}/issue/ACME-7/transitions",
         guarded(lambda s, m: Reply(200, fixture("jira", "transitions_ACME-7")))),
        ("POST", f"{API}/issue/ACME-7/transitions", guarded(lambda s, m: Reply(204))),
        ("GET", f"{API}/field", guarded(lambda s, m: Reply(200, fixture("jira", "field")))),
        ("GET", f"{API}/issue/ACME-7/editmeta",
         guarded(lambda s, m: Reply(200, fixture("jira", "editmeta_ACME-7")))),
        ("PUT", f"{API}/issue/ACME-7", guarded(lambda s, m: Reply(204))),
        ("POST", f"{API}/issue/ACME-7/comment",
         guarded(lambda s, m: Reply(201, fixture("jira", "comment_created")))),
        ("POST", f"{API}/issue",
         guarded(lambda s, m: Reply(201, fixture("jira", "issue_created")))),
        ("GET", f"{API}/search/jql", guarded(search)),
    ]  # fmt: skip


@pytest.fixture
def jira() -> Iterator[Loopback]:
    with Loopback(_jira_routes(), fallback=Reply(404, fixture("jira", "error_404"))) as server:
        yield server


def session(server: Loopback, token: str | None = TOKEN, **settings: Any) -> Session:
    return Session("jira", server.url, token, {"email": EMAIL, **settings})


def call(server: Loopback, operation: str, **args: Any) -> Any:
    return JiraConnector().call(session(server), operation, args)


def test_the_connector_implements_exactly_its_rows_of_the_table() -> None:
    connector = JiraConnector()
    assert connector.operations() == TABLE["jira"]
    assert connector.name == "jira" and connector.needs_token is True


def test_get_issue_reads_the_facts_and_the_description_as_plain_text(jira: Loopback) -> None:
    result = call(jira, "get_issue", key="ACME-7")

    assert result.data["summary"] == "The export is slow"
    assert result.data["status"] == "In Progress"
    assert result.data["assignee"] == "Ada Lovelace"
    assert result.data["labels"] == ["performance", "export"]
    assert result.data["url"] == f"{jira.url}/browse/ACME-7"
    description = result.data["description"]
    assert "Exporting 10 rows takes a minute. Reported by @Grace Hopper." in description
    assert "## Steps" in description
    assert (
        "1. Open the report\n2. Press Export\n   (see the runbook) (https://wiki.acme.test/export)"
        in description
    )
    assert "```python\nexport(rows=10)\n```" in description
    assert "[attachment]" in description and "- [SLOW] on Firefox" in description
    assert '"type"' not in description  # no ADF left in what the role reads
    assert "Ada Lovelace" in result.text and "Reproduced with 10 rows." in result.text
    assert result.data["comments"][0]["body"] == "Reproduced with 10 rows."
    [seen] = jira.requests
    assert (seen.method, seen.raw_path) == ("GET", f"{API}/issue/ACME-7")
    assert "description" in (seen.param("fields") or "").split(",")


def test_the_token_travels_only_in_the_authorization_header(jira: Loopback) -> None:
    call(jira, "get_issue", key="ACME-7")
    JiraConnector().call(Session("jira", jira.url, TOKEN, {}), "get_issue", {"key": "ACME-7"})

    basic, bearer = jira.requests
    assert basic.headers["authorization"] == BASIC  # email + API token: HTTP Basic
    assert bearer.headers["authorization"] == f"Bearer {TOKEN}"  # no email: a bearer token
    for seen in jira.requests:
        assert TOKEN not in seen.everything_but_auth()
        assert (
            base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode() not in seen.everything_but_auth()
        )


def test_search_follows_next_page_token_to_the_last_page(jira: Loopback) -> None:
    result = call(jira, "search", jql="project = ACME AND text ~ export")

    assert [i["key"] for i in result.data["issues"]] == ["ACME-7", "ACME-8", "ACME-11"]
    first, second = jira.requests
    assert first.raw_path == second.raw_path == f"{API}/search/jql"
    assert first.param("jql") == "project = ACME AND text ~ export"
    assert first.param("nextPageToken") is None
    assert second.param("nextPageToken") == "CAEaAggD"
    assert "ACME-11 [In Review] Export button is hidden on mobile" in result.text


def test_search_asks_for_no_more_than_max_results(jira: Loopback) -> None:
    result = call(jira, "search", jql="project = ACME", max_results=2)

    assert [i["key"] for i in result.data["issues"]] == ["ACME-7", "ACME-8"]
    [seen] = jira.requests
    assert seen.param("maxResults") == "2"


def test_an_empty_search_is_missing_not_an_empty_answer(jira: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(jira, "search", jql="text ~ nothing")
    assert caught.value.source == "issues matching text ~ nothing on jira"


def test_a_404_is_missing_naming_the_connector_and_the_record(jira: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(jira, "get_issue", key="ACME-99")
    assert caught.value.source == "issue ACME-99 on jira"
    assert "Issue does not exist" not in str(caught.value)  # the record's source, no field of it


def test_a_refused_token_is_not_signed_in(jira: Loopback) -> None:
    with pytest.raises(NotSignedIn) as caught:
        JiraConnector().call(
            session(jira, token="wrong-token-0000"), "get_issue", {"key": "ACME-7"}
        )
    assert "sdd connect jira" in (caught.value.hint or "")
    with pytest.raises(NotSignedIn):
        JiraConnector().call(session(jira, token=None), "get_issue", {"key": "ACME-7"})


def test_get_transitions_lists_each_with_its_target_status(jira: Loopback) -> None:
    result = call(jira, "get_transitions", key="ACME-7")
    assert "- 31: Pass -> QA Passed" in result.text
    assert {"id": "21", "name": "Ready for review", "to": "In Review"} in result.data["transitions"]


def test_a_transition_by_id_to_qa_passed_is_refused_before_the_post(jira: Loopback) -> None:
    # The dispatch sees only "31": by its words it is an ordinary act. The connector is the wall.
    assert classify("jira", "transition_issue", {"key": "ACME-7", "transition": "31"}).kind == "act"

    with pytest.raises(ConnectorError) as caught:
        call(jira, "transition_issue", key="ACME-7", transition="31")

    assert "QA Passed" in str(caught.value) and "person's" in str(caught.value)
    assert [(s.method, s.raw_path) for s in jira.requests] == [
        ("GET", f"{API}/issue/ACME-7/transitions")
    ]
    assert jira.seen("POST") == []


def test_a_transition_named_after_itself_that_releases_is_refused(jira: Loopback) -> None:
    with pytest.raises(ConnectorError, match="Released"):
        call(jira, "transition_issue", key="ACME-7", transition="Ship it")
    assert jira.seen("POST") == []


def test_an_ordinary_transition_posts_the_resolved_id(jira: Loopback) -> None:
    result = call(jira, "transition_issue", key="ACME-7", transition="in review")

    [post] = jira.seen("POST")
    assert post.raw_path == f"{API}/issue/ACME-7/transitions"
    assert post.json() == {"transition": {"id": "21"}}
    assert result.data["status"] == "In Review"


def test_a_transition_the_issue_does_not_offer_is_refused_without_a_post(jira: Loopback) -> None:
    with pytest.raises(Refused, match="no transition '99'"):
        call(jira, "transition_issue", key="ACME-7", transition="99")
    assert jira.seen("POST") == []


def test_a_custom_field_that_mirrors_qa_is_refused_once_its_id_is_resolved(jira: Loopback) -> None:
    fields = {"customfield_10042": {"value": "Passed"}}
    assert classify("jira", "update_issue", {"key": "ACME-7", "fields": fields}).kind == "act"

    with pytest.raises(ConnectorError, match="QA Status"):
        call(jira, "update_issue", key="ACME-7", fields=fields)

    assert [s.raw_path for s in jira.requests] == [f"{API}/field"]
    assert jira.seen("PUT") == []


def test_a_select_given_by_option_id_is_checked_by_the_options_words(jira: Loopback) -> None:
    accepted = {"customfield_10060": {"id": "10302"}}  # "Delivery phase": "Accepted"
    assert classify("jira", "update_issue", {"key": "ACME-7", "fields": accepted}).kind == "act"

    with pytest.raises(ConnectorError, match="Delivery phase"):
        call(jira, "update_issue", key="ACME-7", fields=accepted)
    assert [s.raw_path for s in jira.requests] == [f"{API}/field", f"{API}/issue/ACME-7/editmeta"]
    assert jira.seen("PUT") == []

    call(jira, "update_issue", key="ACME-7", fields={"customfield_10060": {"id": "10301"}})
    [put] = jira.seen("PUT")
    assert put.json() == {"fields": {"customfield_10060": {"id": "10301"}}}


def test_a_field_update_sends_ids_and_documents_for_text_areas(jira: Loopback) -> None:
    result = call(
        jira, "update_issue", key="ACME-7",
        fields={"Story point estimate": 3, "customfield_10050": "Faster export.\n\nSee ACME-1.",
                "labels": ["performance"]},
    )  # fmt: skip

    [put] = jira.seen("PUT")
    assert put.raw_path == f"{API}/issue/ACME-7"
    sent = put.json()["fields"]
    assert sent["customfield_10016"] == 3  # the name resolved to its id
    assert sent["labels"] == ["performance"]
    assert sent["customfield_10050"] == text_to_adf("Faster export.\n\nSee ACME-1.")
    assert "Release notes" in result.text


def test_a_comment_is_sent_as_an_adf_document(jira: Loopback) -> None:
    result = call(
        jira, "comment_issue", key="ACME-7", body="Checked on main.\nStill slow.\n\n@here"
    )

    [post] = jira.seen("POST")
    assert post.raw_path == f"{API}/issue/ACME-7/comment"
    assert post.json() == {
        "body": {
            "type": "doc",
            "version": 1,
            "content": [
                {"type": "paragraph", "content": [
                    {"type": "text", "text": "Checked on main."}, {"type": "hardBreak"},
                    {"type": "text", "text": "Still slow."}]},
                {"type": "paragraph", "content": [{"type": "text", "text": "@here"}]},
            ],
        }
    }  # fmt: skip
    assert result.data["comment"] == "10101"


def test_create_issue_sends_the_documented_fields(jira: Loopback) -> None:
    result = call(
        jira, "create_issue", project="ACME", summary="Export times out", description="Twice."
    )

    [post] = jira.seen("POST")
    assert post.raw_path == f"{API}/issue"
    assert post.json() == {
        "fields": {
            "project": {"key": "ACME"},
            "summary": "Export times out",
            "issuetype": {"name": "Task"},
            "description": text_to_adf("Twice."),
        }
    }
    assert result.data["key"] == "ACME-12"


@pytest.mark.parametrize(
    "key",
    ["ACME-7/../../field", "../field", "..", "ACME-7?fields=*all", "ACME-7#x", "%2e%2e",
     "ACME-7/transitions", "http://evil.test/x", "ACME-7\r\nX: y", ""],
)  # fmt: skip
def test_injection_in_a_key_cannot_reach_another_endpoint(jira: Loopback, key: str) -> None:
    with pytest.raises(ConnectorError):
        call(jira, "get_issue", key=key)
    with pytest.raises(ConnectorError):
        call(jira, "transition_issue", key=key, transition="21")
    assert jira.requests == []


def test_a_jql_stays_one_query_parameter(jira: Loopback) -> None:
    jql = "project = ACME&fields=*all#/../../field"
    with pytest.raises(Missing):  # the loopback finds nothing for it; what matters is the request
        call(jira, "search", jql=jql + " nothing")
    [seen] = jira.requests
    assert seen.raw_path == f"{API}/search/jql"
    assert seen.param("jql") == jql + " nothing"
    assert seen.param("fields") != "*all"


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _para(*inline: dict[str, Any]) -> dict[str, Any]:
    return {"type": "paragraph", "content": list(inline)}


def _cell(kind: str, text: str) -> dict[str, Any]:
    return {"type": kind, "content": [_para(_text(text))]}


def _task(state: str, text: str) -> dict[str, Any]:
    return {
        "type": "taskItem",
        "attrs": {"localId": text, "state": state},
        "content": [_text(text)],
    }


def test_adf_tables_quotes_and_task_lists_read_as_text() -> None:
    doc = {
        "type": "doc",
        "version": 1,
        "content": [
            {"type": "blockquote", "content": [_para(_text("quoted"))]},
            {"type": "table", "content": [
                {"type": "tableRow", "content": [_cell("tableHeader", "Rows"),
                                                 _cell("tableHeader", "Time")]},
                {"type": "tableRow", "content": [_cell("tableCell", "10"),
                                                 _cell("tableCell", "60 s")]},
            ]},
            {"type": "taskList", "attrs": {"localId": "a"},
             "content": [_task("DONE", "measure"), _task("TODO", "fix")]},
            {"type": "rule"},
            _para(
                {"type": "emoji", "attrs": {"shortName": ":warning:", "text": "⚠️"}},
                _text(" due "),
                {"type": "date", "attrs": {"timestamp": "1714521600000"}},
                _text(" "),
                {"type": "inlineCard", "attrs": {"url": "https://acme.atlassian.net/browse/ACME-1"}},
            ),
        ],
    }  # fmt: skip
    assert adf_to_text(doc) == (
        "> quoted\n\n| Rows | Time |\n| 10 | 60 s |\n\n[x] measure\n[ ] fix\n\n---\n\n"
        "⚠️ due 2024-05-01 https://acme.atlassian.net/browse/ACME-1"
    )
    assert adf_to_text("plain, as API v2 gives it") == "plain, as API v2 gives it"
    assert adf_to_text(None) == ""


def test_through_the_config_the_built_in_jira_answers(
    jira: Loopback, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.connectors.calls import call_connector

    monkeypatch.setenv("JIRA_TOKEN_FOR_TEST", TOKEN)
    configure(root, connectors={"jira": {"base_url": jira.url, "email": EMAIL,
                                         "token_env": "JIRA_TOKEN_FOR_TEST"}})  # fmt: skip

    result = call_connector(root, "jira", "get_issue", {"key": "ACME-7"})

    assert result.data["summary"] == "The export is slow"
    assert jira.requests[0].headers["authorization"] == BASIC


def test_a_change_starts_from_a_jira_issue_s_words(
    jira: Loopback, root: Root, sdd: SddRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JIRA_TOKEN_FOR_TEST", TOKEN)
    configure(root, connectors={"jira": {"base_url": jira.url, "email": EMAIL,
                                         "token_env": "JIRA_TOKEN_FOR_TEST"}})  # fmt: skip

    made = sdd("change", "new", "--from", "jira:ACME-7")

    assert made.code == 0, made.stderr
    written = "\n".join(p.read_text() for p in (root.path / "changes").rglob("*") if p.is_file())
    assert "The export is slow" in written and "Exporting 10 rows takes a minute" in written
    assert "jira:ACME-7" in written
    assert [s.method for s in jira.requests] == ["GET"]  # read, never written
