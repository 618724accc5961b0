"""Drafts for chat: what a role would post to Slack or Teams, kept for the person to send.

A role never posts to a channel. Its `post_message` (a DRAFT operation) writes
`.sdd/local/drafts/DR-0001.json` and a message in the person's direct conversation with the role
("Draft for #releases: ... — send it with: sdd send DR-0001"). Nothing leaves the machine until
she runs `sdd send DR-0001`, a person command, which posts it through the connector's
`send_draft(session, channel, text)` and marks it sent."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from sdd_git import lockfile, statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError, UsageError
from sdd_git.root import Root

DRAFT_ID = re.compile(r"^DR-(\d{4,})$")
WAITING, SENT = "waiting", "sent"


@dataclass(frozen=True)
class Draft:
    id: str
    connector: str
    channel: str
    text: str  # masked when it was kept
    role: str
    run: str | None
    created: str
    status: str = WAITING
    sent_at: str | None = None
    sent: str | None = None  # what the service answered when it was posted

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def drafts_folder(root: Root) -> Path:
    return root.local / "drafts"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def shown_channel(channel: str) -> str:
    return channel if channel.startswith(("#", "@")) else f"#{channel}"


def keep_draft(
    root: Root,
    *,
    connector: str,
    channel: str,
    text: str,
    role: str,
    run: str | None,
    mask: Callable[[str], str],
) -> Draft:
    """Keep a role's message as a draft and tell the person in her conversation with the role.
    Posts nothing."""
    from sdd_git.roles.conversation import add_message

    folder = drafts_folder(root)
    statefolders.make_folder(folder)
    with lockfile.hold(folder / ".lock"):
        numbers = [
            int(m.group(1)) for p in folder.glob("DR-*.json") if (m := DRAFT_ID.match(p.stem))
        ]
        draft = Draft(
            id=f"DR-{max(numbers, default=0) + 1:04d}",
            connector=connector,
            channel=mask(channel),
            text=mask(text),
            role=role,
            run=run,
            created=_now(),
        )
        _save(root, draft)
    add_message(
        root,
        role,
        mask,
        run=run,
        **{"from": role},
        text=f"Draft for {shown_channel(draft.channel)} on {connector}:\n{draft.text}\n"
        f"— send it with: sdd send {draft.id}",
        draft=draft.id,
    )
    return draft


def _path(root: Root, draft_id: str) -> Path:
    if not DRAFT_ID.match(draft_id):
        raise UsageError(
            f"{draft_id!r} is not a draft id", hint="a draft id looks like DR-0001 (sdd drafts)"
        )
    return drafts_folder(root) / f"{draft_id}.json"


def _save(root: Root, draft: Draft) -> None:
    write_text_atomic(
        _path(root, draft.id), json.dumps(draft.as_json(), indent=2, ensure_ascii=False) + "\n"
    )


def load_draft(root: Root, draft_id: str) -> Draft:
    path = _path(root, draft_id)
    try:
        data = json.loads(statefolders.read_text(path))
    except FileNotFoundError:
        raise RecordError(
            f"no draft {draft_id}", hint="`sdd drafts` lists the drafts waiting to be sent"
        ) from None
    except ValueError as exc:
        raise RecordError(f"{path}: not a draft ({exc})") from None
    try:
        return Draft(**{k: v for k, v in data.items() if k in Draft.__dataclass_fields__})
    except TypeError as exc:
        raise RecordError(f"{path}: not a draft ({exc})") from None


def list_drafts(root: Root, include_sent: bool = False) -> list[Draft]:
    folder = drafts_folder(root)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("DR-*.json")):
        if not DRAFT_ID.match(path.stem):
            continue
        try:
            draft = load_draft(root, path.stem)
        except RecordError:
            continue  # a torn or foreign file is not a draft
        if include_sent or draft.status != SENT:
            found.append(draft)
    return found


def send(root: Root, draft_id: str) -> Draft:
    """Post a draft through its connector: the person's command, never a role's. Refused inside
    a run; a draft is posted once."""
    from sdd_git.connectors.calls import guarded_call
    from sdd_git.connectors.config import find_connector
    from sdd_git.connectors.registry import make_connector, session_for
    from sdd_git.connectors.signin import find_token, require_token
    from sdd_git.masking.returned import mask_returned
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    draft = load_draft(root, draft_id)
    with lockfile.hold(
        drafts_folder(root) / f"{draft.id}.lock",
        wait_seconds=0,
        stale_hint=f"a send of {draft.id} died; remove the lock file and check the channel",
    ):
        draft = load_draft(root, draft_id)  # as it is now that the lock is ours
        if draft.status == SENT:
            raise RecordError(
                f"{draft.id} was already sent ({draft.sent_at}); a draft is posted once",
                hint="`sdd drafts --all` shows it",
            )
        config = find_connector(root, draft.connector)
        connector = make_connector(config.kind)
        poster = getattr(connector, "send_draft", None)
        if not callable(poster):
            raise UsageError(f"{draft.connector} ({config.kind}) cannot post a draft")
        token = find_token(config)
        require_token(config, bool(getattr(connector, "needs_token", True)), token)
        session = session_for(root, config, token=token)
        result = guarded_call(session, lambda: poster(session, draft.channel, draft.text))
        said = session.masked(mask_returned(str(getattr(result, "text", "") or "")))
        sent = replace(draft, status=SENT, sent_at=_now(), sent=said[:500])
        _save(root, sent)
    return sent
