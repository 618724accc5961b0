"""The Jenkins connector against a loopback Jenkins speaking the remote access API's wire format
(fixtures in fixtures/jenkins/ name the documentation each follows)."""

from __future__ import annotations

import base64
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
from sdd_git.connectors.builtin.jenkins import JenkinsConnector
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

TOKEN = "11" + "loopbackjenkinstoken" + "0" * 12  # a Jenkins API token is 34 hex-like chars
USER = "ada"
JOB = "/job/acme/job/app/job/main"
HTML = "text/html;charset=iso-8859-1"
CRUMB = fixture("jenkins", "crumb")["crumb"]


def html(name: str, status: int) -> Reply:
    return text_reply(fixture_text("jenkins", name), status, content_type=HTML)


def routes() -> list[Any]:
    queued = Reply(201, None, {"Location": "http://ci.example.com/queue/item/311/"})
    return [
        ("GET", rf"{JOB}/42/api/json", json_reply(fixture("jenkins", "build_42_failed"))),
        ("GET", rf"{JOB}/lastBuild/api/json", json_reply(fixture("jenkins", "build_43_running"))),
        ("GET", rf"{JOB}/41/api/json", json_reply(fixture("jenkins", "build_41_success"))),
        ("GET", rf"{JOB}/42/consoleText", text_reply(fixture_text("jenkins", "console_42.txt"))),
        ("GET", rf"{JOB}/42/testReport/api/json", json_reply(fixture("jenkins", "test_report_42"))),
        ("GET", r"/crumbIssuer/api/json", json_reply(fixture("jenkins", "crumb"))),
        ("POST", r"/job/deploy-prod/buildWithParameters", queued),
        ("POST", r"/job/nightly/build", queued),
    ]  # fmt: skip


@pytest.fixture
def jenkins() -> Iterator[Loopback]:
    with Loopback(routes(), fallback=html("error_404.html", 404)) as server:
        yield server


def session(url: str, token: str | None = TOKEN, **settings: Any) -> Session:
    return Session(name="jenkins", base_url=url, token=token, settings={"user": USER, **settings})


def call(server: Loopback, operation: str, **args: Any) -> Result:
    return JenkinsConnector().call(session(server.url), operation, args)


def assert_signed(seen: Seen) -> None:
    expected = base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    assert seen.headers["authorization"] == f"Basic {expected}"
    assert TOKEN not in seen.everything_but_auth() and expected not in seen.everything_but_auth()


def test_operations_are_its_rows_of_the_table() -> None:
    assert dict(JenkinsConnector().operations()) == TABLE["jenkins"]


def test_a_failed_build_reads_with_its_result_and_console_log_excerpt(jenkins: Loopback) -> None:
    result = call(jenkins, "get_build", job="acme/app/main", number=42)
    text = result.text
    assert text.startswith("build 42 of Jenkins job acme/app/main: acme » app » main #42")
    assert "finished: FAILURE (started 2024-03-05 10:00:00 UTC, took 95 s)" in text
    assert "cause: Started by an SCM change" in text
    assert "parameters: ENV=staging" in text
    assert "tests: 1 failed, 2 skipped, of 114" in text
    assert "[ERROR]   LoginTest.acceptsLongPassword:31 expected:<true> but was:<false>" in text
    assert "ERROR: script returned exit code 1" in text and "Finished: FAILURE" in text
    assert "Obtained Jenkinsfile" not in text  # the start of the log is left out, and said so
    assert result.data["result"] == "FAILURE" and result.data["finished"] is True
    assert [s.raw_path for s in jenkins.requests] == [f"{JOB}/42/api/json", f"{JOB}/42/consoleText"]
    for seen in jenkins.requests:
        assert_signed(seen)


def test_a_build_in_progress_is_said_not_finished(jenkins: Loopback) -> None:
    result = call(jenkins, "get_build", job="acme/app/main", number="lastBuild")
    assert "not finished: building since 2024-03-05 10:00:00 UTC; no result yet" in result.text
    assert "SUCCESS" not in result.text and "passed" not in result.text
    assert result.data["finished"] is False
    assert len(jenkins.requests) == 1  # no log read for it


def test_a_passing_build_reads_without_a_log(jenkins: Loopback) -> None:
    result = call(jenkins, "get_build", job="acme/app/main", number=41)
    assert "finished: SUCCESS" in result.text
    assert len(jenkins.requests) == 1


def test_the_console_log_is_an_excerpt(jenkins: Loopback) -> None:
    result = call(jenkins, "get_build_log", job="acme/app/main", number=42)
    assert result.text.startswith("console log of build 42 of Jenkins job acme/app/main: 38 lines;")
    assert "BUILD FAILURE" in result.text


def test_the_test_report_names_the_failing_cases(jenkins: Loopback) -> None:
    result = call(jenkins, "get_test_report", job="acme/app/main", number=42)
    assert result.text.splitlines() == [
        "test report of build 42 of Jenkins job acme/app/main: 1 failed, 111 passed, "
        "2 skipped (of 114)",
        "- com.acme.LoginTest.acceptsLongPassword: REGRESSION: expected:<true> but was:<false>",
    ]
    [seen] = jenkins.requests
    assert seen.raw_path == f"{JOB}/42/testReport/api/json"
    assert "suites[name,cases[" in (seen.param("tree") or "")


def test_a_404_html_page_is_missing_naming_the_record(jenkins: Loopback) -> None:
    with pytest.raises(Missing) as caught:
        call(jenkins, "get_test_report", job="acme/app/main", number=99)
    assert caught.value.source == "test report of build 99 of Jenkins job acme/app/main on jenkins"
    assert "Jetty" not in str(caught.value)


def test_a_401_is_not_signed_in() -> None:
    with (
        Loopback([("GET", r".*", html("error_401.html", 401))]) as server,
        pytest.raises(NotSignedIn, match="401"),
    ):
        call(server, "get_build", job="acme/app/main", number=42)


def test_no_user_is_not_signed_in_and_nothing_is_sent(jenkins: Loopback) -> None:
    bare = Session(name="jenkins", base_url=jenkins.url, token=TOKEN, settings={})
    with pytest.raises(NotSignedIn, match="user"):
        JenkinsConnector().call(bare, "get_build", {"job": "app", "number": 1})
    assert jenkins.requests == []


def test_a_5xx_or_a_closed_port_is_unavailable() -> None:
    with (
        Loopback([("GET", r".*", html("error_404.html", 503))]) as server,
        pytest.raises(Unavailable, match="503"),
    ):
        call(server, "get_build", job="acme/app/main", number=42)
    with pytest.raises(Unavailable):
        JenkinsConnector().call(
            session(closed_port_url()), "get_build", {"job": "app", "number": 1}
        )


def test_trigger_sends_the_crumb_and_the_parameters_as_a_form(jenkins: Loopback) -> None:
    result = call(
        jenkins, "trigger_build", job="deploy-prod", parameters={"ENV": "prod", "DRY": False}
    )
    assert (
        result.text
        == "Jenkins job deploy-prod was started (queue item 311) with ENV=prod, DRY=false"
    )
    crumb, start = jenkins.requests
    assert (crumb.method, crumb.raw_path) == ("GET", "/crumbIssuer/api/json")
    assert (start.method, start.raw_path) == ("POST", "/job/deploy-prod/buildWithParameters")
    assert start.headers["jenkins-crumb"] == CRUMB
    assert start.headers["content-type"] == "application/x-www-form-urlencoded"
    assert start.form() == {"ENV": ["prod"], "DRY": ["false"]}
    assert_signed(start)


def test_trigger_without_parameters_posts_build_and_goes_on_without_a_crumb_issuer() -> None:
    queued = Reply(201, None, {"Location": "http://ci.example.com/queue/item/7/"})
    with Loopback([("POST", r"/job/nightly/build", queued)],
                  fallback=html("error_404.html", 404)) as server:  # fmt: skip
        result = call(server, "trigger_build", job="nightly")
        assert result.data["queue_item"] == 7
        crumb, start = server.requests
    assert crumb.raw_path == "/crumbIssuer/api/json"
    assert (start.method, start.raw_path, start.body) == ("POST", "/job/nightly/build", b"")
    assert "jenkins-crumb" not in start.headers


def test_a_parameter_running_a_person_command_is_never_sent(jenkins: Loopback) -> None:
    with pytest.raises(Refused, match="person command"):
        call(jenkins, "trigger_build", job="deploy-prod", parameters={"CMD": "sdd complete"})
    assert jenkins.requests == []


@pytest.mark.parametrize(
    ("operation", "args"),
    [
        ("get_build", {"job": "../../script", "number": 1}),
        ("get_build", {"job": "acme/../../manage", "number": 1}),
        ("get_build", {"job": "app?x=1", "number": 1}),
        ("get_build", {"job": "app#x", "number": 1}),
        ("get_build", {"job": "%2e%2e", "number": 1}),
        ("get_build", {"job": "app//x", "number": 1}),
        ("get_build", {"job": "app\\..\\x", "number": 1}),
        ("get_build", {"job": "app", "number": "1/../../../script"}),
        ("get_build", {"job": "app", "number": "lastBuild/../.."}),
        ("get_build_log", {"job": "app", "number": 0}),
        ("trigger_build", {"job": "app/../../../script"}),
        ("trigger_build", {"job": "app", "parameters": {"a=b&c": "d"}}),
        ("trigger_build", {"job": "app", "parameters": "ENV=prod"}),
    ],
)
def test_an_argument_cannot_reach_another_endpoint(
    jenkins: Loopback, operation: str, args: dict[str, Any]
) -> None:
    with pytest.raises(ConnectorError):
        call(jenkins, operation, **args)
    assert [s for s in jenkins.requests if s.raw_path != "/crumbIssuer/api/json"] == []


def test_a_job_name_with_a_space_is_one_encoded_segment(jenkins: Loopback) -> None:
    with pytest.raises(Missing):
        call(jenkins, "get_build", job="team a/my app", number=1)
    assert jenkins.requests[0].raw_path == "/job/team%20a/job/my%20app/1/api/json"
