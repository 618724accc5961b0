"""The GitHub connector against a loopback GitHub speaking the REST API's wire format (fixtures in
fixtures/github/ name the documentation page each follows)."""

from __future__ import annotations

import json
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
from sdd_git.connectors.builtin.github import GitHubConnector
from sdd_git.connectors.calls import call_connector
from sdd_git.connectors.operations import TABLE
from sdd_git.root import Root
from tests.connectors.core_support import configure
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

TOKEN = "ghp_" + "Loopback0Token" + "q" * 22
REPO = "/repos/acme/app"
JOB = 399444497


def _issues(seen: Seen, match: re.Match[str]) -> Reply:
    base = f"http://{seen.headers['host']}{REPO}/issues"
    if seen.param("page") == "2":
        return json_reply(
            fixture("github", "issues_page2"),
            headers={"Link": f'<{base}?state=open&per_page=100&page=1>; rel="prev", '
                             f'<{base}?state=open&per_page=100&page=1>; rel="first"'},
        )  # fmt: skip
    return json_reply(
        fixture("github", "issues_page1"),
        headers={"Link": f'<{base}?state=open&per_page=100&page=2>; rel="next", '
                         f'<{base}?state=open&per_page=100&page=2>; rel="last"'},
    )  # fmt: skip


def _job_log(seen: Seen, match: re.Match[str]) -> Reply:
    # The API answers 302 with a short-lived download URL; here it stays on the same host.
    location = f"http://{seen.headers['host']}/download/job-logs/{match['job']}?sig=abc"
    return Reply(302, None, {"Location": location})


def routes() -> list[Any]:
    not_found = json_reply(fixture("github", "error_404"), 404)
    return [
        ("GET", rf"{REPO}/issues/7", json_reply(fixture("github", "issue_7"))),
        ("GET", rf"{REPO}/issues", _issues),
        ("GET", rf"{REPO}/pulls/12", json_reply(fixture("github", "pull_12"))),
        ("GET", rf"{REPO}/actions/runs", json_reply(fixture("github", "runs"))),
        ("GET", rf"{REPO}/actions/runs/30433642", json_reply(fixture("github", "run_failed"))),
        ("GET", rf"{REPO}/actions/runs/30433600",
         json_reply(fixture("github", "run_in_progress"))),
        ("GET", rf"{REPO}/actions/runs/30433642/jobs",
         json_reply(fixture("github", "jobs_failed"))),
        ("GET", rf"{REPO}/actions/jobs/(?P<job>{JOB})/logs", _job_log),
        ("GET", rf"/download/job-logs/{JOB}",
         text_reply(fixture_text("github", "job_log_failed.txt"))),
        ("PUT", rf"{REPO}/pulls/12/merge", json_reply(fixture("github", "merge_ok"))),
        ("PUT", rf"{REPO}/pulls/13/merge", json_reply(fixture("github", "merge_405"), 405)),
        ("POST", rf"{REPO}/issues", json_reply(fixture("github", "issue_created"), 201)),
        ("POST", rf"{REPO}/issues/7/comments",
         json_reply(fixture("github", "comment_created"), 201)),
        ("POST", rf"{REPO}/pulls", json_reply(fixture("github", "pull_created"), 201)),
        ("POST", rf"{REPO}/actions/runs/30433642/rerun", json_reply({}, 201)),
        ("GET", r".*", not_found),
    ]  # fmt: skip


@pytest.fixture
def github() -> Iterator[Loopback]:
    with Loopback(routes(), fallback=json_reply(fixture("github", "error_404"), 404)) as server:
        yield server


def session(url: str, token: str | None = TOKEN, **settings: Any) -> Session:
    return Session(name="github", base_url=url, token=token, settings=settings)


def call(server: Loopback, operation: str, **args: Any) -> Result:
    return GitHubConnector().call(session(server.url), operation, args)


def assert_signed(seen: Seen) -> None:
    assert seen.headers["authorization"] == f"Bearer {TOKEN}"
    assert seen.headers["accept"] == "application/vnd.github+json"
    assert seen.headers["x-github-api-version"] == "2022-11-28"
    assert TOKEN not in seen.everything_but_auth()


def test_operations_are_its_rows_of_the_table() -> None:
    assert dict(GitHubConnector().operations()) == TABLE["github"]
    assert GitHubConnector().needs_token


def test_get_issue_returns_the_fixture_facts_signed_with_the_bearer_token(
    github: Loopback,
) -> None:
    result = call(github, "get_issue", repo="acme/app", number=7)
    assert "issue acme/app#7: Login fails with a long password (open)" in result.text
    assert "labels: bug" in result.text and "assignees: none" in result.text
    assert "A password over 72 bytes is cut silently." in result.text
    assert result.data["title"] == "Login fails with a long password"
    assert result.data["body"].startswith("A password over 72 bytes")
    [seen] = github.requests
    assert (seen.method, seen.raw_path) == ("GET", f"{REPO}/issues/7")
    assert_signed(seen)


def test_repo_defaults_to_the_configured_one(github: Loopback) -> None:
    result = GitHubConnector().call(
        session(github.url, repo="acme/app"), "get_issue", {"number": "7"}
    )
    assert result.data["number"] == 7


def test_list_issues_follows_the_link_header_to_every_page(github: Loopback) -> None:
    result = call(github, "list_issues", repo="acme/app", labels=["bug", "ui"])
    numbers = [i["number"] for i in result.data["issues"]]
    assert numbers == [7, 9, 12, 3]
    assert "#12 Fix the session cookie (open) (pull request)" in result.text
    first, second = github.requests
    assert first.param("state") == "open" and first.param("labels") == "bug,ui"
    assert first.param("per_page") == "100"
    assert second.param("page") == "2"
    assert_signed(second)
    assert result.data["more"] is False


def test_an_empty_list_is_said_as_empty() -> None:
    empty = [("GET", rf"{REPO}/actions/runs", json_reply(fixture("github", "runs_empty")))]
    with Loopback(empty) as server:
        result = call(server, "list_workflow_runs", repo="acme/app", branch="main")
    assert "none: the list is empty" in result.text
    assert result.data["runs"] == []


def test_get_pull_request(github: Loopback) -> None:
    result = call(github, "get_pull_request", repo="acme/app", number=12)
    assert "pull request acme/app#12: Fix the session cookie (open)" in result.text
    assert "from fix-cookie (6dcb09b5b5) into main" in result.text
    assert "mergeable: yes (state: clean)" in result.text
    assert github.requests[0].raw_path == f"{REPO}/pulls/12"


def test_a_404_is_missing_naming_the_record_and_no_field(github: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(github, "get_issue", repo="acme/app", number=99)
    assert caught.value.source == "issue acme/app#99 on github"
    assert str(caught.value) == "missing: issue acme/app#99 on github (the service answered 404)"


def test_a_missing_run_names_the_run(github: Loopback) -> None:
    with pytest.raises(Missing, match=r"missing: Actions run 5 of acme/app on github"):
        call(github, "get_workflow_run", repo="acme/app", run_id=5)


def test_a_401_is_not_signed_in() -> None:
    with (
        Loopback([("GET", r".*", json_reply(fixture("github", "error_401"), 401))]) as server,
        pytest.raises(NotSignedIn, match="Bad credentials") as caught,
    ):
        call(server, "get_issue", repo="acme/app", number=7)
    assert TOKEN not in str(caught.value)


def test_no_token_is_not_signed_in_and_nothing_is_sent(github: Loopback) -> None:
    with pytest.raises(NotSignedIn):
        GitHubConnector().call(session(github.url, None), "get_issue", {"repo": "a/b", "number": 1})
    assert github.requests == []


def test_a_5xx_or_a_closed_port_is_unavailable() -> None:
    with (
        Loopback([("GET", r".*", json_reply(fixture("github", "error_503"), 503))]) as server,
        pytest.raises(Unavailable, match="503"),
    ):
        call(server, "get_issue", repo="acme/app", number=7)
    with pytest.raises(Unavailable, match="no answer"):
        GitHubConnector().call(
            session(closed_port_url()), "get_issue", {"repo": "acme/app", "number": 7}
        )


def test_a_failed_actions_run_reads_with_its_failing_job_and_log_excerpt(
    github: Loopback,
) -> None:
    result = call(github, "get_workflow_run", repo="acme/app", run_id=30433642)
    text = result.text
    assert "finished: status completed, conclusion failure" in text
    assert "failing jobs (1 of 2):" in text
    assert "- test (job 399444497): failure at step 'Run tests'" in text
    assert "FAILED tests/test_login.py::test_long_password - AssertionError" in text
    assert "E       AssertionError: assert False" in text
    assert "##[error]Process completed with exit code 1." in text
    assert "2024-03-05T10:01" not in text  # the runner's timestamps are left out
    assert "lint" not in text.split("failing jobs")[1]  # a passing job is not a failing one
    assert result.data["failing_jobs"][0]["failed_steps"] == ["Run tests"]
    assert "test_long_password" in result.data["failing_jobs"][0]["log_excerpt"]
    paths = [s.raw_path for s in github.requests]
    assert paths == [
        f"{REPO}/actions/runs/30433642",
        f"{REPO}/actions/runs/30433642/jobs",
        f"{REPO}/actions/jobs/{JOB}/logs",
        f"/download/job-logs/{JOB}",
    ]
    assert github.requests[1].param("filter") == "latest"


def test_a_job_log_alone_is_an_excerpt_with_line_numbers(github: Loopback) -> None:
    result = call(github, "get_job_log", repo="acme/app", job_id=JOB)
    assert result.text.startswith(f"log of Actions job {JOB} of acme/app: 27 lines;")
    assert re.search(r"^\s+23 \| FAILED tests/test_login.py", result.text, re.M)
    assert "lines not shown" in result.text  # the passing setup is left out, and said so
    assert "Syncing repository" not in result.text


def test_a_log_redirected_to_another_host_is_fetched_without_the_token() -> None:
    log = text_reply(fixture_text("github", "job_log_failed.txt"))
    with Loopback([("GET", r"/blob/log", log)]) as storage:
        redirect = Reply(302, None, {"Location": f"{storage.url}/blob/log?sig=signed"})
        with Loopback([("GET", rf"{REPO}/actions/jobs/{JOB}/logs", redirect)]) as api:
            result = call(api, "get_job_log", repo="acme/app", job_id=JOB)
        assert "exit code 1" in result.text
        [download] = storage.requests
        assert "authorization" not in download.headers
        assert download.param("sig") == "signed"
        assert_signed(api.requests[0])


def test_a_run_not_finished_is_said_not_finished_never_passed(github: Loopback) -> None:
    result = call(github, "get_workflow_run", repo="acme/app", run_id=30433600)
    assert "not finished: status in_progress; no conclusion yet" in result.text
    assert "success" not in result.text and "passed" not in result.text
    assert result.data["finished"] is False and result.data["conclusion"] is None
    assert len(github.requests) == 1  # no jobs, no logs read for it


def test_list_workflow_runs_sends_its_filters(github: Loopback) -> None:
    result = call(github, "list_workflow_runs", repo="acme/app", branch="main", event="push")
    assert "run 30433642 · CI #42 · push on main" in result.text
    assert "completed/failure" in result.text and "not finished (in_progress)" in result.text
    [seen] = github.requests
    assert seen.param("branch") == "main" and seen.param("event") == "push"


def test_list_run_jobs(github: Loopback) -> None:
    result = call(github, "list_run_jobs", repo="acme/app", run_id=30433642)
    assert "lint (job 399444496): success" in result.text
    assert "test (job 399444497): failure at step 'Run tests'" in result.text


def test_merge_sends_exactly_the_documented_request(github: Loopback) -> None:
    result = call(github, "merge_pull_request", repo="acme/app", number=12, merge_method="squash")
    assert result.text == "merged pull request acme/app#12 (commit 6dcb09b5b5)"
    [seen] = github.requests
    assert (seen.method, seen.raw_path) == ("PUT", f"{REPO}/pulls/12/merge")
    assert seen.json() == {"merge_method": "squash"}
    assert seen.headers["content-type"].startswith("application/json")
    assert_signed(seen)


def test_a_merge_github_cannot_make_is_refused_with_its_reason(github: Loopback) -> None:
    with pytest.raises(Refused, match="Pull Request is not mergeable"):
        call(github, "merge_pull_request", repo="acme/app", number=13)


def test_a_merge_method_outside_the_documented_ones_is_refused(github: Loopback) -> None:
    with pytest.raises(ConnectorError, match="merge_method"):
        call(github, "merge_pull_request", repo="acme/app", number=12, merge_method="force")
    assert github.requests == []


def test_the_other_acts_send_the_documented_requests(github: Loopback) -> None:
    made = call(github, "create_issue", repo="acme/app", title="Export fails", labels="bug, ui")
    assert made.text == "opened issue acme/app#8: https://github.com/acme/app/issues/8"
    call(github, "comment_issue", repo="acme/app", number=7, body="Reproduced on main.")
    opened = call(
        github, "open_pull_request", repo="acme/app", title="Add CSV export", head="csv-export",
        base="main", body="Closes #3",
    )  # fmt: skip
    assert "opened pull request acme/app#13 from csv-export into main" in opened.text
    call(github, "rerun_workflow", repo="acme/app", run_id=30433642)
    sent = [(s.method, s.raw_path, s.json()) for s in github.requests]
    assert sent == [
        ("POST", f"{REPO}/issues", {"title": "Export fails", "labels": ["bug", "ui"]}),
        ("POST", f"{REPO}/issues/7/comments", {"body": "Reproduced on main."}),
        ("POST", f"{REPO}/pulls",
         {"title": "Add CSV export", "head": "csv-export", "base": "main", "body": "Closes #3"}),
        ("POST", f"{REPO}/actions/runs/30433642/rerun", None),
    ]  # fmt: skip
    for seen in github.requests:
        assert_signed(seen)


def test_a_release_is_never_sent(github: Loopback) -> None:
    with pytest.raises(Refused, match="release is the person's"):
        call(github, "create_release", repo="acme/app", tag_name="v1.0", name="1.0")
    assert github.requests == []


@pytest.mark.parametrize(
    ("operation", "args"),
    [
        ("get_issue", {"repo": "acme/../admin", "number": 7}),
        ("get_issue", {"repo": "acme/app/../../user", "number": 7}),
        ("get_issue", {"repo": "acme/app?x=1", "number": 7}),
        ("get_issue", {"repo": "acme/app#x", "number": 7}),
        ("get_issue", {"repo": "acme/%2e%2e", "number": 7}),
        ("get_issue", {"repo": "acme/..", "number": 7}),
        ("get_issue", {"repo": "acme/app", "number": "7/../../../user"}),
        ("get_issue", {"repo": "acme/app", "number": "7?state=all"}),
        ("get_issue", {"repo": "acme/app", "number": "7#x"}),
        ("get_issue", {"repo": "acme/app", "number": "%2e%2e"}),
        ("get_issue", {"repo": "acme/app", "number": -1}),
        ("get_issue", {"repo": "acme/app", "number": True}),
        ("get_job_log", {"repo": "acme/app", "job_id": "1/../../../../admin"}),
        ("merge_pull_request", {"repo": "acme/app", "number": "12/../13"}),
        ("list_workflow_runs", {"repo": "acme/app", "branch": "main?x"}),
    ],
)
def test_an_argument_cannot_reach_another_endpoint(
    github: Loopback, operation: str, args: dict[str, Any]
) -> None:
    with pytest.raises(ConnectorError):
        call(github, operation, **args)
    assert github.requests == []


def test_a_configured_github_reads_through_call_connector_with_secrets_masked(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole path a role's read takes below the dispatch: config, sign-in from the named
    variable, the connector, and the mask over what comes back: a token a job echoed into
    its log is not what the role reads."""
    leaked = fixture_text("github", "job_log_failed.txt").replace(
        "Syncing repository: acme/app",
        f"Syncing repository: acme/app\nGH_TOKEN={TOKEN}\n##[error]auth with {TOKEN} failed",
    )
    served = routes()
    served.insert(0, ("GET", rf"/download/job-logs/{JOB}", text_reply(leaked)))
    with Loopback(served) as server:
        configure(root, connectors={"github": {"base_url": server.url, "repo": "acme/app",
                                               "token_env": "GH_LOOPBACK_TOKEN"}})  # fmt: skip
        monkeypatch.setenv("GH_LOOPBACK_TOKEN", TOKEN)
        result = call_connector(root, "github", "get_workflow_run", {"run_id": 30433642})
        assert_signed(server.requests[0])
    assert "conclusion failure" in result.text and "auth with" in result.text
    assert TOKEN not in result.text and TOKEN not in json.dumps(result.data)
