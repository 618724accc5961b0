"""Read tools: look at the product and its record, change nothing.

Files are opened through `beneath` (never following a symlink out, or at all for a
write), and git through `gitcall` (which runs nothing a role wrote).
"""

from __future__ import annotations

import fnmatch
import json
import re
import stat
from pathlib import Path

from sdd_git import beneath as record_files
from sdd_git.records import changes, decisions, ids
from sdd_git.records.spec import read_spec
from sdd_git.root import Root
from sdd_git.toolnames import ToolClass
from sdd_git.tools import beneath
from sdd_git.tools.base import Args, BaseTool, ToolContext, ToolFailed, ToolOutcome, root_dir
from sdd_git.tools.beneath import Folder, Found
from sdd_git.tools.gitcall import (
    git_output,
    has_head,
    in_git_repo,
    listed_names,
    require_git_repo,
)
from sdd_git.tools.schema import ID_CHARS, bounded, make_schema, text_property
from sdd_git.yamlio import dump_yaml

READ_CAP_BYTES = 200 * 1024
LIST_CAP_LINES = 2000
SEARCH_CAP_MATCHES = 200
SEARCH_MAX_FILE_BYTES = 10 * 1024 * 1024
SEARCH_LINE_CHARS = 300


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
        names = {n for n in listed_names(context, base.rel) if not _is_git_internal(n)}
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
    reads = ("path",)
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
    reads = ("path",)
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
    reads = ("path",)
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


ID_SHAPES = "CH-0001, SPEC-0001, SPEC-0001#S1, D-0001 or R-0001"


class ReadRecord(ReadTool):
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
        if ids.CHANGE_ID.match(record_id):
            if not (root.change_dir(record_id) / "change.yaml").is_file():
                raise ToolFailed(f"no change {record_id}")
            from sdd_git.records.view import describe_change

            described = describe_change(root, record_id)
            return ToolOutcome(
                json.dumps(described, indent=2, ensure_ascii=False), {"id": record_id}
            )
        if ids.SPEC_ID.match(record_id):
            text = _record_text(root, root.spec_file(record_id), f"no spec {record_id}")
            return ToolOutcome(text, {"id": record_id})
        section_ref = ids.SECTION_ID.match(record_id)
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
        if ids.DECISION_ID.match(record_id):
            log = decisions.load(root)
            found = next((d for d in log.entries if d.id == record_id), None)
            if found is None:
                raise ToolFailed(f"no decision {record_id}")
            entry = {**found.as_dict(), "replaced_by": log.replaced_by(found.id)}
            return ToolOutcome(dump_yaml(entry).rstrip("\n"), {"id": record_id})
        if ids.RELEASE_ID.match(record_id):
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
    if not ids.CHANGE_ID.match(change_id):
        raise ToolFailed(f"{change_id!r} is not a change id; a change id looks like CH-0001")
    if not (context.root.change_dir(change_id) / "change.yaml").is_file():
        raise ToolFailed(f"no change {change_id}")
    return changes.load(context.root, change_id)
