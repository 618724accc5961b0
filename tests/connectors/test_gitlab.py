"""The GitLab connector against a loopback GitLab speaking the REST API v4's wire format
(fixtures in fixtures/gitlab/ name the documentation page each follows)."""

from __future__ import annotations

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
from sdd_git.connectors.builtin.gitlab import GitLabConnector
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

TOKEN = "glpat-" + "LoopbackToken0" + "x" * 8
PROJECT = "/api/v4/projects/acme%2Fapp"


def _pipelines(seen: Seen, match: re.Match[str]) -> Reply:
    base = f"http://{seen.headers['host']}{PROJECT}/pipelines"
    common = {"x-per-page": "2", "x-total": "3", "x-total-pages": "2"}
    if seen.param("page") == "2":
        return json_reply(
            fixture("gitlab", "pipelines_page2"),
            headers={**common, "x-page": "2", "x-next-page": "", "x-prev-page": "1",
                     "Link": f'<{base}?page=1&per_page=2>; rel="first", '
                             f'<{base}?page=2&per_page=2>; rel="last"'},
        )  # fmt: skip
    return json_reply(
        fixture("gitlab", "pipelines_page1"),
        headers={**common, "x-page": "1", "x-next-page": "2", "x-prev-page": "",
                 "Link": f'<{base}?page=2&per_page=2&ref=main>; rel="next", '
                         f'<{base}?page=1&per_page=2&ref=main>; rel="first", '
                         f'<{base}?page=2&per_page=2&ref=main>; rel="last"'},
    )  # fmt: skip


def routes() -> list[Any]:
    return [
        ("GET", rf"{PROJECT}/issues/6", json_reply(fixture("gitlab", "issue_6"))),
        ("GET", rf"{PROJECT}/merge_requests/1", json_reply(fixture("gitlab", "merge_request_1"))),
        ("GET", rf"{PROJECT}/pipelines", _pipelines),
        ("GET", rf"{PROJECT}/pipelines/46", json_reply(fixture("gitlab", "pipeline_46"))),
        ("GET", rf"{PROJECT}/pipelines/45", json_reply(fixture("gitlab", "pipeline_45"))),
        ("GET", rf"{PROJECT}/pipelines/46/jobs", json_reply(fixture("gitlab", "jobs_46"))),
        ("GET", rf"{PROJECT}/jobs/8/trace", text_reply(fixture_text("gitlab", "trace_8.txt"))),
        ("PUT", rf"{PROJECT}/merge_requests/1/merge", json_reply(fixture("gitlab", "merge_done"))),
        ("PUT", rf"{PROJECT}/merge_requests/3/merge",
         json_reply(fixture("gitlab", "merge_405"), 405)),
        ("POST", rf"{PROJECT}/issues", json_reply(fixture("gitlab", "issue_created"), 201)),
        ("POST", rf"{PROJECT}/issues/6/notes", json_reply(fixture("gitlab", "note_created"), 201)),
        ("POST", rf"{PROJECT}/merge_requests",
         json_reply(fixture("gitlab", "merge_request_created"), 201)),
    ]  # fmt: skip


@pytest.fixture
def gitlab() -> Iterator[Loopback]:
    with Loopback(routes(), fallback=json_reply(fixture("gitlab", "error_404"), 404)) as server:
        yield server


def session(url: str, token: str | None = TOKEN, **settings: Any) -> Session:
    return Session(name="gitlab", base_url=url + "/api/v4", token=token, settings=settings)


def call(server: Loopback, operation: str, **args: Any) -> Result:
    args.setdefault("project", "acme/app")
    return GitLabConnector().call(session(server.url), operation, args)


def assert_signed(seen: Seen) -> None:
    assert seen.headers["private-token"] == TOKEN
    assert "authorization" not in seen.headers
    assert TOKEN not in "\n".join(
        [seen.raw_path, seen.raw_query, seen.body.decode()]
        + [v for k, v in seen.headers.items() if k != "private-token"]
    )


def test_operations_are_its_rows_of_the_table() -> None:
    assert dict(GitLabConnector().operations()) == TABLE["gitlab"]


def test_get_issue_returns_the_facts_with_the_private_token(gitlab: Loopback) -> None:
    result = call(gitlab, "get_issue", iid=6)
    assert "issue acme/app#6: Export to CSV drops the header row (opened)" in result.text
    assert "labels: bug, export · assignees: ada" in result.text
    assert "The first line of every export is missing." in result.text
    assert result.data["description"].startswith("The first line")
    [seen] = gitlab.requests
    assert (seen.method, seen.raw_path) == ("GET", f"{PROJECT}/issues/6")
    assert_signed(seen)


def test_a_numeric_project_id_is_taken_as_it_is() -> None:
    issue = json_reply(fixture("gitlab", "issue_6"))
    with Loopback([("GET", r"/api/v4/projects/42/issues/6", issue)]) as server:
        result = call(server, "get_issue", project="42", iid=6)
    assert result.data["iid"] == 6


def test_get_merge_request(gitlab: Loopback) -> None:
    result = call(gitlab, "get_merge_request", iid=1)
    assert "merge request acme/app!1: Keep the CSV header (opened)" in result.text
    assert "merge status: mergeable · conflicts: no · head pipeline: 47 (success)" in result.text


def test_list_pipelines_follows_the_link_header(gitlab: Loopback) -> None:
    result = call(gitlab, "list_pipelines", ref="main")
    assert [p["id"] for p in result.data["pipelines"]] == [46, 45, 44]
    assert "pipeline 46 · push on main" in result.text and "· failed ·" in result.text
    assert "not finished (running)" in result.text
    first, second = gitlab.requests
    assert first.param("ref") == "main"
    assert second.param("page") == "2"
    assert_signed(second)


def test_an_empty_list_is_said_as_empty() -> None:
    with Loopback([("GET", rf"{PROJECT}/pipelines", json_reply([]))]) as server:
        result = call(server, "list_pipelines", status="failed")
    assert "none: the list is empty" in result.text
    assert result.data["pipelines"] == []


def test_a_failed_pipeline_reads_with_its_failed_job_and_trace_excerpt(gitlab: Loopback) -> None:
    result = call(gitlab, "get_pipeline", pipeline_id=46)
    text = result.text
    assert "finished: status failed" in text
    assert "failed jobs (1 of 3):" in text
    assert "- rspec (job 8, stage test): failed (script_failure)" in text
    assert "lint-docs" not in text  # allowed to fail: not what failed the pipeline
    assert "Failure/Error: expect(csv.lines.first)" in text
    assert "ERROR: Job failed: exit code 1" in text
    assert "section_start" not in text and "\x1b" not in text
    assert result.data["failing_jobs"][0]["name"] == "rspec"
    assert [s.raw_path for s in gitlab.requests] == [
        f"{PROJECT}/pipelines/46",
        f"{PROJECT}/pipelines/46/jobs",
        f"{PROJECT}/jobs/8/trace",
    ]


def test_a_running_pipeline_is_said_not_finished(gitlab: Loopback) -> None:
    result = call(gitlab, "get_pipeline", pipeline_id=45)
    assert "not finished: status running; no result yet" in result.text
    assert "success" not in result.text and "passed" not in result.text
    assert result.data["finished"] is False
    assert len(gitlab.requests) == 1


def test_list_pipeline_jobs_and_a_job_trace(gitlab: Loopback) -> None:
    jobs = call(gitlab, "list_pipeline_jobs", pipeline_id=46)
    assert "build (job 7, stage build): success" in jobs.text
    assert "lint-docs (job 9, stage test): failed (script_failure) (allowed to fail)" in jobs.text
    trace = call(gitlab, "get_job_log", job_id=8)
    assert trace.text.startswith("trace of job 8 of acme/app: 28 lines;")
    assert "13 examples, 1 failure" in trace.text


def test_a_404_is_missing_naming_the_record(gitlab: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(gitlab, "get_merge_request", iid=99)
    assert caught.value.source == "merge request acme/app!99 on gitlab"
    assert "404 Not found" not in str(caught.value)


def test_a_401_is_not_signed_in() -> None:
    with (
        Loopback([("GET", r".*", json_reply(fixture("gitlab", "error_401"), 401))]) as server,
        pytest.raises(NotSignedIn, match="401 Unauthorized"),
    ):
        call(server, "get_issue", iid=6)


def test_a_5xx_or_a_closed_port_is_unavailable() -> None:
    with (
        Loopback([("GET", r".*", json_reply(fixture("gitlab", "error_500"), 500))]) as server,
        pytest.raises(Unavailable, match="500"),
    ):
        call(server, "get_issue", iid=6)
    with pytest.raises(Unavailable):
        GitLabConnector().call(
            session(closed_port_url()), "get_issue", {"project": "acme/app", "iid": 6}
        )


def test_merge_sends_exactly_the_documented_request(gitlab: Loopback) -> None:
    result = call(gitlab, "merge_merge_request", iid=1)
    assert result.text == "merged merge request acme/app!1 (commit 9999999999)"
    [seen] = gitlab.requests
    assert (seen.method, seen.raw_path, seen.body) == (
        "PUT",
        f"{PROJECT}/merge_requests/1/merge",
        b"",
    )
    assert_signed(seen)


def test_a_merge_gitlab_cannot_make_is_refused(gitlab: Loopback) -> None:
    with pytest.raises(Refused, match="405 Method Not Allowed"):
        call(gitlab, "merge_merge_request", iid=3)


def test_the_other_acts_send_the_documented_requests(gitlab: Loopback) -> None:
    assert "opened issue acme/app#7" in call(gitlab, "create_issue", title="Slow export").text
    call(gitlab, "comment_issue", iid=6, body="Reproduced on main.")
    opened = call(
        gitlab, "open_merge_request", title="Faster export", source_branch="fast-export",
        target_branch="main",
    )  # fmt: skip
    assert "opened merge request acme/app!2 from fast-export into main" in opened.text
    assert [(s.method, s.raw_path, s.json()) for s in gitlab.requests] == [
        ("POST", f"{PROJECT}/issues", {"title": "Slow export"}),
        ("POST", f"{PROJECT}/issues/6/notes", {"body": "Reproduced on main."}),
        ("POST", f"{PROJECT}/merge_requests",
         {"source_branch": "fast-export", "target_branch": "main", "title": "Faster export"}),
    ]  # fmt: skip


def test_a_release_is_never_sent(gitlab: Loopback) -> None:
    with pytest.raises(Refused, match="release"):
        call(gitlab, "create_release", tag_name="v1.0")
    assert gitlab.requests == []


@pytest.mark.parametrize(
    ("operation", "args"),
    [
        ("get_issue", {"project": "acme/../admin", "iid": 6}),
        ("get_issue", {"project": "acme/app/../../users", "iid": 6}),
        ("get_issue", {"project": "acme/app?private=1", "iid": 6}),
        ("get_issue", {"project": "acme/app#x", "iid": 6}),
        ("get_issue", {"project": "acme/%2e%2e", "iid": 6}),
        ("get_issue", {"project": "app", "iid": 6}),
        ("get_issue", {"project": "acme/app", "iid": "6/../../../../users"}),
        ("get_issue", {"project": "acme/app", "iid": "6?x"}),
        ("get_job_log", {"project": "acme/app", "job_id": "%2e%2e"}),
        ("merge_merge_request", {"project": "acme/app", "iid": "1/../2"}),
        ("list_pipelines", {"project": "acme/app", "ref": "main?x=1"}),
    ],
)
def test_an_argument_cannot_reach_another_endpoint(
    gitlab: Loopback, operation: str, args: dict[str, Any]
) -> None:
    with pytest.raises(ConnectorError):
        GitLabConnector().call(session(gitlab.url), operation, args)
    assert gitlab.requests == []
