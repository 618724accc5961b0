"""The git refs as an event source: the main branch, local or a remote's, moving to a new commit
writes `push`, and a merge commit arriving on the local main writes `pr-merged`. pygit2 is
imported only when a watcher reads the refs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import statefolders
from sdd_git.errors import RecordError, SddError
from sdd_git.events.queue import done_folder
from sdd_git.events.sources.emit import Emitter, stamp
from sdd_git.root import Root


@dataclass(frozen=True)
class GitFolders:
    git_dir: Path  # HEAD lives here
    common_dir: Path  # refs/ and packed-refs live here (differs from git_dir in a worktree)


def git_folders(root: Root) -> GitFolders:
    import pygit2

    found = pygit2.discover_repository(str(root.path))
    if found is None:
        raise SddError(
            f"{root.path} is not inside a git repository",
            hint="the watcher follows git refs: run git init (or sdd init) first",
        )
    git_dir = Path(found).resolve()
    common = git_dir
    pointer = git_dir / "commondir"
    if pointer.is_file():
        common = (git_dir / pointer.read_text(encoding="utf-8").strip()).resolve()
    return GitFolders(git_dir, common)


class Refs:
    """The commits the main branch points to, as last seen, and the events their moves write."""

    def __init__(self, git: GitFolders, emit: Emitter) -> None:
        self.git = git
        self.emit = emit
        self.main = "main"
        self.seen: dict[str, str] = {}
        self._repo: Any = None

    def _repository(self) -> Any:
        import pygit2

        if self._repo is None:
            self._repo = pygit2.Repository(str(self.git.git_dir))
        return self._repo

    def current_branch(self) -> str | None:
        try:
            head = self._repository().references.get("HEAD")
        except Exception:
            return None
        target = head.target if head is not None else None
        if isinstance(target, str) and target.startswith("refs/heads/"):
            return target[len("refs/heads/") :]
        return None

    def read(self) -> dict[str, str]:
        """The commits the main branch points to: `refs/heads/MAIN` and `refs/remotes/R/MAIN`."""
        found: dict[str, str] = {}
        try:
            references = self._repository().references
            names = [f"refs/heads/{self.main}"]
            suffix = f"/{self.main}"
            for name in references:
                if name.startswith("refs/remotes/") and name.endswith(suffix):
                    remote = name[len("refs/remotes/") : -len(suffix)]
                    if remote and "/" not in remote:
                        names.append(name)
            for name in names:
                reference = references.get(name)
                if reference is None:
                    continue
                target = reference.resolve().target
                found[name] = str(target)
        except Exception as exc:  # a ref file half written by git: read again on the next move
            self._repo = None
            self.emit.say(f"{stamp()} refs not read this time: {exc}")
            return dict(self.seen)
        return found

    def check(self) -> int:
        """Write the events of the moves since the last look; how many were written."""
        current = self.read()
        wrote = 0
        for name, commit in sorted(current.items()):
            if self.seen.get(name) == commit:
                continue
            old = self.seen.get(name)
            self.emit.say(f"{stamp()} {name} moved to {commit[:12]}")
            wrote += self._ref_event("push", commit, name, old)
            if name == f"refs/heads/{self.main}" and self._is_merge(commit):
                wrote += self._ref_event("pr-merged", commit, name, old)
        self.seen = current
        return wrote

    def _ref_event(self, kind: str, commit: str, name: str, old: str | None) -> int:
        # A git hook may have written this very event already (it is done, or still waiting and
        # then write_event coalesces): one move is one event.
        if self._already_done(kind, commit, self.main):
            return 0
        return self.emit.write(kind, commit, self.main, {"moved": name, "from": old})

    def _is_merge(self, commit: str) -> bool:
        try:
            return len(self._repository()[commit].parent_ids) >= 2
        except Exception:
            return False

    def _already_done(self, kind: str, ref: str, branch: str) -> bool:
        folder = done_folder(self.emit.root)
        if not folder.is_dir():
            return False
        for path in folder.glob("*.json"):
            try:
                data = json.loads(statefolders.read_text(path))
            except (OSError, ValueError, RecordError):
                continue
            if not isinstance(data, dict):
                continue
            if (data.get("kind"), data.get("ref"), data.get("branch")) == (kind, ref, branch):
                return True
        return False
