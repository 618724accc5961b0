"""Attack routes through connectors from the other side: reads that would act, a hostile or
broken service (huge or endless answers, redirects that would carry the token away, a slow
drip, an error body holding secrets), and secrets on every way out (errors, logs, child
processes, `sdd connectors`, `sdd connect`, the config, the keyring inside a sandbox).

Every server here is a real HTTP server on loopback (tests/connectors/loopback.py), speaking the
service's wire format where the route needs it and whatever a hostile service would say where
it does not."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git.connectors import http
from sdd_git.connectors.base import (
    DRAFT,
    READ,
    ConnectorError,
    Missing,
    Result,
    Session,
    Unavailable,
)
from sdd_git.connectors.builtin.github import GitHubConnector
from sdd_git.connectors.builtin.jenkins import JenkinsConnector
from sdd_git.connectors.operations import TABLE
from sdd_git.connectors.registry import make_connector
from sdd_git.masking.returned import session_mask
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.connectors import (
    test_aha,
    test_artifactory,
    test_asana,
    test_azure_devops,
    test_github,
    test_gitlab,
    test_jenkins,
    test_jira,
    test_slack,
)
from tests.connectors.core_support import GH_TOKEN, TOKEN_VARIABLE, configure, file_keyring
from tests.connectors.loopback import Reply, Seen, json_reply, text_reply
from tests.connectors.loopback_trackers import Loopback
from tests.runner.scripted import add_role, events, script, transcript

__all__ = ["file_keyring"]

TOKEN = "ghp_" + "HostileRouteToken" + "z" * 19
OTHER_SECRET = "ghp_" + "SomeoneElsesToken0" + "k" * 18  # a token a service hands back
REPO = "/repos/acme/app"


def github_session(url: str, token: str = TOKEN, **settings: Any) -> Session:
    return Session("github", url, token, settings, session_mask([token]))


def github(url: str, operation: str, **args: Any) -> Result:
    return GitHubConnector().call(github_session(url), operation, args)


# -- route 2: a read never sends anything but GET -----------------------------------------------

# Each READ row of the table, called on its built-in connector against that service's loopback
# (its documented routes, and a recorder for anything else), with arguments its fixtures answer.
Caller = Callable[[Any, str], Any]
READS: dict[str, tuple[Callable[[], list[Any]], list[tuple[str, dict[str, Any]]], Caller]] = {
    "github": (test_github.routes, [
        ("get_issue", {"repo": "acme/app", "number": 7}),
        ("list_issues", {"repo": "acme/app", "state": "all", "labels": ["bug"]}),
        ("get_pull_request", {"repo": "acme/app", "number": 12}),
        ("list_workflow_runs", {"repo": "acme/app", "branch": "main", "status": "failure"}),
        ("get_workflow_run", {"repo": "acme/app", "run_id": 30433642}),
        ("list_run_jobs", {"repo": "acme/app", "run_id": 30433642}),
        ("get_job_log", {"repo": "acme/app", "job_id": test_github.JOB}),
    ], lambda s, op, **a: test_github.call(s, op, **a)),
    "gitlab": (test_gitlab.routes, [
        ("get_issue", {"iid": 6}), ("get_merge_request", {"iid": 1}),
        ("list_pipelines", {"ref": "main", "status": "failed"}),
        ("get_pipeline", {"pipeline_id": 46}),
        ("list_pipeline_jobs", {"pipeline_id": 46}), ("get_job_log", {"job_id": 8}),
    ], lambda s, op, **a: test_gitlab.call(s, op, **a)),
    "jenkins": (test_jenkins.routes, [
        ("get_build", {"job": "acme/app/main", "number": 42}),
        ("get_build_log", {"job": "acme/app/main", "number": 42}),
        ("get_test_report", {"job": "acme/app/main", "number": 42}),
    ], lambda s, op, **a: test_jenkins.call(s, op, **a)),
    "artifactory": (test_artifactory.routes, [
        ("get_item_info", {"repo": "libs-release-local", "path": test_artifactory.JAR}),
        ("get_build_info", {"build_name": "app", "build_number": "51"}),
    ], lambda s, op, **a: test_artifactory.call(s, op, **a)),
    "azure-devops": (test_azure_devops.routes, [
        ("get_work_item", {"id": 42}), ("get_build", {"build_id": 301}),
        ("get_build_log", {"build_id": 301, "log_id": 7}),
    ], lambda s, op, **a: test_azure_devops.call(s, op, **a)),
    "jira": (test_jira._jira_routes, [
        ("get_issue", {"key": "ACME-7"}), ("search", {"jql": "project = ACME"}),
        ("get_transitions", {"key": "ACME-7"}),
    ], lambda s, op, **a: test_jira.call(s, op, **a)),
    "aha": (test_aha._routes, [("get_feature", {"id": "PRJ1-1"})],
            lambda s, op, **a: test_aha.call(s, op, **a)),
    "asana": (test_asana._routes, [("get_task", {"task": test_asana.TASK})],
              lambda s, op, **a: test_asana.call(s, op, **a)),
    "slack": (test_slack._routes, [("read_channel", {"channel": "#releases", "limit": 5})],
              lambda s, op, **a: test_slack.read(s, **a)),
}  # fmt: skip


def test_the_reads_below_are_every_read_row_of_the_table() -> None:
    rows = {(k, o.name) for k, ops in TABLE.items() for o in ops.values() if o.kind == READ}
    tried = {(k, op) for k, (_, cases, _) in READS.items() for op, _ in cases}
    assert tried == rows


@pytest.mark.parametrize("kind", sorted(READS))
def test_every_read_row_sends_only_get_requests(kind: str) -> None:
    routes, cases, caller = READS[kind]
    with Loopback(routes(), fallback=Reply(404, {"message": "Not Found"})) as server:
        for operation, args in cases:
            server.clear()
            with contextlib.suppress(ConnectorError):  # what it said does not matter here
                caller(server, operation, **args)
            methods = {seen.method for seen in server.requests}
            assert methods == {"GET"}, (kind, operation, methods)


@pytest.mark.parametrize(
    ("kind", "operation"),
    sorted((k, o.name) for k, ops in TABLE.items() for o in ops.values() if o.kind == DRAFT),
)
def test_a_draft_row_called_on_its_connector_sends_nothing(kind: str, operation: str) -> None:
    with Loopback(fallback=json_reply({"ok": True})) as server:
        session = Session(kind, server.url, "xoxb-1-2-draftroutetoken", {"team": "t"})
        with pytest.raises(ConnectorError):
            make_connector(kind).call(session, operation, {"channel": "C0123ABCD", "text": "hi"})
        assert server.requests == []


@pytest.mark.parametrize(
    "args",
    [
        {"repo": "acme/app", "number": "7?_method=POST"},
        {"repo": "acme/app/../../user", "number": 7},
        {"repo": "acme/app%2F..%2F..", "number": 7},
        {"repo": "acme/app", "number": 7, "_method": "DELETE"},
        {"repo": "acme/app", "number": 7, "X-HTTP-Method-Override": "PUT"},
        {"repo": "acme/app", "number": 7, "headers": {"X-HTTP-Method-Override": "PUT"}},
    ],
)
def test_no_argument_turns_a_read_into_another_method_or_endpoint(args: dict[str, Any]) -> None:
    with Loopback(test_github.routes()) as server:
        with contextlib.suppress(ConnectorError):
            github(server.url, "get_issue", **args)
        for seen in server.requests:
            assert seen.method == "GET"
            assert seen.raw_path == f"{REPO}/issues/7"
            assert seen.raw_query == ""
            assert "x-http-method-override" not in seen.headers


# -- route 4: a hostile service -------------------------------------------------------------------


def test_a_next_link_that_loops_is_followed_a_bounded_number_of_times() -> None:
    def page(seen: Seen, match: Any) -> Reply:
        here = f"http://{seen.headers['host']}{REPO}/issues?page=1"
        return json_reply([{"number": 1, "title": "again", "state": "open"}],
                          headers={"Link": f'<{here}>; rel="next"'})  # fmt: skip

    with Loopback([("GET", rf"{REPO}/issues", page)]) as server:
        result = github(server.url, "list_issues", repo="acme/app")
    assert len(server.requests) <= 10
    assert "(more exist: only these were read)" in result.text


def test_a_next_link_to_another_host_never_gets_the_token() -> None:
    with Loopback(fallback=json_reply([])) as elsewhere:
        link = {"Link": f'<{elsewhere.url}{REPO}/issues?page=2>; rel="next"'}
        first = json_reply([{"number": 1, "title": "t", "state": "open"}], headers=link)
        with (
            Loopback([("GET", rf"{REPO}/issues", first)]) as server,
            pytest.raises(Unavailable, match="points away"),
        ):
            github(server.url, "list_issues", repo="acme/app")
        assert elsewhere.requests == []


def test_a_full_url_on_the_same_host_but_plain_http_never_gets_the_token() -> None:
    # An https API whose answer points at http on the same host: the token would travel in clear.
    with Loopback(fallback=json_reply({})) as server:
        port = server.url.rsplit(":", 1)[1]
        session = github_session(f"https://127.0.0.1:{port}")
        with pytest.raises(Unavailable, match="points away"):
            http.request(
                session, "GET", f"http://127.0.0.1:{port}{REPO}/issues?page=2",
                source="issues", headers={"Authorization": f"Bearer {TOKEN}"},
            )  # fmt: skip
        assert server.requests == []


@pytest.mark.parametrize(
    "location",
    [
        "file:///etc/passwd",
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://10.0.0.1/internal",
        "gopher://127.0.0.1:25/",
    ],
)
def test_a_job_log_redirect_to_a_file_or_an_internal_address_is_refused(
    monkeypatch: pytest.MonkeyPatch, location: str
) -> None:
    monkeypatch.setattr(http, "TIMEOUT_SECONDS", 0.5)  # were it tried, it would not hang the suite
    redirect = Reply(302, None, {"Location": location})
    with (
        Loopback([("GET", rf"{REPO}/actions/jobs/9/logs", redirect)]) as server,
        pytest.raises(Unavailable, match=r"address|https"),
    ):
        github(server.url, "get_job_log", repo="acme/app", job_id=9)


def test_a_job_log_redirect_to_http_on_the_api_host_from_https_keeps_the_token_off_the_wire(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An https API answering a redirect to plain http on its own host: never followed with the
    # token (it would travel in clear), the same as any other host.
    sent: list[dict[str, Any]] = []

    def fake(session: Session, method: str, path: str, **kwargs: Any) -> http.Answer:
        sent.append({"base": session.base_url, "token": session.token, "path": path, **kwargs})
        if not sent[1:]:
            location = "http://api.github.test/download/log?sig=abc"
            return http.Answer(302, {"location": location}, b"")
        return http.Answer(200, {}, b"the log")

    monkeypatch.setattr("sdd_git.connectors.builtin.github.request", fake)
    session = github_session("https://api.github.test")
    with contextlib.suppress(Unavailable):
        GitHubConnector().call(session, "get_job_log", {"repo": "acme/app", "job_id": 9})
    for call in sent[1:]:
        assert call["token"] is None
        assert "Authorization" not in call.get("headers", {})


def test_a_huge_answer_is_cut_and_said_to_be_not_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http, "MAX_BODY", 64 * 1024)
    huge = '{"number": 7, "title": "' + "x" * 200_000 + '"}'
    with (
        Loopback([("GET", rf"{REPO}/issues/7", text_reply(huge))]) as server,
        pytest.raises(Unavailable, match="not JSON"),
    ):
        github(server.url, "get_issue", repo="acme/app", number=7)


@pytest.mark.parametrize("body", ["{not json", "<html>Sign in</html>", ""])
def test_a_malformed_answer_is_never_read_as_the_record(body: str) -> None:
    with (
        Loopback([("GET", rf"{REPO}/issues/7", text_reply(body))]) as server,
        pytest.raises((Unavailable, Missing)),
    ):
        github(server.url, "get_issue", repo="acme/app", number=7)


# A 200 whose body is not the record: never rendered as one (no "issue #7: None (None)", no
# "not finished" for a build that said nothing).
SHAPES = [[], "a string", 123, {}, {"message": "Not Found"}, {"ok": True}]
SINGLE_RECORDS: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    ("github", "get_issue", {"repo": "acme/app", "number": 7}, {}),
    ("github", "get_pull_request", {"repo": "acme/app", "number": 7}, {}),
    ("github", "get_workflow_run", {"repo": "acme/app", "run_id": 5}, {}),
    ("gitlab", "get_issue", {"project": "acme/app", "iid": 3}, {}),
    ("gitlab", "get_merge_request", {"project": "acme/app", "iid": 3}, {}),
    ("gitlab", "get_pipeline", {"project": "acme/app", "pipeline_id": 4}, {}),
    ("jenkins", "get_build", {"job": "app", "number": 42}, {"user": "ada"}),
    ("jenkins", "get_test_report", {"job": "app", "number": 42}, {"user": "ada"}),
    ("azure-devops", "get_build", {"project": "p", "build_id": 5}, {"organization": "o"}),
    ("azure-devops", "get_work_item", {"project": "p", "id": 5}, {"organization": "o"}),
    ("artifactory", "get_item_info", {"repo": "libs", "path": "a/b.jar"}, {}),
    ("artifactory", "get_build_info", {"build_name": "app", "build_number": "7"}, {}),
    ("jira", "get_issue", {"key": "ACME-7"}, {}),
    ("aha", "get_feature", {"id": "APP-1"}, {}),
    ("asana", "get_task", {"task": "1204567890123456"}, {}),
]


@pytest.mark.parametrize("body", SHAPES, ids=[json.dumps(s)[:12] for s in SHAPES])
@pytest.mark.parametrize(
    ("kind", "operation", "args", "settings"), SINGLE_RECORDS,
    ids=[f"{k}-{o}" for k, o, _, _ in SINGLE_RECORDS],
)  # fmt: skip
def test_a_200_whose_body_is_not_the_record_is_never_read_as_one(
    kind: str, operation: str, args: dict[str, Any], settings: dict[str, Any], body: Any
) -> None:
    with Loopback(fallback=Reply(200, body)) as server:
        session = Session(kind, server.url, "token-for-shapes-000000", settings)
        with pytest.raises(ConnectorError):  # a connector error, never a crash or a record
            make_connector(kind).call(session, operation, args)


def test_a_foreign_error_inside_a_connector_is_mapped_at_the_edge_without_its_words(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.connectors.calls import call_connector

    def broken(self: Any, session: Session, operation: str, args: Any) -> Result:
        raise TypeError(f"cannot read {session.token} in {{'body': [1]}}")

    monkeypatch.setattr(GitHubConnector, "call", broken)
    monkeypatch.setenv(TOKEN_VARIABLE, TOKEN)
    configure(root, connectors={"github": {"token_env": TOKEN_VARIABLE}})
    with pytest.raises(Unavailable) as failed:
        call_connector(root, "github", "get_issue", {"repo": "acme/app", "number": 7})
    assert "TypeError" in failed.value.message and TOKEN not in failed.value.message


class Drip:
    """A server that sends its headers, then one byte of body every `every` seconds."""

    def __init__(self, every: float = 0.05, length: int = 100_000) -> None:
        self.every, self.length = every, length
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.recv(65536)
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {self.length}\r\n\r\n"
                try:
                    conn.sendall(head.encode())
                    while not self.stop.is_set():
                        conn.sendall(b" ")
                        time.sleep(self.every)
                except OSError:
                    continue

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def drip() -> Iterator[Drip]:
    server = Drip()
    yield server
    server.close()


def test_a_server_that_drips_its_answer_is_cut_off_by_the_whole_call_deadline(
    monkeypatch: pytest.MonkeyPatch, drip: Drip
) -> None:
    # Each byte arrives well within the socket's timeout, so only a deadline on the whole
    # call can end it; without one, this read would take an hour and a half.
    monkeypatch.setattr(http, "TIMEOUT_SECONDS", 0.5)
    monkeypatch.setattr(http, "DEADLINE_SECONDS", 1.0, raising=False)
    ended: list[BaseException | None] = []

    def read() -> None:
        try:
            github(drip.url, "get_issue", repo="acme/app", number=7)
        except BaseException as exc:
            ended.append(exc)
        else:
            ended.append(None)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert ended, "the read was still running after 10 s"
    assert isinstance(ended[0], Unavailable) and "took longer" in str(ended[0])


def test_a_server_that_never_answers_is_unavailable_after_the_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http, "TIMEOUT_SECONDS", 0.3)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts the connection, never says a word
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        with pytest.raises(Unavailable, match="no answer"):
            github(url, "get_issue", repo="acme/app", number=7)


# -- route 5: secrets -----------------------------------------------------------------------------


def _jenkins_basic(token: str) -> str:
    return base64.b64encode(f"ada:{token}".encode()).decode()


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 500, 503])
def test_an_error_body_echoing_the_token_in_any_form_never_reaches_the_error_text(
    status: int,
) -> None:
    token = "11" + "jenkinsEchoToken" + "0" * 16
    echoed = (
        f"token {token} / basic {_jenkins_basic(token)} / "
        f"b64 {base64.b64encode(token.encode()).decode()} / hex {token.encode().hex()} / "
        f"someone else's {OTHER_SECRET} / password=hunter2hunter2x9"
    )
    with Loopback(fallback=text_reply(echoed, status)) as server:
        session = Session("ci", server.url, token, {"user": "ada"}, session_mask([token]))
        with pytest.raises(ConnectorError) as failed:
            JenkinsConnector().call(session, "get_build", {"job": "app", "number": 1})
    said = f"{failed.value.message} {failed.value.hint or ''}"
    for secret in (token, _jenkins_basic(token), base64.b64encode(token.encode()).decode(),
                   token.encode().hex(), OTHER_SECRET, "hunter2hunter2x9"):  # fmt: skip
        assert secret not in said, (status, said)


def test_a_token_with_a_trailing_newline_is_sent_clean_and_never_leaks_in_a_crash(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.connectors.calls import call_connector

    with Loopback(test_github.routes()) as server:
        monkeypatch.setenv(TOKEN_VARIABLE, test_github.TOKEN + "\r\n")
        configure(
            root, connectors={"github": {"base_url": server.url, "token_env": TOKEN_VARIABLE}}
        )
        result = call_connector(root, "github", "get_issue", {"repo": "acme/app", "number": 7})
        assert server.requests[0].headers["authorization"] == f"Bearer {test_github.TOKEN}"
    assert test_github.TOKEN not in result.text


def test_a_header_a_session_cannot_send_is_unavailable_without_its_value() -> None:
    bad = TOKEN + "\nX-Injected: yes"
    with Loopback(fallback=json_reply({})) as server:
        with pytest.raises(Unavailable) as failed:
            http.request(
                github_session(server.url, bad), "GET", "/x", source="x",
                headers={"Authorization": f"Bearer {bad}"},
            )  # fmt: skip
        assert server.requests == []
    assert TOKEN not in failed.value.message


def test_a_token_the_service_echoes_into_a_record_never_reaches_the_model_or_the_log(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def echo(seen: Seen, match: Any) -> Reply:
        auth = seen.headers.get("authorization", "")
        body = (
            f"echo {auth} / {base64.b64encode(auth.encode()).decode()} / "
            f"{auth.encode().hex()} / {OTHER_SECRET} / api_key=Zq8RmYx4TuV7wKp2Nd5Hc9Lb"
        )
        issue = {"number": 7, "title": "leak", "state": "open", "body": body,
                 "user": {"login": "x"}, "labels": [], "assignees": []}  # fmt: skip
        return json_reply(issue)

    with Loopback([("GET", rf"{REPO}/issues/7", echo)], fallback=Reply(500, f"boom {GH_TOKEN}")
                  ) as server:  # fmt: skip
        monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
        configure(
            root, connectors={"github": {"base_url": server.url, "token_env": TOKEN_VARIABLE}}
        )
        add_role(root, "reader", produces="other")
        script(tmp_path, monkeypatch, [
            {"tool_calls": [{"tool": "connector_read", "args": {"connector": "github",
             "operation": "get_issue", "args": {"repo": "acme/app", "number": 7}}}]},
            {"tool_calls": [{"tool": "connector_read", "args": {"connector": "github",
             "operation": "get_issue", "args": {"repo": "acme/app", "number": 8}}}]},
            {"say": "Read it."},
        ])  # fmt: skip
        result = sdd("role", "run", "reader", "--json", "--task", "Read issue 7 on @github")
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "done", result.stderr
    everything = "\n".join(
        [
            (root.sdd / "role-runs" / f"{outcome['run']}.jsonl").read_text(),
            json.dumps(transcript(tmp_path)),
            result.stdout,
            result.stderr,
            *(p.read_text() for p in (root.local).rglob("*") if p.is_file()),
        ]
    )
    for secret in (GH_TOKEN, base64.b64encode(GH_TOKEN.encode()).decode()[:24],
                   GH_TOKEN.encode().hex(), OTHER_SECRET, "Zq8RmYx4TuV7wKp2Nd5Hc9Lb"):  # fmt: skip
        assert secret not in everything
    results = [e for e in events(root, outcome["run"]) if e["event"] == "tool_result"]
    assert "could not answer (500)" in str(results[1]["content"])


def test_a_connector_token_never_reaches_a_command_a_role_runs(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.runner.scripted import accepted_change

    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    monkeypatch.setenv("INNOCENT_NAME", GH_TOKEN)  # the same token under a name that says nothing
    configure(root, connectors={"github": {"base_url": "http://127.0.0.1:9",
                                           "token_env": TOKEN_VARIABLE}})  # fmt: skip
    accepted_change(root)
    rule = "boundary:\n  always_allow:\n    - {tool: run_command, inputs: {command: env}}\n"
    add_role(root, "builder", extra=rule)
    script(tmp_path, monkeypatch, [
        {"tool_calls": [{"tool": "run_command", "args": {"command": "env", "purpose": "look"}}]},
        {"say": "Looked."},
    ])  # fmt: skip
    result = sdd("role", "run", "builder", "--json", "--task", "Show the environment")
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "done", result.stderr
    [shown] = [e for e in events(root, outcome["run"]) if e["event"] == "tool_result"]
    assert TOKEN_VARIABLE not in str(shown["content"])
    assert "INNOCENT_NAME" not in str(shown["content"])
    assert GH_TOKEN not in json.dumps(transcript(tmp_path))


def test_sdd_connectors_json_never_prints_a_token(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    configure(root, connectors={"github": {"token_env": TOKEN_VARIABLE}})
    monkeypatch.setenv("SLACK_PAT_FOR_TEST", "xoxb-1-2-keyringroutetoken")
    assert sdd("connect", "slack", "--token-from", "env:SLACK_PAT_FOR_TEST").code == 0
    for args in (("connectors", "--json"), ("connectors",)):
        result = sdd(*args)
        assert result.code == 0
        assert GH_TOKEN not in result.stdout + result.stderr
        assert "keyringroutetoken" not in result.stdout + result.stderr


def test_sdd_connect_from_a_variable_never_echoes_it(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_GH_FOR_TEST", GH_TOKEN)
    result = sdd("connect", "github", "--token-from", "env:MY_GH_FOR_TEST")
    assert result.code == 0, result.stderr
    assert GH_TOKEN not in result.stdout + result.stderr
    assert GH_TOKEN not in root.config.read_text()


@pytest.mark.parametrize(
    "entry",
    [
        {"api_token": "9f3c2b1a0e8d7c6b5a4f3e2d1c0b9a8f"},
        {"auth_token": "9f3c2b1a0e8d7c6b5a4f3e2d1c0b9a8f"},
        {"Token": "9f3c2b1a0e8d7c6b5a4f3e2d1c0b9a8f"},
        {"repo": GH_TOKEN},
        {"headers": {"Authorization": f"Bearer {GH_TOKEN}"}},
        {"user": "ada", "pat": GH_TOKEN},
    ],
)
def test_a_token_written_into_the_connector_config_is_refused(
    root: Root, entry: dict[str, Any]
) -> None:
    from sdd_git.connectors.config import load_connectors
    from sdd_git.errors import RecordError

    configure(root, connectors={"github": entry})
    with pytest.raises(RecordError, match="token"):
        load_connectors(root)


@pytest.fixture
def outside_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder that is not under /tmp: the sandbox gives every command a private /tmp, so a
    home under the test's tmp_path would be hidden for that reason alone and prove nothing."""
    import pwd
    import shutil
    import tempfile

    # The checkout, or for a user who may not write there (CI's ordinary user), their own home
    # (from the password database: the tests point HOME into /tmp).
    own_home = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
    candidates = [Path(__file__).resolve().parents[2], own_home]
    usable = [
        base
        for base in candidates
        if not (base.is_relative_to("/tmp") or base.is_relative_to("/var/tmp"))
        and os.access(base, os.W_OK)
    ]
    if not usable:
        pytest.skip("neither the checkout nor the home folder is writable outside /tmp")
    folder = Path(tempfile.mkdtemp(prefix=".attack-home-", dir=usable[0]))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_role_command_cannot_read_a_keyring_file_or_reach_the_session_bus(
    root: Root, outside_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox hides the keyring's files and the person's runtime folder (the D-Bus session
    socket through which the Secret Service hands out every stored token, gpg-agent's and
    ssh-agent's sockets)."""
    from sdd_git.sandbox import choose
    from sdd_git.sandbox.execute import run

    if not choose.current().working:
        pytest.skip("no working sandbox on this machine")
    home = outside_tmp / "home"
    monkeypatch.setenv("HOME", str(home))
    kept = {
        home / ".local/share/python_keyring/keyring_pass.cfg": "github = c2VjcmV0LWtleXJpbmc=",
        home / ".local/share/keyrings/login.keyring": "GnomeKeyring\n",
        home / ".local/share/kwalletd/kdewallet.kwl": "KWALLET\n",
    }
    for path, text in kept.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    runtime = outside_tmp / "run-user"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    bus = socket.socket(socket.AF_UNIX)
    bus.bind(str(runtime / "bus"))
    bus.listen(1)
    reads = "; ".join(f"cat '{path}' 2>/dev/null && echo READ-{i}" for i, path in enumerate(kept))
    connect = (
        f"{sys.executable} -c 'import socket; s=socket.socket(socket.AF_UNIX); "
        f's.connect("{runtime}/bus"); print("REACHED-BUS")\' 2>/dev/null'
    )
    try:
        control = home / "ordinary.txt"
        control.write_text("ORDINARY-FILE")
        done = run(root.path, f"{reads}; {connect}; cat '{control}'; true", dict(os.environ),
                   network=False, timeout=30)  # fmt: skip
    finally:
        bus.close()
    assert "ORDINARY-FILE" in done.output  # the home is there to read; only these are hidden
    assert "READ-" not in done.output and "c2VjcmV0" not in done.output
    assert "REACHED-BUS" not in done.output


def test_a_borrowing_tool_that_fails_with_the_token_in_its_words_never_echoes_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    token = "glpat-" + "BorrowRouteToken0" + "x" * 6
    for name in ("glab", "gh"):
        tool = bin_dir / name
        tool.write_text(f"#!/bin/sh\necho 'Token: {token}' >&2\necho '{token} expired'\nexit 1\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    for name, source in (("gitlab", "glab"), ("github", "gh")):
        result = sdd("connect", name, "--token-from", source)
        assert result.code != 0
        assert token not in result.stdout + result.stderr
