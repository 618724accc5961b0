"""Read tools: look at the product and its record, change nothing.

This module also holds what every tool module shares: the small `BaseTool` (argument checks
against the tool's own schema, masking of everything that leaves the tool) and the `Args`
reader. Files are opened through `beneath` (never following a symlink out, or at all for a
write), and git through `gitcall` (which runs nothing a role wrote).
"""

from __future__ import annotations

import fnmatch
import json
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sdd_git import beneath as record_files
from sdd_git.errors import SddError
from sdd_git.providers.base import ToolSchema
from sdd_git.records import changes, decisions
from sdd_git.records.spec import read_spec
from sdd_git.root import Root
from sdd_git.tools import beneath
from sdd_git.tools.base import ToolContext, ToolFailed, ToolOutcome
from sdd_git.tools.beneath import Folder, Found
from sdd_git.tools.catalog import ToolClass
from sdd_git.tools.gitcall import git_output, has_head, in_git_repo, require_git_repo
from sdd_git.valuekind import json_kind as _kind
from sdd_git.yamlio import dump_yaml

READ_CAP_BYTES = 200 * 1024
LIST_CAP_LINES = 2000
SEARCH_CAP_MATCHES = 200
SEARCH_MAX_FILE_BYTES = 10 * 1024 * 1024
SEARCH_LINE_CHARS = 300


# --- shared by every tool module ------------------------------------------------------------


# Upper bounds on the length of ids and names, in characters. They are in the schema, so a
# server that decodes under the schema's grammar (llama.cpp, vLLM, Ollama) cannot let a small
# model write an id for minutes; and Args refuses a longer value from any server. Kept small:
# llama.cpp spells a bound out as nested rules and refuses a grammar of a few thousand (a bound
# of 1,024 on a path crashed llama-cpp-python 0.3.36), so paths and free text have none.
ID_CHARS = 64  # a change, record, scenario, skill or tag name, a deploy target
NAME_CHARS = 100  # a branch or remote name


def bounded(chars: int, description: str) -> dict[str, Any]:
    """A string property of at most `chars` characters."""
    return {"type": "string", "maxLength": chars, "description": description}


def text_property(description: str) -> dict[str, Any]:
    """A string property."""
    return {"type": "string", "description": description}


def make_schema(
    name: str, description: str, properties: dict[str, Any], required: tuple[str, ...] = ()
) -> ToolSchema:
    return ToolSchema(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        },
    )


def _check_length(tool: str, key: str, value: Any, schema: dict[str, Any]) -> None:
    """A text longer than its schema's maxLength, or a list item longer than its items' one."""
    limit = schema.get("maxLength")
    if isinstance(value, str) and limit is not None and len(value) > limit:
        raise ToolFailed(
            f"{tool}: '{key}' is {len(value):,} characters; it takes at most {limit:,}"
        )
    limit = (schema.get("items") or {}).get("maxLength")
    if isinstance(value, list) and limit is not None:
        for index, item in enumerate(value, 1):
            if isinstance(item, str) and len(item) > limit:
                raise ToolFailed(
                    f"{tool}: item {index} of '{key}' is {len(item):,} characters; "
                    f"it takes at most {limit:,}"
                )


class Args:
    """A tool call's arguments, checked against the tool's schema; each getter checks a type."""

    def __init__(self, tool: str, raw: Any, schema: ToolSchema) -> None:
        self.tool = tool
        if not isinstance(raw, Mapping):
            raise ToolFailed(f"{tool}: the arguments must be an object, not {_kind(raw)}")
        properties: dict[str, Any] = schema.parameters.get("properties", {})
        unknown = sorted(str(k) for k in raw if k not in properties)
        if unknown:
            takes = ", ".join(properties) or "no arguments"
            raise ToolFailed(f"{tool}: unknown argument {', '.join(unknown)}; it takes {takes}")
        for key, value in raw.items():
            _check_length(tool, str(key), value, properties[key])
        missing = [k for k in schema.parameters.get("required", []) if raw.get(k) is None]
        if missing:
            raise ToolFailed(f"{tool}: missing argument {', '.join(missing)}")
        self.raw: dict[str, Any] = dict(raw)

    def _fail(self, key: str, wanted: str) -> ToolFailed:
        return ToolFailed(f"{self.tool}: '{key}' must be {wanted}, not {_kind(self.raw.get(key))}")

    def text(self, key: str, *, blank_ok: bool = False) -> str:
        value = self.raw.get(key)
        if not isinstance(value, str):
            raise self._fail(key, "text")
        if not blank_ok and not value.strip():
            raise ToolFailed(f"{self.tool}: '{key}' is empty")
        return value

    def opt_text(self, key: str) -> str | None:
        if self.raw.get(key) is None:
            return None
        return self.text(key)

    def integer(self, key: str, default: int | None = None, minimum: int = 1) -> int:
        value = self.raw.get(key)
        if value is None and default is not None:
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(key, "a whole number")
        if value < minimum:
            raise ToolFailed(f"{self.tool}: '{key}' must be at least {minimum}, not {value}")
        return value

    def text_list(self, key: str, *, empty_ok: bool = False) -> list[str]:
        value = self.raw.get(key)
        if not isinstance(value, list):
            raise self._fail(key, "a list of text")
        for index, item in enumerate(value, 1):
            if not isinstance(item, str) or not item.strip():
                raise ToolFailed(
                    f"{self.tool}: item {index} of '{key}' must be non-empty text, "
                    f"not {_kind(item)}"
                )
        if not value and not empty_ok:
            raise ToolFailed(f"{self.tool}: '{key}' is an empty list")
        return list(value)

    def objects(self, key: str) -> list[dict[str, Any]]:
        value = self.raw.get(key)
        if not isinstance(value, list) or not value:
            raise self._fail(key, "a non-empty list of objects")
        for index, item in enumerate(value, 1):
            if not isinstance(item, dict):
                raise ToolFailed(
                    f"{self.tool}: item {index} of '{key}' must be an object, not {_kind(item)}"
                )
        return list(value)


def _mask_data(value: Any, mask: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: _mask_data(v, mask) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask_data(v, mask) for v in value]
    return value


class BaseTool:
    """One tool: `execute` does the work; `run` checks the arguments and masks what leaves."""

    name: str
    tool_class: ToolClass
    schema: ToolSchema

    def run(self, args: dict[str, Any], context: ToolContext) -> ToolOutcome:
        try:
            if self.tool_class == "draft":
                # Drafts land in sdd's own files and the record (memory, readings, scenarios,
                # QA proposals): masked like a log, so no secret is kept there in any form.
                args = _mask_data(args, context.mask)
            outcome = self.execute(Args(self.name, args, self.schema), context)
        except ToolFailed as exc:
            raise ToolFailed(context.mask(str(exc))) from None
        except SddError as exc:
            raise ToolFailed(context.mask(exc.message)) from None
        except UnicodeDecodeError as exc:
            raise ToolFailed(
                f"{self.name}: a file it needs is not UTF-8 text ({exc.reason})"
            ) from None
        except OSError as exc:
            raise ToolFailed(context.mask(f"{self.name}: {exc}")) from None
        data = _mask_data(outcome.data, context.mask) if outcome.data is not None else None
        return ToolOutcome(context.mask(outcome.text), data)

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raise NotImplementedError


def root_dir(context: ToolContext) -> Path:
    return context.root.path.resolve()


def cap_text(text: str, limit: int, what: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", errors="ignore")
    return f"{kept}\n[cut: showing the first {limit // 1024} KB of {len(data):,} bytes of {what}]"


def _decode_text(data: bytes, truncated: bool) -> str | None:
    """The bytes as UTF-8 text, or None when they look binary."""
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut can fall inside a multi-byte character; only that tail may be dropped.
        if truncated and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8", errors="strict")
        return None


# --- the listing shared by list_files and search_files ----------------------------------------


def _is_git_internal(rel: str) -> bool:
    return ".git" in rel.split("/")


def _listed(top: Folder, rel: str) -> bool:
    """True for an entry that lists as a file: not a folder, nor a symlink to one inside."""
    try:
        entry = top.lstat(rel)
        if entry is None or stat.S_ISDIR(entry.st_mode):
            return False
        if stat.S_ISLNK(entry.st_mode):
            return not top.resolve(rel).is_dir
    except ToolFailed:
        return not _is_git_internal(rel)  # a link leading out or broken is still an entry
    return True


def listed_files(context: ToolContext, top: Folder, base: Found) -> list[str]:
    """Files under `base` (relative posix paths from the root), sorted, never under `.git/`.

    In a git repository: tracked files plus untracked ones that are not ignored. Else a walk
    that enters real folders only, never a symlink to one.
    """
    if not base.is_dir:
        return [] if _is_git_internal(base.rel) else [base.rel]
    if in_git_repo(context):
        out = git_output(
            context,
            "--literal-pathspecs",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            base.rel,
        )
        names = {n for n in out.split("\0") if n and not _is_git_internal(n)}
        return sorted(n for n in names if _listed(top, n))
    return [n for n in top.files(base.names) if _listed(top, n)]


def _glob_matches(rel: str, pattern: str) -> bool:
    if "/" not in pattern:
        return fnmatch.fnmatchcase(rel.rsplit("/", 1)[-1], pattern)
    candidates = {pattern, pattern.replace("**/", "")}
    return any(fnmatch.fnmatchcase(rel, p) for p in candidates)


def _base(top: Folder, raw: str | None) -> Found:
    """Where list_files or search_files starts: the whole product, or a path inside it."""
    found = top.resolve(raw if raw is not None else ".")
    if found.status is None:
        raise ToolFailed(f"no such file or folder: {top.display(raw or '.')}")
    return found


# --- the tools --------------------------------------------------------------------------------


class ReadTool(BaseTool):
    tool_class: ToolClass = "read"


class ReadFile(ReadTool):
    name = "read_file"
    schema = make_schema(
        "read_file",
        "Read a text file of the product (path relative to the product folder); "
        "long files are cut at 200 KB.",
        {"path": text_property("file path, relative to the product folder")},
        ("path",),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raw = args.text("path")
        with beneath.folder(root_dir(context)) as top:
            found = top.resolve(raw)
            rel = found.rel if found.status is not None else top.display(raw)
            if found.is_dir:
                raise ToolFailed(f"{rel} is a folder; list_files lists what is in it")
            if found.status is None:
                raise ToolFailed(f"no file {rel}")
            if not found.is_file:
                raise ToolFailed(f"{rel} is not a regular file; read_file reads files")
            read = top.read(found, READ_CAP_BYTES + 1)
        data, size = read.data, read.size
        truncated = len(data) > READ_CAP_BYTES
        data = data[:READ_CAP_BYTES]
        text = _decode_text(data, truncated)
        if text is None:
            return ToolOutcome(
                f"{rel} is a binary file ({size:,} bytes); read_file shows text only",
                {"path": rel, "binary": True, "bytes": size},
            )
        if not data:
            return ToolOutcome(f"{rel} is empty", {"path": rel, "bytes": 0})
        if truncated:
            text += (
                f"\n[cut: {rel} has {size:,} bytes; this shows the first "
                f"{READ_CAP_BYTES // 1024} KB]"
            )
        return ToolOutcome(text, {"path": rel, "bytes": size, "truncated": truncated})


class ListFiles(ReadTool):
    name = "list_files"
    schema = make_schema(
        "list_files",
        "List the product's files (ignored files and .git/ left out), optionally under a folder "
        "and matching a glob.",
        {
            "path": text_property("folder to list, relative to the product folder (default: all)"),
            "glob": text_property(
                "e.g. '*.py' (matches file names) or 'src/**/*.py' (whole paths)"
            ),
        },
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raw = args.opt_text("path")
        pattern = args.opt_text("glob")
        with beneath.folder(root_dir(context)) as top:
            names = listed_files(context, top, _base(top, raw))
        if pattern is not None:
            names = [n for n in names if _glob_matches(n, pattern)]
        total = len(names)
        if not names:
            return ToolOutcome("no files", {"count": 0})
        lines = names[:LIST_CAP_LINES]
        if total > LIST_CAP_LINES:
            lines.append(
                f"[cut: {total - LIST_CAP_LINES:,} more files not shown; "
                "narrow the path or the glob]"
            )
        return ToolOutcome("\n".join(lines), {"count": total})


class SearchFiles(ReadTool):
    name = "search_files"
    schema = make_schema(
        "search_files",
        "Search the product's text files for a Python regular expression; "
        "answers 'file:line: text' (at most 200 matches).",
        {
            "pattern": text_property("a Python regular expression"),
            "path": text_property(
                "file or folder to search, relative to the product folder (default: all)",
            ),
        },
        ("pattern",),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        try:
            regex = re.compile(args.text("pattern", blank_ok=True))
        except re.error as exc:
            raise ToolFailed(
                f"search_files: the pattern is not a valid regular expression: {exc}"
            ) from None
        raw = args.opt_text("path")
        with beneath.folder(root_dir(context)) as top:
            return self._search(context, top, _base(top, raw), regex)

    def _search(
        self, context: ToolContext, top: Folder, base: Found, regex: re.Pattern[str]
    ) -> ToolOutcome:
        matches: list[str] = []
        capped = False
        searched = 0
        for rel in listed_files(context, top, base):
            try:
                found = top.resolve(rel)
                if not found.is_file or found.status is None:
                    continue  # a folder, or a symlink out of the product: never followed
                if found.status.st_size > SEARCH_MAX_FILE_BYTES:
                    continue
                read = top.read(found, SEARCH_MAX_FILE_BYTES + 1)
                text = _decode_text(read.data, truncated=False)
            except (ToolFailed, OSError):
                continue
            if text is None:
                continue
            searched += 1
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    if len(matches) == SEARCH_CAP_MATCHES:
                        capped = True
                        break
                    shown = line if len(line) <= SEARCH_LINE_CHARS else line[:SEARCH_LINE_CHARS]
                    matches.append(f"{rel}:{number}: {shown}")
            if capped:
                break
        if not matches:
            return ToolOutcome(
                f"no matches in {searched} text files", {"matches": 0, "files": searched}
            )
        text_out = "\n".join(matches)
        if capped:
            text_out += f"\n[stopped at {SEARCH_CAP_MATCHES} matches; narrow the pattern or path]"
        return ToolOutcome(text_out, {"matches": len(matches), "capped": capped})


class GitStatus(ReadTool):
    name = "git_status"
    schema = make_schema(
        "git_status", "Show the branch and which files are changed, staged or untracked.", {}
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        require_git_repo(context)
        out = git_output(context, "status", "--short", "--branch")
        lines = out.rstrip("\n").splitlines()
        if len(lines) <= 1:
            lines.append("(nothing changed)")
        return ToolOutcome("\n".join(lines))


class GitLog(ReadTool):
    name = "git_log"
    schema = make_schema(
        "git_log",
        "Show the latest commits, one line each.",
        {"max": {"type": "integer", "minimum": 1, "description": "how many (default 20)"}},
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        count = args.integer("max", default=20)
        require_git_repo(context)
        if not has_head(context):
            return ToolOutcome("no commits yet")
        out = git_output(context, "log", "--oneline", "--no-color", f"--max-count={count}")
        return ToolOutcome(out.rstrip("\n"))


class GitDiff(ReadTool):
    name = "git_diff"
    schema = make_schema(
        "git_diff",
        "Show what changed in tracked files since the last commit (staged and not), "
        "optionally for one path.",
        {"path": text_property("file or folder, relative to the product")},
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raw = args.opt_text("path")
        spec = "."
        if raw is not None:
            with beneath.folder(root_dir(context)) as top:
                spec = top.shown(raw)  # a pathspec: git itself never follows a symlink in it
        require_git_repo(context)
        if has_head(context):
            against = "HEAD"
        else:
            against = git_output(context, "hash-object", "-t", "tree", "/dev/null").strip()
        out = git_output(
            context,
            "--literal-pathspecs",
            "diff",
            "--no-color",
            "--no-ext-diff",
            against,
            "--",
            spec,
        )
        if not out.strip():
            return ToolOutcome(
                "no differences from the last commit "
                "(untracked files are not shown; git_status lists them)"
            )
        return ToolOutcome(cap_text(out, READ_CAP_BYTES, "the diff"))


_CHANGE = re.compile(r"^CH-\d{4,}$")
_SPEC = re.compile(r"^SPEC-\d{4,}$")
_SECTION = re.compile(r"^(SPEC-\d{4,})#(S\d+)$")
_DECISION = re.compile(r"^D-\d{4,}$")
_RELEASE = re.compile(r"^R-\d{4,}$")
ID_SHAPES = "CH-0001, SPEC-0001, SPEC-0001#S1, D-0001 or R-0001"


class ReadRecord(ReadTool):
    name = "read_record"
    schema = make_schema(
        "read_record",
        "Read one record of the person's: a change (CH-0001), a spec (SPEC-0001), a spec "
        "section (SPEC-0001#S1), a decision (D-0001) or a release (R-0001).",
        {"id": bounded(ID_CHARS, "the record's id, e.g. CH-0001 or SPEC-0001#S1")},
        ("id",),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        record_id = args.text("id").strip()
        root = context.root
        if _CHANGE.match(record_id):
            if not (root.change_dir(record_id) / "change.yaml").is_file():
                raise ToolFailed(f"no change {record_id}")
            from sdd_git.records.view import describe_change

            described = describe_change(root, record_id)
            return ToolOutcome(
                json.dumps(described, indent=2, ensure_ascii=False), {"id": record_id}
            )
        if _SPEC.match(record_id):
            text = _record_text(root, root.spec_file(record_id), f"no spec {record_id}")
            return ToolOutcome(text, {"id": record_id})
        section_ref = _SECTION.match(record_id)
        if section_ref:
            spec_id, section_id = section_ref.groups()
            path = root.spec_file(spec_id)
            if record_files.kind(root.path, path) is None:
                raise ToolFailed(f"no spec {spec_id}")
            spec = read_spec(path)
            section = next((s for s in spec.sections if s.id == section_id), None)
            if section is None:
                raise ToolFailed(f"no section {section_id} in {spec_id}")
            accepted = decisions.load(root).section_acceptance(section.full_id, section.hash)
            state = (
                f"accepted by {accepted.id}"
                if accepted
                else "not accepted (a draft, or changed since it was accepted)"
            )
            return ToolOutcome(
                f"{section.text}\n\n[{section.full_id}: {state}]",
                {"id": record_id, "accepted_by": accepted.id if accepted else None},
            )
        if _DECISION.match(record_id):
            log = decisions.load(root)
            found = next((d for d in log.entries if d.id == record_id), None)
            if found is None:
                raise ToolFailed(f"no decision {record_id}")
            entry = {**found.as_dict(), "replaced_by": log.replaced_by(found.id)}
            return ToolOutcome(dump_yaml(entry).rstrip("\n"), {"id": record_id})
        if _RELEASE.match(record_id):
            path = root.releases / f"{record_id}.md"
            return ToolOutcome(
                _record_text(root, path, f"no release {record_id}"), {"id": record_id}
            )
        raise ToolFailed(f"read_record: {record_id!r} is not a record id; use {ID_SHAPES}")


def _record_text(root: Root, path: Path, missing: str) -> str:
    """A record file's text, read beneath the product with no link followed: a spec linked to
    her ~/.ssh/id_ed25519 or to /proc/self/environ is refused, and never read."""
    if record_files.kind(root.path, path) is None:
        raise ToolFailed(missing)
    try:
        return record_files.read_text(root.path, path)
    except (FileNotFoundError, NotADirectoryError):
        raise ToolFailed(missing) from None


def change_exists(context: ToolContext, change_id: str) -> changes.ChangePack:
    """The change pack, or ToolFailed naming the change that is not there."""
    if not changes.CHANGE_ID.match(change_id):
        raise ToolFailed(f"{change_id!r} is not a change id; a change id looks like CH-0001")
    if not (context.root.change_dir(change_id) / "change.yaml").is_file():
        raise ToolFailed(f"no change {change_id}")
    return changes.load(context.root, change_id)
