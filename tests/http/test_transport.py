"""The one HTTP client: its proxies (against a real proxy on loopback, started and stopped by
the test), NO_PROXY and loopback never proxied, and the transport seam both callers send
through."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest

from sdd_git.connectors import http as connector_http
from sdd_git.connectors.base import Missing, Session, Unavailable
from sdd_git.http.proxy import proxy_for
from sdd_git.http.transport import Request, StdlibTransport, Unreachable
from sdd_git.providers.http import HttpClient
from tests.http.doubles import RecordingTransport
from tests.http.proxyserver import running_proxy

ORIGIN = "origin.test"  # a name nothing resolves: reaching it at all proves the proxy was used


@pytest.fixture(autouse=True)
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    yield


def test_http_goes_through_the_proxy_whole_with_its_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with running_proxy() as seen:
        monkeypatch.setenv("HTTP_PROXY", seen.url.replace("://", "://maya:p%40ss@"))
        answer = StdlibTransport(5.0).send(Request("GET", f"http://{ORIGIN}/v1/models?x=1"))
    assert answer.status == 200 and json.loads(answer.body) == {"through": "the proxy"}
    assert seen.lines == [f"GET http://{ORIGIN}/v1/models?x=1 HTTP/1.1"]
    assert seen.authorization == ["Basic " + base64.b64encode(b"maya:p@ss").decode()]


def test_https_asks_the_proxy_for_a_tunnel(monkeypatch: pytest.MonkeyPatch) -> None:
    with running_proxy() as seen:
        monkeypatch.setenv("HTTPS_PROXY", seen.url)
        with pytest.raises(Unreachable, match="403"):
            StdlibTransport(5.0).send(Request("GET", f"https://{ORIGIN}/v1/models"))
    assert [line.split(" HTTP/")[0] for line in seen.lines] == [f"CONNECT {ORIGIN}:443"]


def test_connectors_honour_https_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    session = Session("github", f"https://{ORIGIN}", "ghp_" + "x" * 36)
    with running_proxy() as seen:
        monkeypatch.setenv("HTTPS_PROXY", seen.url)
        with pytest.raises(Unavailable, match=f"no answer from https://{ORIGIN}"):
            connector_http.request(session, "GET", "/repos/acme/app", source="acme/app")
    assert [line.split(" HTTP/")[0] for line in seen.lines] == [f"CONNECT {ORIGIN}:443"]


def test_loopback_never_goes_through_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with running_proxy() as origin:  # here the server is the origin, asked directly
        monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
        answer = StdlibTransport(5.0).send(Request("GET", f"{origin.url}/v1/models"))
    assert answer.status == 200
    assert origin.lines == ["GET /v1/models HTTP/1.1"]


def test_no_proxy_and_loopback_hosts_get_no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "internal.example,.corp.example")
    assert proxy_for("https", "api.example.com") == "http://proxy.example:3128"
    assert proxy_for("https", "internal.example") is None
    assert proxy_for("https", "git.corp.example") is None
    for host in ("127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost"):
        assert proxy_for("https", host) is None, host
    assert proxy_for("http", "api.example.com") is None  # HTTPS_PROXY is for https only


def test_a_connector_call_goes_through_the_transport_seam(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    double = RecordingTransport()
    double.answer(200, b'{"id": 7}')
    double.answer(404, b'{"message": "Not Found"}')
    monkeypatch.setattr(connector_http, "default_transport", lambda: double)
    session = Session("github", "https://api.github.com", None)
    got = connector_http.request(session, "POST", "/repos/a/b/issues", source="x", body={"a": 1})
    assert got.json() == {"id": 7}
    sent = double.sent[0]
    assert (sent.method, sent.url, sent.body) == (
        "POST",
        "https://api.github.com/repos/a/b/issues",
        b'{"a": 1}',
    )
    assert sent.headers["Content-Type"] == "application/json; charset=utf-8"
    with pytest.raises(Missing):
        connector_http.request(session, "GET", "/repos/a/b", source="repo a/b")
    assert double.closed == 2  # a connector's connection lasts one call


def test_a_provider_call_goes_through_the_transport_seam() -> None:
    double = RecordingTransport()
    double.answer(200, b'{"ok": true}')
    client = HttpClient(provider="openai", timeout=5.0, transport=double)
    got = client.post_json("https://api.example.com/v1/chat", {"m": 1}, {"Authorization": "K"})
    assert got == {"ok": True}
    sent = double.sent[0]
    assert sent.method == "POST" and json.loads(sent.body or b"") == {"m": 1}
    assert sent.headers["Authorization"] == "K"
    assert sent.headers["Content-Type"] == "application/json"
    client.close()
    assert double.closed == 1
