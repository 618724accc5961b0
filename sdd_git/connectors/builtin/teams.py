"""Microsoft Teams, through Microsoft Graph v1.0 (https://learn.microsoft.com/graph/api/channel-post-messages).

    connectors:
      teams: {team: 8b081ef6-4792-4def-b2c9-c363a1bf41d5, token_env: GRAPH_TOKEN}
      # base_url defaults to https://graph.microsoft.com/v1.0

Graph, not an incoming webhook: a webhook URL is itself a secret (anyone holding it can post),
so it could not live in the committed config, and Graph posts as the person who signed in (a
delegated token with `ChannelMessage.Send`, sent as `Authorization: Bearer`), which is what
"she sends it herself" means.

A role never posts: its `post_message` is a DRAFT kept for the person; `send_draft` runs only
from her `sdd send`, as `POST /teams/{team-id}/channels/{channel-id}/messages`. The channel is
`TEAM-ID/CHANNEL-ID`, a channel id (`19:...@thread.tacv2`) of the configured `team`, or a
channel's display name (`#releases`), found through `GET /teams/{team-id}/channels?$filter=`.
The text is sent as HTML with every character escaped, so a draft's words stay words."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    Result,
    Session,
)
from sdd_git.connectors.builtin.hostkit import bearer_call, by_operation
from sdd_git.connectors.builtin.trackerkit import (
    TrackerConnector,
    draft_only,
    segment,
    text_to_html,
)

CHANNEL_ID = re.compile(r"19:[^/\s]+@thread\.[A-Za-z0-9.]+")
GRAPH_ID = re.compile(r"[A-Za-z0-9:@._=-]+")
MAX_PAGES = 10


def _where(session: Session, channel: str) -> tuple[str, str, str]:
    """(team id, channel id, the channel as shown) for a draft's channel."""
    word = channel.strip()
    if not word or any(ord(c) < 32 for c in word):
        raise ConnectorError(f"{channel!r} is not a Teams channel")
    if "/" in word and not word.startswith("#"):
        team, _, channel_id = word.partition("/")
        return team, channel_id, word
    configured = session.settings.get("team")
    if not isinstance(configured, str) or not configured.strip():
        raise ConnectorError(
            f"{session.name}: which team is {word!r} in? Name it in the config",
            hint=f"connectors: {{{session.name}: {{team: TEAM-ID}}}}, or the channel as "
            "TEAM-ID/CHANNEL-ID",
        )
    team = configured.strip()
    if CHANNEL_ID.fullmatch(word):
        return team, word, word
    name = word.lstrip("#")
    return team, _channel_by_name(session, team, name), "#" + name


def _channel_by_name(session: Session, team: str, name: str) -> str:
    team_part = segment(team, "a Teams team id", GRAPH_ID)
    source = f"Teams channel #{name} of team {team}"
    quoted = name.replace("'", "''")  # an OData string literal
    path: str | None = f"/teams/{team_part}/channels"
    query: Mapping[str, Any] | None = {"$filter": f"displayName eq '{quoted}'"}
    for _ in range(MAX_PAGES):
        if path is None:
            break
        page = bearer_call(session, "GET", path, source, query=query).json()
        for found in (page.get("value") if isinstance(page, Mapping) else None) or []:
            if isinstance(found, Mapping) and found.get("displayName") == name and found.get("id"):
                return str(found["id"])
        following = page.get("@odata.nextLink") if isinstance(page, Mapping) else None
        path, query = (
            (following, None) if isinstance(following, str) and following else (None, None)
        )
    raise Missing(f"{source} on {session.name}", "no channel of that name is open to this account")


class TeamsConnector(TrackerConnector):
    name = "teams"
    handlers = by_operation(post_message=draft_only)

    def send_draft(self, session: Session, channel: str, text: str) -> Result:
        """Post the person's draft to a channel. Only `sdd send`, a person command, calls this."""
        if not text.strip():
            raise ConnectorError("the draft has no text to post")
        team, channel_id, shown = _where(session, channel)
        team_part = segment(team, "a Teams team id", GRAPH_ID)
        channel_part = segment(channel_id, "a Teams channel id", GRAPH_ID)
        posted = bearer_call(
            session, "POST", f"/teams/{team_part}/channels/{channel_part}/messages",
            f"Teams channel {shown}",
            body={"body": {"contentType": "html", "content": text_to_html(text)}},
        ).json()  # fmt: skip
        message_id = str(posted.get("id") or "") if isinstance(posted, Mapping) else ""
        link = str(posted.get("webUrl") or "") if isinstance(posted, Mapping) else ""
        return Result(
            f"posted to {shown} on {session.name}" + (f" ({link})" if link else ""),
            {"team": team, "channel": channel_id, "message": message_id, "url": link},
        )
