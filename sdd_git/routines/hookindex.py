"""The hooks' index, `.sdd/local/hooks/index`: what the git hooks read, with the shell's `read`
and nothing else, to decide whether any routine listens before they start Python.

Plain lines: `main BRANCH` first, then one `listen TRIGGER` line per distinct trigger of an
unpaused routine (`listen pr-merged`, `listen push main`, `listen file-changed src/**`,
`listen schedule 0 9 * * 1-5`). A hook that finds nothing it could fire exits at once; so a stale
index can only cost a wasted start, never a lost event, as long as every command that changes a
routine rewrites it (they call `write_index`)."""

from __future__ import annotations

from pathlib import Path

from sdd_git import statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError
from sdd_git.root import Root
from sdd_git.routines.routine import Routine, load_routines, main_branch

HEADER = (
    "# sdd: what the git hooks read to decide, without starting Python, whether a routine\n"
    "# listens. Rewritten whenever a routine changes; edits here are lost.\n"
)


def index_path(root: Root) -> Path:
    return root.local / "hooks" / "index"


def index_text(root: Root, routines: list[Routine]) -> str:
    """The index for these routines: paused ones are left out, each trigger listed once."""
    triggers: list[str] = []
    for routine in routines:
        if routine.paused:
            continue
        trigger = routine.on if routine.on is not None else f"schedule {routine.schedule}"
        if trigger not in triggers:
            triggers.append(trigger)
    lines = [f"main {main_branch(root)}", *(f"listen {t}" for t in sorted(triggers))]
    return HEADER + "".join(f"{line}\n" for line in lines)


def write_index(root: Root) -> Path:
    """Rewrite the index from the routines that load (a file that does not load is left out:
    the caller reports it, e.g. from `load_routines`). Written atomically, so a hook reads the
    old index or the new one."""
    routines, _problems = load_routines(root)
    path = index_path(root)
    text = index_text(root, routines)
    try:
        if statefolders.read_text(path) == text:
            return path  # unchanged: no write, so a watcher of .sdd/local sees nothing move
    except OSError:
        pass
    write_text_atomic(path, text)
    return path


def read_index(root: Root) -> tuple[str | None, list[str]]:
    """The main branch and the triggers the index lists, as the hooks see them."""
    main: str | None = None
    listening: list[str] = []
    try:
        text = statefolders.read_text(index_path(root))
    except (OSError, RecordError, UnicodeDecodeError):
        return None, []
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "main":
            main = rest.strip()
        elif word == "listen":
            listening.append(rest.strip())
    return main, listening
