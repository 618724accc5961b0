"""Consequential tools: they change the product, its history or the world outside.

They run only after the person allowed exactly this call (or an `always_allow` rule matched);
the runner decided that before `run`. Every path still stays inside the product folder, every
child process gets `context.child_env`, and every text that leaves goes through `context.mask`.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from sdd_git.toolnames import ToolClass
from sdd_git.tools import beneath
from sdd_git.tools.actionwords import (
    block,
    content_start,
    plain,
    quoted,
    write_words,
)
from sdd_git.tools.base import Args, BaseTool, ToolContext, ToolFailed, ToolOutcome, root_dir
from sdd_git.tools.gitcall import (
    check_push_target,
    filtered_files,
    git_output,
    has_head,
    listed_names,
    require_git_repo,
    run_git,
)
from sdd_git.tools.schema import ID_CHARS, NAME_CHARS, PURPOSE, bounded, make_schema, text_property

COMMAND_TIMEOUT_SECONDS = 600.0
PUSH_TIMEOUT_SECONDS = 600.0
OUTPUT_HEAD_BYTES = 20 * 1024
OUTPUT_TAIL_BYTES = 30 * 1024  # head + tail: the 50 KB of output a command gives back
_LINGER_SECONDS = 2.0
# Never committed, whatever a commit's paths say: run logs, local state and git's own folder.
NEVER_COMMITTED = (".sdd/role-runs", ".sdd/local")
_REMOTE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ActTool(BaseTool):
    tool_class: ToolClass = "consequential"


class WriteFile(ActTool):
    writes = ("path",)
    produces = ("code", "release-notes")
    schema = make_schema(
        "write_file",
        "Write a file of the product (created with its folders, or replaced whole).",
        {
            "path": text_property("file path, relative to the product folder"),
            "content": {"type": "string", "description": "the whole new content of the file"},
            "purpose": PURPOSE,
        },
        ("path", "content", "purpose"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raw = args.text("path")
        content = args.text("content", blank_ok=True)
        args.text("purpose")
        with beneath.folder(root_dir(context)) as top:
            rel = top.shown(raw)
            if beneath.is_dir_entry(top.lstat(raw)):
                raise ToolFailed(f"{rel} is a folder; write_file writes a file")
            # Never through a symlink: a folder swapped for one since the guard looked makes
            # the write fail, and a symlink at the name itself is replaced, not written through.
            existed = top.write_atomic(raw, content.encode("utf-8"))
        size = len(content.encode("utf-8"))
        verb = "Replaced" if existed else "Created"
        return ToolOutcome(f"{verb} {rel}: {size:,} bytes written.", {"path": rel, "bytes": size})

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        content = str(args.get("content", ""))
        said = f"{write_words(args.get('path'), content, root)}, starting:\n"
        return said + f"{block(content_start(content))}\n"


class DeleteFile(ActTool):
    writes = ("path",)
    produces = ("code",)
    schema = make_schema(
        "delete_file",
        "Delete one file of the product.",
        {
            "path": text_property("file path, relative to the product folder"),
            "purpose": PURPOSE,
        },
        ("path", "purpose"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raw = args.text("path")
        args.text("purpose")
        with beneath.folder(root_dir(context)) as top:
            rel = top.shown(raw)
            entry = top.lstat(raw)
            if entry is None:
                raise ToolFailed(f"no file {rel}; nothing was deleted")
            if beneath.is_dir_entry(entry):
                raise ToolFailed(f"{rel} is a folder; delete_file deletes one file")
            top.unlink(raw)  # the entry itself: a symlink goes, what it points to stays
        return ToolOutcome(f"Deleted {rel}.", {"path": rel})

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        return f"Delete the file {plain(args.get('path'))}"


def _commit_paths(context: ToolContext, raw_paths: list[str]) -> list[str]:
    rels: list[str] = []
    with beneath.folder(root_dir(context)) as top:
        for raw in raw_paths:
            rel = top.shown(raw)  # a pathspec: git itself refuses one beyond a symlink
            if _never_committed(rel):
                raise ToolFailed(
                    f"{rel} is never committed (git's folder, run logs or local state)"
                )
            if rel not in rels:
                rels.append(rel)
    return rels


class GitCommit(ActTool):
    produces = ("code",)
    schema = make_schema(
        "git_commit",
        "Commit exactly the named paths (their current content) with a message; "
        "nothing else is staged or committed.",
        {
            "message": {"type": "string", "description": "the commit message"},
            "paths": {
                "type": "array",
                "minItems": 1,
                "items": {"type": "string"},
                "description": "files or folders to commit, relative to the product folder",
            },
        },
        ("message", "paths"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        message = args.text("message")
        rels = _commit_paths(context, args.text_list("paths"))
        require_git_repo(context)
        files = _files_under(context, rels)
        on_disk_or_staged = _split_z(
            git_output(context, "--literal-pathspecs", "ls-files", "-z", "-c", "-o", "--", *files)
        )
        staged_now = [f for f in files if f in on_disk_or_staged]
        _refuse_filtered(context, staged_now)
        if staged_now:
            _git_with_paths(context, "git add", ["add", "-A"], staged_now)
        result = _git_with_paths(
            context, "git commit", ["commit", "--quiet", "-m", message], files, check=False
        )
        if result.returncode != 0:
            said = (result.stdout + result.stderr).strip() or f"exit code {result.returncode}"
            raise ToolFailed(f"git commit failed; nothing was committed: {said}")
        commit = git_output(context, "rev-parse", "HEAD").strip()
        listing = git_output(
            context, "diff-tree", "-z", "--no-commit-id", "--name-only", "-r", "--root", "HEAD"
        )
        committed = _split_z(listing)
        return ToolOutcome(
            f"Committed {commit[:12]} with {len(committed)} file(s): {', '.join(committed)}.",
            {"commit": commit, "files": committed},
        )

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        paths = ", ".join(plain(p) for p in args.get("paths") or []) or "(no paths)"
        message = quoted(args.get("message"))
        return f"Commit {paths} with the message {message} (git hooks are skipped)"


def _refuse_filtered(context: ToolContext, files: list[str]) -> None:
    """sdd's git never runs a filter program (`.gitattributes` is the role's to write), and
    staging without the filter would store the raw content: with git-lfs the whole file, with
    git-crypt the secret in clear. Such files are the person's to commit."""
    filtered = filtered_files(context, files)
    if filtered:
        named = ", ".join(f"{path} (filter {driver})" for path, driver in sorted(filtered.items()))
        raise ToolFailed(
            f"git commit: {named} goes through a git filter, which sdd never runs; committing "
            "without it would store the file unfiltered. Nothing was committed; the person "
            "commits these files herself."
        )


def _split_z(text: str) -> list[str]:
    return [name for name in text.split("\0") if name]


def _never_committed(rel: str) -> bool:
    return ".git" in rel.split("/") or any(
        rel == n or rel.startswith(n + "/") for n in NEVER_COMMITTED
    )


def _files_under(context: ToolContext, rels: list[str]) -> list[str]:
    """The files the named paths cover: tracked (also deleted ones) and untracked not ignored,
    never git's folder, run logs or local state. Each named path must cover one."""
    found = set(listed_names(context, *rels))
    if has_head(context):
        tree = git_output(
            context, "--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", "HEAD", "--",
            *rels,
        )  # fmt: skip
        found |= set(_split_z(tree))
    files = sorted(f for f in found if not _never_committed(f))
    for rel in rels:
        if rel != "." and not any(f == rel or f.startswith(rel + "/") for f in files):
            raise ToolFailed(
                f"{rel} matches no file that can be committed (missing, or ignored by git); "
                "nothing was committed"
            )
    if not files:
        raise ToolFailed("those paths hold no file that can be committed; nothing was committed")
    return files


def _git_with_paths(
    context: ToolContext, what: str, command: list[str], paths: list[str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run git with exactly `paths` as literal pathspecs, passed on stdin (any number of them)."""
    result = run_git(
        context,
        "--literal-pathspecs",
        *command,
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
        input_text="\0".join(paths) + "\0",
        timeout=COMMAND_TIMEOUT_SECONDS,  # a large commit can take a while
    )
    if check and result.returncode != 0:
        said = (result.stdout + result.stderr).strip() or f"exit code {result.returncode}"
        raise ToolFailed(f"{what} failed; nothing was committed: {said}")
    return result


def _split_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _check_ref_name(context: ToolContext, kind: str, name: str, prefix: str) -> None:
    if name.startswith("-") or name.startswith("+") or ":" in name:
        raise ToolFailed(f"{name!r} is not a valid {kind} name")
    if run_git(context, "check-ref-format", f"{prefix}{name}").returncode != 0:
        raise ToolFailed(f"{name!r} is not a valid {kind} name")


class GitPush(ActTool):
    produces = ("code",)
    schema = make_schema(
        "git_push",
        "Push a branch to a remote (default: the current branch to its upstream). "
        "Never forces and never deletes.",
        {
            "remote": bounded(NAME_CHARS, "a configured remote's name, e.g. origin"),
            "branch": bounded(NAME_CHARS, "the branch to push, e.g. main"),
        },
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        remote = args.opt_text("remote")
        branch = args.opt_text("branch")
        require_git_repo(context)
        if remote is not None and not _REMOTE.match(remote):
            raise ToolFailed(f"{remote!r} is not a remote name; name a configured remote")
        if branch is not None:
            _check_ref_name(context, "branch", branch, "refs/heads/")
            remote = remote or "origin"
        named = [remote] if remote else _split_lines(git_output(context, "remote"))
        check_push_target(context, named)
        command = ["push", *([remote] if remote else []), *([branch] if branch else [])]
        result = run_git(context, *command, timeout=PUSH_TIMEOUT_SECONDS)
        said = (result.stdout + result.stderr).strip()
        if result.returncode != 0:
            raise ToolFailed(f"git push failed; nothing was pushed: {said or result.returncode}")
        return ToolOutcome(f"Pushed ({' '.join(['git', *command])}).\n{said}".rstrip())

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        a = args
        branch = f"the branch {plain(a['branch'])}" if a.get("branch") else "the current branch"
        remote = plain(a["remote"]) if a.get("remote") else "its upstream"
        return f"Push {branch} to {remote} (git hooks are skipped)"


class GitTag(ActTool):
    produces = ("code",)
    schema = make_schema(
        "git_tag",
        "Tag the current commit (an annotated tag when a message is given).",
        {
            "name": bounded(ID_CHARS, "the tag's name, e.g. v1.2.0"),
            "message": {"type": "string", "description": "the annotated tag's message"},
        },
        ("name",),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        name = args.text("name").strip()
        message = args.opt_text("message")
        require_git_repo(context)
        _check_ref_name(context, "tag", name, "refs/tags/")
        command = ["tag", "-a", name, "-m", message] if message else ["tag", name]
        result = run_git(context, *command)
        if result.returncode != 0:
            said = (result.stdout + result.stderr).strip() or f"exit code {result.returncode}"
            raise ToolFailed(f"git tag failed; no tag was written: {said}")
        commit = git_output(context, "rev-parse", f"refs/tags/{name}^{{commit}}").strip()
        kind = "annotated tag" if message else "tag"
        return ToolOutcome(
            f"Wrote the {kind} {name} at {commit[:12]}.",
            {"tag": name, "commit": commit, "annotated": bool(message)},
        )

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        said = f"Write the git tag {plain(args.get('name'))}"
        if args.get("message"):
            said += f" with the message {quoted(args.get('message'))}"
        return said
