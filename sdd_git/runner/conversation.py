"""A role's own conversation and memory, in its gitignored `.sdd/local/roles/<name>/`.

The conversation's file itself is written by `sdd_git.roles.conversation` (re-exported here),
so a handoff tool below the runner writes it the same way."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import statefolders
from sdd_git.atomicfile import write_bytes_atomic, write_text_atomic
from sdd_git.errors import RecordError, UsageError
from sdd_git.roles.conversation import add_message as add_message
from sdd_git.roles.conversation import conversation_path as conversation_path
from sdd_git.roles.conversation import messages as messages
from sdd_git.roles.conversation import role_local as role_local
from sdd_git.root import Root

TEXT_LIMIT = 200_000


def memory_path(root: Root, role: str) -> Path:
    return role_local(root, role) / "memory.yaml"


def find_message(root: Root, role: str, message_id: str) -> dict[str, Any]:
    for entry in messages(root, role):
        if entry.get("id") == message_id:
            return entry
    raise UsageError(
        f"no message {message_id} in the conversation of {role}",
        hint=f"the conversation is in {conversation_path(root, role)}",
    )


@dataclass(frozen=True)
class Attachment:
    source: Path
    what: str


def attach(
    root: Root,
    role: str,
    run_id: str,
    attachment: Attachment,
    mask: Callable[[str], str] = lambda text: text,
) -> tuple[Path, str]:
    """Copy product material into the role's attachments (the original is never touched), and
    give back the copy and how the model sees it: text as text, anything else by reference.
    A text copy is masked like everything else the run keeps: a secret in a pasted log stays
    out of `.sdd/` and out of the model's view."""
    source = attachment.source
    if not source.is_file():
        raise UsageError(f"cannot attach {source}: no such file")
    if not attachment.what.strip():
        raise UsageError(f"say what {source.name} is", hint='--attach FILE --as "the March log"')
    folder = role_local(root, role) / "attachments" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / _masked_name(source.name, mask)
    raw = source.read_bytes()
    try:
        text = raw.decode("utf-8")
        binary = b"\0" in raw[:8192]
    except UnicodeDecodeError:
        text, binary = "", True
    if binary:
        # Not text to show, but a Latin-1 log or a dump may still hold a secret: the copy is
        # masked byte for byte all the same (undecodable bytes kept as they are).
        kept = mask(raw.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        write_bytes_atomic(copy, kept)
    else:
        text = mask(text)
        write_text_atomic(copy, text)
    where = copy.relative_to(root.path)
    if binary:
        shown = (
            f"Attachment {source.name} ({attachment.what}): a binary file of {len(raw):,} bytes, "
            f"saved at {where}. You cannot read it as text."
        )
    else:
        cut = text[:TEXT_LIMIT]
        note = "" if len(text) <= TEXT_LIMIT else f"\n[cut at {TEXT_LIMIT:,} characters]"
        shown = f"Attachment {source.name} ({attachment.what}), saved at {where}:\n{cut}{note}"
    return copy, shown


def _masked_name(name: str, mask: Callable[[str], str]) -> str:
    """The copy's file name, masked like its content (a secret can be in a name too)."""
    masked = mask(name).replace("/", "_").replace("\\", "_")
    return masked if masked not in ("", ".", "..") else "attachment"


def memory(root: Root, role: str) -> list[dict[str, Any]]:
    path = memory_path(root, role)
    if not os.path.lexists(path):
        return []
    from sdd_git.yamlio import read_list

    items = read_list(path, root.path)
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("note"), str)]


def memory_draft_path(root: Root, role: str) -> Path:
    return role_local(root, role) / "memory-edit.yaml"


def edit_memory(root: Root, role: str, edit: Callable[[str], str | None]) -> int:
    """The person corrects the role's memory in her editor (`edit` gets the text, gives back the
    new text or None for no change). A text that is not a valid memory list is kept, as her
    draft, and the memory is left as it was; the next edit starts from her draft. Gives back the
    number of items saved."""
    from sdd_git.yamlio import dump_yaml, read_list

    path, draft = memory_path(root, role), memory_draft_path(root, role)
    if os.path.lexists(draft):
        start = statefolders.read_text(draft)
    elif os.path.lexists(path):
        start = statefolders.read_text(path)
    else:
        start = "# One item per note: - {note: ..., at: ...}\n[]\n"
    text = edit(start)
    if text is None:
        return len(memory(root, role))
    write_text_atomic(draft, text)
    try:
        items = read_list(draft, root.path)
        for index, item in enumerate(items, 1):
            if not isinstance(item, dict) or not isinstance(item.get("note"), str):
                raise RecordError(
                    f"{draft}: item {index} is not a note ('- note: ...')",
                    hint="each item is a mapping with a text 'note' (and an optional 'at')",
                )
    except RecordError as exc:
        raise RecordError(
            f"the memory of {role} was not changed: {exc.message}",
            hint=f"your text is kept; `sdd role memory {role} --edit` opens it again",
        ) from None
    write_text_atomic(path, dump_yaml(items) if items else "[]\n")
    draft.unlink()
    return len(items)


def forget(root: Root, role: str, number: int) -> dict[str, Any]:
    items = _numbered(root, role, number)
    removed = items.pop(number - 1)
    _save_memory(root, role, items)
    return removed


def correct(root: Root, role: str, number: int, note: str) -> dict[str, Any]:
    """Her correction of one item, in her words (what `--edit` does to one note); gives back
    the item as it was. The item keeps its time; an empty note is refused (forget it instead)."""
    if not note.strip():
        raise UsageError(
            "a corrected note cannot be empty", hint="to drop the item, forget it instead"
        )
    if memory_draft_path(root, role).exists():
        raise RecordError(
            f"the memory of {role} has an unfinished edit of yours, kept as a draft",
            hint=f"finish it first: sdd role memory {role} --edit",
        )
    items = _numbered(root, role, number)
    before = dict(items[number - 1])
    items[number - 1] = {**before, "note": note.strip()}
    _save_memory(root, role, items)
    return before


def _numbered(root: Root, role: str, number: int) -> list[dict[str, Any]]:
    items = memory(root, role)
    if not 1 <= number <= len(items):
        raise RecordError(
            f"{role} has no memory item {number} (it has {len(items)})",
            hint=f"`sdd role memory {role}` numbers them",
        )
    return items


def _save_memory(root: Root, role: str, items: list[dict[str, Any]]) -> None:
    from sdd_git.yamlio import dump_yaml

    write_text_atomic(memory_path(root, role), dump_yaml(items) if items else "[]\n")
