"""A role's conversation: one JSON line a message in its gitignored
`.sdd/local/roles/<name>/conversation.jsonl`.

Kept below the runner so that everything that writes a message (a run, a handoff tool, a group)
writes it the same way; `sdd_git.runner.conversation` re-exports these with the role's memory
and attachments."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdd_git import statefolders
from sdd_git.root import Root


def role_local(root: Root, role: str) -> Path:
    return root.local / "roles" / role


def conversation_path(root: Root, role: str) -> Path:
    return role_local(root, role) / "conversation.jsonl"


def messages(root: Root, role: str) -> list[dict[str, Any]]:
    path = conversation_path(root, role)
    try:
        text = statefolders.read_text(path)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    # Split on newlines only: str.splitlines also breaks at U+2028, U+0085 and the like, which
    # json.dumps leaves raw inside a message's text, and the message would be lost.
    for line in text.split("\n"):
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a torn last line
        if isinstance(entry, dict):
            found.append(entry)
    return found


def add_message(root: Root, role: str, mask: Callable[[str], str], **fields: Any) -> dict[str, Any]:
    """Append one message (masked) and give it back with its id (`M<n>`) and time."""
    path = conversation_path(root, role)
    statefolders.make_folder(path.parent)
    entry = {"id": f"M{len(messages(root, role)) + 1}", "at": now(), **fields}
    line = mask(json.dumps(entry, ensure_ascii=False)) + "\n"
    statefolders.append(path, line.encode("utf-8", "replace"), sync=False)
    return entry


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
