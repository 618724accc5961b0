"""The Teams connector against a loopback Microsoft Graph (v1.0 wire format: OData lists,
`{error: {code, message}}` bodies; fixtures in fixtures/teams/): a role's `post_message` never
reaches Teams; `send_draft` posts exactly the documented channel message, to a channel given by
ids or by its display name; a 404 is missing, a 401 a sign-in to renew; no channel or team id
can reach another endpoint."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest

from sdd_git.connectors.base import ConnectorError, Missing, NotSignedIn, Refused, Session
from sdd_git.connectors.builtin.teams import TeamsConnector
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

__all__ = ["file_keyring"]

TOKEN = (
    "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2dyYXBoIn0.c2lnbmF0dXJlZm9ydGVzdHM"
)
TEAM = "8b081ef6-4792-4def-b2c9-c363a1bf41d5"
CHANNEL = "19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2"
MESSAGES = f"/v1.0/teams/{TEAM}/channels/{quote(CHANNEL, safe='')}/messages"


def _routes() -> list[Route]:
    guarded = signed_in(f"Bearer {TOKEN}", Reply(401, fixture("teams", "error_401")))

    def channels(seen: Seen, match: re.Match[str]) -> Reply:
        wanted = seen.param("$filter")
        found = "channels_releases" if wanted == "displayName eq 'releases'" else "channels_none"
        return Reply(200, fixture("teams", found))

    return [
        ("POST", re.escape(MESSAGES),
         guarded(lambda s, m: Reply(201, fixture("teams", "message_created")))),
        ("GET", f"/v1.0/teams/{TEAM}/channels", guarded(channels)),
        ("POST", f"/v1.0/teams/{TEAM}/channels/19%3Aprivate%40thread.tacv2/messages",
         guarded(lambda s, m: Reply(403, fixture("teams", "error_403")))),
    ]  # fmt: skip


@pytest.fixture
def teams() -> Iterator[Loopback]:
    with Loopback(_routes(), fallback=Reply(404, fixture("teams", "error_404"))) as running:
        yield running


def session(server: Loopback, token: str | None = TOKEN, **settings: Any) -> Session:
    return Session("teams", server.url + "/v1.0", token, {"team": TEAM, **settings})


def send(server: Loopback, channel: str, text: str = "hello", **kwargs: Any) -> Any:
    return TeamsConnector().send_draft(session(server, **kwargs), channel, text)


def test_the_connector_implements_exactly_its_rows_of_the_table() -> None:
    assert TeamsConnector().operations() == TABLE["teams"]
    assert TABLE["teams"]["post_message"].kind == "draft"


def test_a_roles_post_message_never_reaches_teams(teams: Loopback) -> None:
    with pytest.raises(Refused, match="sdd send"):
        TeamsConnector().call(session(teams), "post_message", {"channel": CHANNEL, "text": "hi"})
    assert teams.requests == []


def test_send_draft_posts_exactly_the_documented_request(teams: Loopback) -> None:
    text = "Release 1.4 is out.\nNotes: <b>faster</b> export & more"
    result = send(teams, f"{TEAM}/{CHANNEL}", text)

    [post] = teams.requests
    assert (post.method, post.raw_path, post.query) == ("POST", MESSAGES, {})
    assert post.headers["authorization"] == f"Bearer {TOKEN}"
    assert post.headers["content-type"] == "application/json; charset=utf-8"
    assert post.json() == {
        "body": {
            "contentType": "html",
            "content": "<p>Release 1.4 is out.<br>"
            "Notes: &lt;b&gt;faster&lt;/b&gt; export &amp; more</p>",
        }
    }
    assert result.data["message"] == "1616990032035"
    assert result.text.startswith(
        f"posted to {TEAM}/{CHANNEL} on teams (https://teams.microsoft.com/"
    )
    assert TOKEN not in post.everything_but_auth()


def test_a_channel_id_uses_the_configured_team(teams: Loopback) -> None:
    send(teams, CHANNEL)
    [post] = teams.requests
    assert post.raw_path == MESSAGES


def test_a_channel_named_is_found_by_its_display_name(teams: Loopback) -> None:
    result = send(teams, "#releases")

    lookup, post = teams.requests
    assert (lookup.method, lookup.raw_path) == ("GET", f"/v1.0/teams/{TEAM}/channels")
    assert lookup.param("$filter") == "displayName eq 'releases'"
    assert post.raw_path == MESSAGES
    assert result.text.startswith("posted to #releases on teams")


def test_a_channel_name_no_one_has_is_missing_and_nothing_is_posted(teams: Loopback) -> None:
    with pytest.raises(Missing, match="Teams channel #it's-gone of team"):
        send(teams, "#it's-gone")
    [lookup] = teams.requests
    assert lookup.param("$filter") == "displayName eq 'it''s-gone'"  # an OData literal, quoted
    assert teams.seen("POST") == []


def test_a_404_is_missing_naming_the_channel(teams: Loopback) -> None:
    with pytest.raises(
        Missing, match=re.escape("missing: Teams channel 19:gone@thread.tacv2 on teams")
    ):
        send(teams, "19:gone@thread.tacv2")


def test_a_channel_she_may_not_post_in_is_refused(teams: Loopback) -> None:
    with pytest.raises(Refused, match="not a member"):
        send(teams, "19:private@thread.tacv2")


def test_a_refused_token_is_not_signed_in(teams: Loopback) -> None:
    with pytest.raises(NotSignedIn, match="InvalidAuthenticationToken"):
        send(teams, CHANNEL, token="eyJ.wrong.token")
    with pytest.raises(NotSignedIn):
        send(teams, CHANNEL, token=None)


def test_without_a_team_a_bare_channel_cannot_be_placed(teams: Loopback) -> None:
    connector = TeamsConnector()
    with pytest.raises(ConnectorError, match="which team"):
        connector.send_draft(Session("teams", teams.url + "/v1.0", TOKEN, {}), CHANNEL, "hi")
    assert teams.requests == []


@pytest.mark.parametrize(
    "channel",
    [f"{TEAM}/../../../me/sendMail", f"../users/{CHANNEL}", f"{TEAM}/{CHANNEL}?$select=x",
     f"{TEAM}/19:a@thread.tacv2/messages", "..", f"{TEAM}/..", "", "19:a@thread.tacv2\nX: y"],
)  # fmt: skip
def test_injection_in_a_channel_cannot_reach_another_endpoint(
    teams: Loopback, channel: str
) -> None:
    with pytest.raises(ConnectorError):
        send(teams, channel)
    # At most a look-up of a channel by that display name, in the configured team's list.
    assert {(s.method, s.raw_path) for s in teams.requests} <= {
        ("GET", f"/v1.0/teams/{TEAM}/channels")
    }


def test_a_draft_for_teams_is_posted_by_sdd_send(
    sdd: SddRunner, root: Root, teams: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sdd_git.connectors.drafts import keep_draft

    monkeypatch.setenv("GRAPH_TOKEN_FOR_TEST", TOKEN)
    configure(root, connectors={"teams": {"base_url": teams.url + "/v1.0", "team": TEAM,
                                          "token_env": "GRAPH_TOKEN_FOR_TEST"}})  # fmt: skip
    draft = keep_draft(root, connector="teams", channel="releases", text="1.4 is out.",
                       role="executor", run=None, mask=str)  # fmt: skip
    assert teams.requests == []

    sent = sdd("send", draft.id)

    assert sent.code == 0, sent.stderr
    lookup, post = teams.requests
    assert lookup.param("$filter") == "displayName eq 'releases'"
    assert post.raw_path == MESSAGES
    assert post.json() == {"body": {"contentType": "html", "content": "<p>1.4 is out.</p>"}}
