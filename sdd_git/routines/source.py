"""A routine's source as it is now, checked before any provider call: the build result, the
commit or the changed file an event names must exist; a missing one is reported, never
replaced (CONTRACT §10)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sdd_git.root import Root
from sdd_git.routines.routine import Routine
from sdd_git.routines.triggers import Event

_COMMIT = re.compile(r"[0-9a-fA-F]{4,64}\Z")
# `https://...`, `github-run:123`: a CI run no connector reads yet (issue 14). A Windows drive
# (`C:\...`, one letter) is a path.
_CI_RUN = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:")
PROTECTED = (".git", ".sdd")


@dataclass(frozen=True)
class Source:
    """What the routine works from, checked before any provider call."""

    words: str  # what the role is told about it
    missing: str | None = None  # the source, named, when it names nothing that exists
    why: str = ""
    attachment: Path | None = None  # a build result the role reads whole


def check_source(root: Root, routine: Routine, event: Event) -> Source:
    """The event's source as it is now: a build result, a commit or a changed file that must
    exist. A schedule has no source."""
    ref = event.ref.strip()
    shown = shown_ref(ref)
    if event.kind == "schedule":
        return Source(f"The schedule came due at {shown or event.at}; it has no source to read.")
    if event.kind == "main-build-failed":
        if not ref:
            return Source("", "the build result", "the event names no build result")
        if _CI_RUN.match(ref):
            return Source("", shown, "a CI run, and no connector reads CI runs yet")
        path, why = _inside_root(root, ref)
        if path is None or not _exists(path, file=True):
            return Source("", shown, why or "no such file")
        return Source(
            f"The build result {shown} is attached below: read it whole; it is the real "
            "result of this build, not a copy from before.",
            attachment=path,
        )
    if event.kind in ("push", "pr-merged"):
        commit = _commit(root, ref)
        if commit is None:
            return Source("", f"commit {shown}" if ref else "the commit", _no_commit(ref))
        return Source(f"The commit is {commit}; read it with git_log and git_diff.")
    path, why = _inside_root(root, ref)
    if path is None or not _exists(path):
        return Source("", shown or "the changed file", why or "no such file")
    return Source(f"The changed file is {shown}; read it with read_file.")


def shown_ref(text: str) -> str:
    """An event's text as the screen, the logs and the model get it: controls escaped, and a
    name that is not UTF-8 (a surrogate from the file system or a JSON escape) shown as its
    escape, never a crash on the way out."""
    from sdd_git.runner.words import visible

    return visible(text.encode("utf-8", "backslashreplace").decode("utf-8"), keep_newlines=False)


def _exists(path: Path, file: bool = False) -> bool:
    """Whether `path` names something now; a name the system cannot even look up (too long,
    a loop of links) names nothing: the source is missing, not an error."""
    try:
        return path.is_file() if file else path.exists()
    except (OSError, ValueError):
        return False


def _inside_root(root: Root, ref: str) -> tuple[Path | None, str]:
    """The file `ref` names, inside the root and outside `.git/` and `.sdd/`; or why not."""
    if not ref or "\0" in ref:
        return None, "the event names no file"
    base = root.path.resolve()
    given = Path(ref)
    try:
        resolved = (given if given.is_absolute() else base / given).resolve()
        inside = resolved.relative_to(base)
    except (ValueError, OSError, RuntimeError):
        return None, "it is outside the sdd root"
    if inside.parts and inside.parts[0].casefold() in PROTECTED:
        return None, "it is inside .git/ or .sdd/, which hold no build result"
    return resolved, ""


def _no_commit(ref: str) -> str:
    if not ref:
        return "the event names no commit"
    if not _COMMIT.match(ref):
        return "the event's ref is not a commit id"
    return "no such commit in this repository (fetch it first)"


def _commit(root: Root, ref: str) -> str | None:
    """The full id of the commit `ref` (hex, 4 to 64 digits) names in this repository."""
    if not _COMMIT.match(ref):
        return None
    import pygit2

    try:
        found = pygit2.discover_repository(str(root.path))
        if found is None:
            return None
        repo = pygit2.Repository(found)
        target = repo.revparse_single(ref)  # hex only: no `@{...}`, no `HEAD~`, no path
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return str(target.id) if isinstance(target, pygit2.Commit) else None


def branch_tip(root: Root, branch: str) -> str | None:
    """The commit at the tip of `refs/heads/BRANCH`, or None."""
    import pygit2

    try:
        found = pygit2.discover_repository(str(root.path))
        if found is None:
            return None
        reference = pygit2.Repository(found).references.get(f"refs/heads/{branch}")
        return None if reference is None else str(reference.resolve().target)
    except (pygit2.GitError, KeyError, ValueError):
        return None
