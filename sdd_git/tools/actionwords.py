"""How a tool call is said to the person: what will happen and with which inputs. Never a diff.

What a stop shows is the real action, whole: a command is shown in full, a long or multi-line one
as an indented block with its lines kept; every control character is shown escaped, never sent
raw to her terminal. A file write says whether it creates the file or replaces one (with the old
size beside the new, read beneath the product without following a link), its size and how it
starts. Each tool's `action` uses these; `runner/words` puts them on a stop."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.shown_text import visible

_INLINE = 100  # a command longer than this, or with a newline, is shown as a block
_CONTENT_START_LINES = 12
_CONTENT_START_CHARS = 600
# The most of a file being replaced that is read to count its lines: a stop's words never wait
# on a huge file (its size in bytes is still said).
OLD_FILE_LIMIT = 4 << 20


def quoted(value: Any) -> str:
    return f'"{visible(str(value), keep_newlines=False)}"'


def plain(value: Any) -> str:
    """A path or a name: unquoted, on one line, controls escaped."""
    return visible(str(value), keep_newlines=False)


def block(text: str) -> str:
    return "\n".join("    " + line for line in visible(text, keep_newlines=True).split("\n"))


def command_words(command: str) -> str:
    if "\n" in command or len(command) > _INLINE:
        lines = command.count("\n") + 1
        return f"Run this command ({count(lines, 'line')}, {len(command):,} characters) in the " + (
            f"product folder:\n{block(command)}\n"
        )
    return f"Run the command {quoted(command)} in the product folder"


def content_start(content: str) -> str:
    lines = content.rstrip("\n").split("\n")
    start = "\n".join(lines[:_CONTENT_START_LINES])[:_CONTENT_START_CHARS]
    return start + ("\n..." if len(start) < len(content.rstrip("\n")) else "")


def any_action(tool: str, args: dict[str, Any]) -> str:
    """A call no tool words better: its name and every input but the purpose."""
    shown = ", ".join(f"{k}={quoted(v)}" for k, v in args.items() if k != "purpose")
    return f"Use {tool} with {shown or 'no inputs'}"


def with_purpose(said: str, args: dict[str, Any]) -> str:
    """The action and why, ended as a sentence (a block already ends its line); the caller
    strips the last newline once nothing more follows."""
    purpose = args.get("purpose")
    if purpose:
        said += ("Because " if said.endswith("\n") else ", because ") + quoted(purpose)
    return said if said.endswith("\n") else said + "."


# -- a file write: created, or replacing one ---------------------------------------------------


@dataclass(frozen=True)
class OldFile:
    """What a write would replace: nothing (`exists` False), or a file whose size is known
    (`size`, and `lines` when it was small enough to count), or one that could not be read (a
    link, a special file, no permission: both None)."""

    exists: bool
    size: int | None = None
    lines: int | None = None


def old_file(root: Path, path: object) -> OldFile:
    """The file at `path` in the product as it is now, read beneath `root` with no link
    followed at any name, at most OLD_FILE_LIMIT bytes of it."""
    import os

    from sdd_git import beneath

    try:
        with beneath.opened(root) as top:
            found = top.kind(str(path))
            if found is None:
                return OldFile(False)
            if found != "file":
                return OldFile(True)
            fd = top.open_regular(str(path))
    except (OSError, beneath.Refused):  # a link on the way, a race, no permission
        return OldFile(True)
    try:
        size = os.fstat(fd).st_size
        if size > OLD_FILE_LIMIT:
            return OldFile(True, size)
        data = b""
        while len(data) <= size and (chunk := os.read(fd, 1 << 20)):
            data += chunk
        return OldFile(True, len(data), _linecount(data))
    except OSError:
        return OldFile(True)
    finally:
        os.close(fd)


def _linecount(data: bytes) -> int:
    return len(data.splitlines())


def count(n: int, one: str) -> str:
    return f"{n:,} {one}" if n == 1 else f"{n:,} {one}s"


def write_words(path: object, content: str, root: Path | None, short: bool = False) -> str:
    """ "Create the file P (2 lines, 40 bytes)", "Replace the file P: 3 lines become 4 (14 bytes
    become 22)"; with no product to look in (a past run's step), "Write the file P (...)".
    `short`: the page's heading, "Create P (2 lines)", "Replace P: 3 lines become 4", with the
    bytes only where the lines do not tell old and new apart."""
    data = content.encode()
    lines, size = _linecount(data), len(data)
    what = plain(path) if short else f"the file {plain(path)}"
    new = count(lines, "line") + ("" if short else f", {count(size, 'byte')}")
    if root is None:
        return f"Write {what} ({new})"
    old = old_file(root, path)
    if not old.exists:
        return f"Create {what} ({new})"
    if old.lines is not None and old.size is not None:
        said = f"Replace {what}: {count(old.lines, 'line')} become {lines:,}"
        if short and old.lines != lines:
            return said
        return f"{said} ({count(old.size, 'byte')} become {size:,})"
    if old.size is not None:  # too large to count its lines here
        return f"Replace {what}: {count(old.size, 'byte')} become {size:,}"
    if short:
        return f"Replace {what} ({new})"
    return f"Replace {what} with {count(lines, 'line')} ({count(size, 'byte')})"


# -- connectors --------------------------------------------------------------------------------


class _Shown(dict[str, Any]):
    """An operation's arguments as its words show them: controls escaped, a missing one '?'."""

    def __missing__(self, key: str) -> str:
        return "?"


def _shown_value(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value, keep_newlines=False)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return visible(json.dumps(value, ensure_ascii=False, default=str), keep_newlines=False)


def operation_words(kind: str, operation: str, args: dict[str, Any]) -> tuple[str, set[str]]:
    """The operation in the table's plain words (`merge pull request acme/app#12`), and the
    arguments those words show; an operation the table does not know is named as it is."""
    from sdd_git.connectors.operations import TABLE

    known = TABLE.get(kind, {}).get(operation)
    if known is None:
        return f"use {plain(operation)}", set()
    shown = _Shown({str(k): _shown_value(v) for k, v in args.items()})
    try:
        words = known.words.format_map(shown)
    except (ValueError, KeyError, IndexError, AttributeError):
        return f"use {plain(operation)}", set()
    used = set(re.findall(r"\{(\w+)", known.words))
    return words, used


def _argument(value: Any) -> str:
    """An argument the words leave out: text quoted, anything else as JSON."""
    if isinstance(value, str):
        return quoted(value)
    return visible(json.dumps(value, ensure_ascii=False, default=str), keep_newlines=False)


def _kind_of(root: Path | None, name: str) -> str:
    if root is not None:
        from sdd_git.connectors.config import load_connectors
        from sdd_git.errors import SddError
        from sdd_git.root import Root

        try:
            config = load_connectors(Root(root)).get(name)
        except SddError:
            config = None
        if config is not None:
            return config.table_kind
    return name


def connector_act_words(a: dict[str, Any], root: Path | None) -> str:
    name = str(a.get("connector", "?"))
    given = a.get("args") if isinstance(a.get("args"), dict) else {}
    assert isinstance(given, dict)
    words, used = operation_words(_kind_of(root, name), str(a.get("operation", "?")), given)
    rest = ", ".join(f"{k}={_argument(v)}" for k, v in given.items() if k not in used)
    said = f"On {plain(name)}: {words}" + (f" (with {rest})" if rest else "")
    if a.get("purpose"):
        said += f" — because {quoted(a.get('purpose'))}"
    outside = _outside_sandbox(root, name)
    return said + "." + (f"\n{outside[0].upper()}{outside[1:]}." if outside else "")


def _outside_sandbox(root: Path | None, name: str) -> str:
    """For an MCP server that runs with all her rights (`sandbox: off`, or no sandbox on the
    machine), the words that say so; else nothing."""
    if root is None:
        return ""
    from sdd_git.connectors.config import load_connectors
    from sdd_git.connectors.mcp_sandbox import placement
    from sdd_git.errors import SddError
    from sdd_git.root import Root

    try:
        config = load_connectors(Root(root)).get(name)
        if config is None or config.kind != "mcp":
            return ""
        return placement(name, config.settings).warning
    except SddError as exc:  # a wrong `sandbox:` value: the call will be refused, said so
        return exc.message


def code_host_words(root: Path | None, a: dict[str, Any], tool: str = "") -> str:
    """Where a pull request goes: the configured code host and the repository the tool will
    use (its config's, else the origin remote's), and for a new one the branches it will
    name (the current branch and the main branch, where the role named none)."""
    if root is None:
        return ""
    from sdd_git.connectors.config import code_host, main_branch, repository
    from sdd_git.errors import SddError
    from sdd_git.root import Root

    try:
        host = code_host(Root(root))
        repo = repository(Root(root), host) if host is not None else None
        base = main_branch(Root(root))
    except SddError:
        return ""
    if host is None:
        return " (no code host connector is configured)"
    where = f" ({plain(repo)})" if isinstance(repo, str) and repo else " (no repository known)"
    if tool != "open_pull_request":
        return f" on {plain(host.name)}{where}"
    head = a.get("head") or _current_branch(root) or "the current branch"
    return f" on {plain(host.name)}{where}, from {plain(head)} into {plain(a.get('base') or base)}"


def _current_branch(root: Path) -> str | None:
    """The branch checked out, read from git's HEAD file (no git process for a stop's words)."""
    dot_git = root / ".git"
    try:
        if dot_git.is_file():  # a worktree: `gitdir: PATH`
            pointer = dot_git.read_text(encoding="utf-8").strip()
            dot_git = (root / pointer.removeprefix("gitdir:").strip()).resolve()
        head = (dot_git / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def deploy_words(root: Path | None, a: dict[str, Any]) -> str:
    """What a deploy target starts: its connector and operation, in the table's words."""
    if root is None or not isinstance(a.get("target"), str):
        return ""
    from sdd_git.connectors.config import deploy_operation, deploy_targets
    from sdd_git.errors import SddError
    from sdd_git.root import Root

    try:
        target = deploy_targets(Root(root)).get(a["target"])
    except SddError:
        return ""
    if target is None:
        return " (no such deploy target is configured)"
    kind = _kind_of(root, target.connector)
    words, used = operation_words(kind, deploy_operation(target, kind), dict(target.args))
    rest = ", ".join(f"{k}={_argument(v)}" for k, v in target.args.items() if k not in used)
    return f": on {plain(target.connector)}, {words}" + (f" (with {rest})" if rest else "")
