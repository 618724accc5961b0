"""The Slack connector against a loopback Slack Web API (HTTP 200 with `ok: false` for most
failures, cursor pagination; fixtures in fixtures/slack/): `read_channel` reads every page it
needs, by channel id or name; each `ok: false` error is mapped (missing, sign-in, unavailable,
refused); a role's `post_message` never reaches Slack; `send_draft` posts exactly the documented
`chat.postMessage`, and only when the person runs `sdd send`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    NotSignedIn,
    Refused,
    Session,
    Unavailable,
)
from sdd_git.connectors.builtin.slack import SlackConnector
from sdd_git.connectors.operations import TABLE
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
from tests.runner.scripted import script

__all__ = ["file_keyring"]

TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"
HISTORY_ERRORS = {
    "C0GONE00": (200, "error_channel_not_found", {}),
    "C0NOTIN0": (200, "error_not_in_channel", {}),
    "C0BADAUTH": (200, "error_invalid_auth", {}),
    "C0NOAUTH0": (200, "error_not_authed", {}),
    "C0SCOPE00": (200, "error_missing_scope", {}),
    "C0SLOW000": (200, "error_ratelimited", {}),
    "C0BUSY000": (429, "error_ratelimited", {"Retry-After": "30"}),
}


def _routes() -> list[Route]:
    guarded = signed_in(
        f"Bearer {TOKEN}",
        Reply(200, fixture("slack", "error_invalid_auth")),
        unsigned=Reply(200, fixture("slack", "error_not_authed")),
    )

    def history(seen: Seen, match: re.Match[str]) -> Reply:
        channel = seen.param("channel") or ""
        if channel in HISTORY_ERRORS:
            status, name, headers = HISTORY_ERRORS[channel]
            return Reply(status, fixture("slack", name), headers)
        if channel == "C0EMPTY00":
            return Reply(200, fixture("slack", "history_empty"))
        if channel not in ("C012AB3CD", "C0RELEASES"):
            return Reply(200, fixture("slack", "error_channel_not_found"))
        page = fixture("slack", "history_page2" if seen.param("cursor") else "history_page1")
        page["messages"] = page["messages"][: int(seen.param("limit") or 100)]
        return Reply(200, page)

    def listing(seen: Seen, match: re.Match[str]) -> Reply:
        return Reply(200, fixture("slack", "list_page2" if seen.param("cursor") else "list_page1"))

    def post(seen: Seen, match: re.Match[str]) -> Reply:
        if not seen.headers.get("content-type", "").startswith("application/json"):
            return Reply(200, {"ok": False, "error": "invalid_form_data"})
        channel = (seen.json() or {}).get("channel")
        if channel in ("C0GONE00", "#nowhere"):
            return Reply(200, fixture("slack", "error_channel_not_found"))
        if channel == "C0NOTIN0":
            return Reply(200, fixture("slack", "error_not_in_channel"))
        return Reply(200, fixture("slack", "post_ok"))

    return [
        ("GET", "/api/conversations.history", guarded(history)),
        ("GET", "/api/conversations.list", guarded(listing)),
        ("POST", "/api/chat.postMessage", guarded(post)),
    ]


@pytest.fixture
def slack() -> Iterator[Loopback]:
    with Loopback(_routes(), fallback=Reply(404, b"not a Slack method")) as running:
        yield running


def session(server: Loopback, token: str | None = TOKEN) -> Session:
    return Session("slack", server.url + "/api", token)


def read(server: Loopback, token: str | None = TOKEN, **args: Any) -> Any:
    return SlackConnector().call(session(server, token), "read_channel", args)


def test_the_connector_implements_exactly_its_rows_of_the_table() -> None:
    assert SlackConnector().operations() == TABLE["slack"]
    assert TABLE["slack"]["post_message"].kind == "draft"
    assert TABLE["slack"]["read_channel"].kind == "read"


def test_a_roles_post_message_never_reaches_slack(slack: Loopback) -> None:
    with pytest.raises(Refused, match="sdd send"):
        SlackConnector().call(
            session(slack), "post_message", {"channel": "C012AB3CD", "text": "hi"}
        )
    assert slack.requests == []


def test_read_channel_follows_the_cursor_to_the_last_page(slack: Loopback) -> None:
    result = read(slack, channel="C012AB3CD")

    assert [m["text"] for m in result.data["messages"]] == [
        "Release 1.4 is tagged; notes are in the change pack.",
        "Nightly build failed on export tests.",
        "main is green again",
    ]
    assert "[2024-05-03 10:45 UTC] U012AB3CDE: Release 1.4 is tagged" in result.text
    assert "(2 replies)" in result.text and "ci-bot: main is green again" in result.text
    first, second = slack.requests
    assert first.raw_path == second.raw_path == "/api/conversations.history"
    assert first.param("channel") == "C012AB3CD" and first.param("cursor") is None
    assert second.param("cursor") == "bmV4dF90czoxNTEyMDg1ODYxMDAwNTQz"


def test_read_channel_asks_for_no_more_than_the_limit(slack: Loopback) -> None:
    result = read(slack, channel="C012AB3CD", limit=1)
    assert len(result.data["messages"]) == 1
    [seen] = slack.requests
    assert seen.param("limit") == "1"


def test_a_channel_named_is_found_through_conversations_list(slack: Loopback) -> None:
    result = read(slack, channel="#releases", limit=2)

    assert result.data["channel"] == "C0RELEASES"
    paths = [(s.raw_path, s.param("cursor")) for s in slack.requests]
    assert paths == [
        ("/api/conversations.list", None),
        ("/api/conversations.list", "dGVhbTpDMDYxRkE1UEI="),
        ("/api/conversations.history", None),
    ]
    assert slack.requests[-1].param("channel") == "C0RELEASES"


def test_a_channel_name_no_one_has_is_missing(slack: Loopback) -> None:
    with pytest.raises(Missing, match="messages of Slack channel #nowhere on slack"):
        read(slack, channel="#nowhere")


def test_the_token_travels_only_in_the_authorization_header(slack: Loopback) -> None:
    read(slack, channel="#releases")
    SlackConnector().send_draft(session(slack), "#releases", "hello")
    for seen in slack.requests:
        assert seen.headers["authorization"] == f"Bearer {TOKEN}"
        assert TOKEN not in seen.everything_but_auth()


@pytest.mark.parametrize(
    ("channel", "error", "words"),
    [
        ("C0GONE00", Missing, "missing: messages of Slack channel C0GONE00 on slack"),
        ("C0NOTIN0", Missing, "Slack said not_in_channel"),
        ("C0BADAUTH", NotSignedIn, "invalid_auth"),
        ("C0NOAUTH0", NotSignedIn, "not_authed"),
        ("C0SLOW000", Unavailable, "ratelimited"),
        ("C0BUSY000", Unavailable, "429"),
        ("C0SCOPE00", Refused, "needs the scope channels:history"),
    ],
)
def test_ok_false_is_a_failure_mapped_by_its_error(
    slack: Loopback, channel: str, error: type[ConnectorError], words: str
) -> None:
    with pytest.raises(error) as caught:
        read(slack, channel=channel)
    assert type(caught.value) is error
    assert words in str(caught.value)


def test_a_refused_token_is_not_signed_in(slack: Loopback) -> None:
    with pytest.raises(NotSignedIn, match="invalid_auth"):
        read(slack, token="xoxb-0-0-wrong", channel="C012AB3CD")
    with pytest.raises(NotSignedIn):
        read(slack, token=None, channel="C012AB3CD")


def test_an_empty_channel_is_missing(slack: Loopback) -> None:
    with pytest.raises(Missing, match="no messages"):
        read(slack, channel="C0EMPTY00")


def test_send_draft_posts_exactly_the_documented_request(slack: Loopback) -> None:
    text = "Export is 10x faster in 1.4.\n<!channel> & <https://evil.test|here>"
    result = SlackConnector().send_draft(session(slack), "#releases", text)

    [post] = slack.requests
    assert (post.method, post.raw_path, post.query) == ("POST", "/api/chat.postMessage", {})
    assert post.headers["authorization"] == f"Bearer {TOKEN}"
    assert post.headers["content-type"] == "application/json; charset=utf-8"
    assert post.json() == {  # escaped: no hidden @channel ping, no disguised link
        "channel": "#releases",
        "text": "Export is 10x faster in 1.4.\n&lt;!channel&gt; &amp; &lt;https://evil.test|here&gt;",
    }
    assert result.text == "posted to #releases on slack (ts 1714740000.000400)"
    assert result.data == {"channel": "C0RELEASES", "ts": "1714740000.000400"}


@pytest.mark.parametrize(
    ("channel", "error"), [("C0GONE00", Missing), ("C0NOTIN0", Missing)]
)  # fmt: skip
def test_send_draft_to_a_channel_that_is_not_there_is_missing(
    slack: Loopback, channel: str, error: type[ConnectorError]
) -> None:
    with pytest.raises(error, match=f"Slack channel {channel} on slack"):
        SlackConnector().send_draft(session(slack), channel, "hello")


@pytest.mark.parametrize("channel", ["", "C012\nAB3CD", "x" * 300])
def test_a_channel_that_is_not_one_sends_nothing(slack: Loopback, channel: str) -> None:
    with pytest.raises(ConnectorError):
        SlackConnector().send_draft(session(slack), channel, "hello")
    with pytest.raises(ConnectorError):
        read(slack, channel=channel)
    assert slack.requests == []


def test_a_channel_argument_cannot_reach_another_method(slack: Loopback) -> None:
    with pytest.raises(Missing):
        read(slack, channel="C0GONE00&method=chat.postMessage")
    with pytest.raises(Missing):
        read(slack, channel="../chat.postMessage?channel=C012AB3CD")
    assert {s.raw_path for s in slack.requests} <= {
        "/api/conversations.history", "/api/conversations.list"
    }  # fmt: skip
    assert slack.seen("POST") == []


def test_a_roles_draft_is_posted_to_slack_only_by_sdd_send(
    sdd: SddRunner, root: Root, slack: Loopback, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_TOKEN_FOR_TEST", TOKEN)
    configure(root, connectors={"slack": {"base_url": slack.url + "/api",
                                          "token_env": "SLACK_TOKEN_FOR_TEST"}})  # fmt: skip
    post = {"tool": "connector_read", "args": {"connector": "slack", "operation": "post_message",
            "args": {"channel": "releases", "text": "Export is 10x faster in 1.4."}}}  # fmt: skip
    script(tmp_path, monkeypatch, [{"tool_calls": [post]}, {"say": "Drafted it for you."}])

    ran = sdd("role", "run", "executor", "--task", "Tell @slack #releases", "--json")

    assert ran.code == 0, ran.stderr
    assert json.loads(ran.stdout)["status"] == "done"
    assert slack.requests == []  # the role's message is a draft: nothing reached Slack
    sent = sdd("send", "DR-0001")
    assert sent.code == 0, sent.stderr
    [posted] = slack.requests
    assert posted.raw_path == "/api/chat.postMessage"
    assert posted.json() == {"channel": "releases", "text": "Export is 10x faster in 1.4."}
    assert TOKEN not in posted.everything_but_auth()
