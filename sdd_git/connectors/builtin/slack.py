"""Slack, through its Web API (https://docs.slack.dev/reference/methods).

    connectors:
      slack: {token_env: SLACK_TOKEN}          # base_url defaults to https://slack.com/api

The token (a bot token `xoxb-...` or a user token `xoxp-...`) is sent as `Authorization:
Bearer`. A role never posts: its `post_message` is a DRAFT the core keeps for the person
(sdd_git.connectors.drafts), and `send_draft` (`chat.postMessage`, the text escaped as Slack's
formatting rules say) runs only from her `sdd send`. `read_channel` (`conversations.history`,
paged by `response_metadata.next_cursor`) reads a channel's latest messages; a channel given by
name is found first through `conversations.list`.

Slack answers most failures with HTTP 200 and `{"ok": false, "error": "..."}`: mapped here.
`channel_not_found` and `not_in_channel` are missing (the channel is not there for this
token); `invalid_auth`, `not_authed`, `account_inactive`, `token_revoked` and `token_expired`
are a sign-in to renew; `ratelimited` and Slack's own failures are unavailable; the rest are
refused with Slack's word for why."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    NotSignedIn,
    Refused,
    Result,
    Session,
    Unavailable,
)
from sdd_git.connectors.builtin.hostkit import bearer, by_operation
from sdd_git.connectors.builtin.trackerkit import (
    TrackerConnector,
    count_arg,
    draft_only,
    shorten,
    text_arg,
)
from sdd_git.connectors.http import request

CHANNEL_ID = re.compile(r"[CGD][A-Z0-9]{6,}")
DEFAULT_MESSAGES = 20
MAX_MESSAGES = 200
PAGE_SIZE = 100
MAX_PAGES = 20
_MISSING = ("channel_not_found", "not_in_channel")
_SIGN_IN = ("invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired")
_UNAVAILABLE = ("ratelimited", "rate_limited", "internal_error", "fatal_error",
                "service_unavailable", "request_timeout", "team_added_to_org")  # fmt: skip


def escaped(text: str) -> str:
    """Text as Slack's formatting rules want it escaped (`&`, `<`, `>` as entities): what the
    person read in the draft is what appears, and no `<!channel>`, `<@U123>` or `<url|label>`
    hidden in a role's words can ping a channel or disguise a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _channel_word(channel: str) -> str:
    word = channel.strip()
    if not word or any(ord(c) < 32 for c in word) or len(word) > 200:
        raise ConnectorError(f"{channel!r} is not a Slack channel (an id like C0123ABCD, or #name)")
    return word


def _shown(channel: str) -> str:
    return (
        channel
        if channel.startswith(("#", "@")) or CHANNEL_ID.fullmatch(channel)
        else "#" + channel
    )


def _method(
    session: Session,
    http_method: str,
    method: str,
    source: str,
    *,
    query: Mapping[str, Any] | None = None,
    body: Any = None,
) -> Mapping[str, Any]:
    """One Web API method; `ok: false` mapped to the connector errors."""
    answer = request(
        session, http_method, f"/{method}", source=source, query=query, body=body,
        headers=bearer(session),
    ).json()  # fmt: skip
    if not isinstance(answer, Mapping):
        raise Unavailable(f"{session.name}: {method} answered with something that is not an object")
    if answer.get("ok") is True:
        return answer
    error = str(answer.get("error") or "unknown_error")
    said = session.masked(error)[:100]
    if error in _MISSING:
        raise Missing(f"{source} on {session.name}", f"Slack said {said}")
    if error in _SIGN_IN:
        raise NotSignedIn(
            f"{session.name} refused the sign-in: {said}",
            hint=f"sign in again: sdd connect {session.name}",
        )
    if error in _UNAVAILABLE:
        raise Unavailable(f"{session.name} could not answer {method}: {said}")
    needed = answer.get("needed")
    extra = f" (the token needs the scope {session.masked(str(needed))[:100]})" if needed else ""
    raise Refused(f"{session.name} refused {method}: {said}{extra}")


def _channel_id(session: Session, channel: str, source: str) -> str:
    """The id of a channel given by id or by name (`#releases` or `releases`)."""
    word = _channel_word(channel)
    if CHANNEL_ID.fullmatch(word):
        return word
    name = word.lstrip("#")
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = _method(
            session, "GET", "conversations.list", source,
            query={"types": "public_channel,private_channel", "exclude_archived": "true",
                   "limit": 200, "cursor": cursor},
        )  # fmt: skip
        for found in page.get("channels") or []:
            if isinstance(found, Mapping) and found.get("name") == name and found.get("id"):
                return str(found["id"])
        cursor = _next_cursor(page)
        if cursor is None:
            break
    raise Missing(f"{source} on {session.name}", "no channel of that name is open to this token")


def _next_cursor(page: Mapping[str, Any]) -> str | None:
    meta = page.get("response_metadata")
    cursor = meta.get("next_cursor") if isinstance(meta, Mapping) else None
    return cursor if isinstance(cursor, str) and cursor else None


def _read_channel(session: Session, args: Mapping[str, Any]) -> Result:
    channel = text_arg(args, "channel", "read_channel")
    limit = count_arg(args, "limit", "read_channel", DEFAULT_MESSAGES, MAX_MESSAGES)
    source = f"messages of Slack channel {channel}"
    channel_id = _channel_id(session, channel, source)
    messages: list[Mapping[str, Any]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = _method(
            session, "GET", "conversations.history", source,
            query={"channel": channel_id, "limit": min(PAGE_SIZE, limit - len(messages)),
                   "cursor": cursor},
        )  # fmt: skip
        messages += [m for m in page.get("messages") or [] if isinstance(m, Mapping)]
        cursor = _next_cursor(page)
        if len(messages) >= limit or cursor is None or page.get("has_more") is False:
            break
    if not messages:
        raise Missing(f"{source} on {session.name}", "the channel has no messages")
    rows: list[dict[str, Any]] = [
        {
            "ts": str(m.get("ts") or ""),
            "when": _when(m.get("ts")),
            "who": str(m.get("user") or m.get("username") or m.get("bot_id") or "someone"),
            "text": str(m.get("text") or ""),
            "replies": int(m.get("reply_count") or 0),
        }
        for m in messages[:limit]
    ]
    lines = [f"latest {len(rows)} message(s) of {_shown(channel)} (newest first):"]
    lines += [
        f"- [{r['when']}] {r['who']}: {shorten(r['text'], 1500)}"
        + (f" ({r['replies']} replies)" if r["replies"] else "")
        for r in rows
    ]
    return Result("\n".join(lines), {"channel": channel_id, "messages": rows})


def _when(ts: Any) -> str:
    try:
        moment = datetime.datetime.fromtimestamp(float(ts), datetime.UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return str(ts or "")
    return moment.strftime("%Y-%m-%d %H:%M UTC")


class SlackConnector(TrackerConnector):
    name = "slack"
    handlers = by_operation(_read_channel, post_message=draft_only)

    def send_draft(self, session: Session, channel: str, text: str) -> Result:
        """Post the person's draft: `chat.postMessage` with the channel and the text as kept.
        Only `sdd send`, a person command, calls this."""
        where = _channel_word(channel)
        if not text.strip():
            raise ConnectorError("the draft has no text to post")
        answer = _method(
            session, "POST", "chat.postMessage", f"Slack channel {where}",
            body={"channel": where, "text": escaped(text)},
        )  # fmt: skip
        posted_in = str(answer.get("channel") or where)
        ts = str(answer.get("ts") or "")
        return Result(
            f"posted to {_shown(where)} on {session.name}" + (f" (ts {ts})" if ts else ""),
            {"channel": posted_in, "ts": ts},
        )
