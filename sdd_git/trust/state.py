"""sdd's own state is never the repository's: a tracked file under `.sdd/local/` or
`.sdd/role-runs/` came with a clone, a merge or a pull (force-added past .gitignore), and reads
as a waiting event, a pending stop or a run log that nobody here wrote. Every path that acts on
that state (the worker, answering a stop, releasing what waits) refuses while git tracks any of
it, and says how to clear it."""

from __future__ import annotations

import os
import subprocess

from sdd_git.errors import RecordError
from sdd_git.root import Root
from sdd_git.statefolders import STATE_FOLDERS

_seen: dict[str, tuple[tuple[int, int], list[str]]] = {}


def _index_stamp(root: Root) -> tuple[int, int]:
    try:
        info = os.stat(root.path / ".git" / "index")
    except OSError:
        return (0, 0)
    return (info.st_mtime_ns, info.st_size)


def tracked_state(root: Root) -> list[str]:
    """The files under sdd's state folders that git tracks (normally none). Read once per
    process while git's index is unchanged."""
    stamp = _index_stamp(root)
    memo = _seen.get(str(root.path))
    if memo is not None and memo[0] == stamp:
        return memo[1]
    try:
        done = subprocess.run(
            # ls-files reads the index: no hook, filter, pager or fsmonitor of the repo runs.
            ["git", "-c", "core.fsmonitor=", "ls-files", "-z", "--", *STATE_FOLDERS],
            cwd=root.path, capture_output=True, timeout=10, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return []
    found = [p for p in done.stdout.decode("utf-8", "replace").split("\0") if p]
    _seen[str(root.path)] = (stamp, found)
    return found


def refuse_tracked_state(root: Root, doing: str) -> None:
    found = tracked_state(root)
    if found:
        shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        raise RecordError(
            f"{doing} is refused: git tracks files in sdd's own state ({shown}); they came with "
            "the repository, and sdd never acts on state it did not write",
            hint="take them out of git and remove them: git rm -r --cached -q .sdd/local "
            ".sdd/role-runs && rm -rf .sdd/local .sdd/role-runs (your confirmations, "
            "conversations and run logs there are then gone: confirm again with sdd trust review)",
        )
