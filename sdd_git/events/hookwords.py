"""What `sdd hooks status` and `install` say about one hook, in plain words: where sdd's file is,
what runs it, and what to do when nothing does."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sdd_git.events.hookfile import HUSKY, LEFTHOOK, PRE_COMMIT
from sdd_git.events.hookmanagers import ANOTHER, Slot

if TYPE_CHECKING:
    from sdd_git.events.hooks import HookStatus

_SDDS = ("installed", "out of date", "modified by someone else")


def short(slot: Slot, path: Path) -> str:
    """A file beside the one git runs by its name; others from the top of the working tree."""
    if path.parent == slot.git_runs.parent:
        return path.name
    if slot.top is not None and path.is_relative_to(slot.top):
        return path.relative_to(slot.top).as_posix()
    return str(path)


def runner(slot: Slot) -> str:
    """Who git runs for this hook, said as the owner of that file."""
    name = short(slot, slot.git_runs)
    if slot.manager == PRE_COMMIT:
        return f"pre-commit's hook ({name})"
    if slot.manager == LEFTHOOK:
        return f"lefthook's hook ({name})"
    if slot.manager == HUSKY:
        top = slot.top
        shown = (
            slot.git_runs.relative_to(top) if top and slot.git_runs.is_relative_to(top) else name
        )
        return f"husky's hook ({shown})"
    if slot.manager == ANOTHER:
        return f"another hook ({name})"
    return "git"


def chain(legacy: Path | None) -> str:
    return "" if legacy is None else f" (chains {legacy.name})"


def installed_at(hook: HookStatus) -> str:
    """`installed`, and where, when that is not the file git runs."""
    return "installed" + _where(hook)


def _where(hook: HookStatus) -> str:
    slot = hook.slot
    if hook.path == slot.git_runs:
        return f" in {short(slot, hook.path.parent)}" if hook.hooks_path else ""
    if hook.path.parent == slot.git_runs.parent:
        return f" as {hook.path.name}"
    return f" in {short(slot, hook.path)}"


def at(hook: HookStatus, path: Path) -> str:
    """A file's name in front of what was done to it, unless it is where sdd's hook fires."""
    return "" if path == hook.slot.git_runs else f"{short(hook.slot, path)}: "


def status(hook: HookStatus) -> str:
    said = hook.state
    if hook.state in _SDDS:
        said += _where(hook) + _runs(hook)
        if hook.legacy is not None:
            said += f", chains {hook.legacy.name} (run first, its exit code kept)"
    elif hook.state == "not installed":
        said += _where(hook) + _would_run(hook)
    elif hook.state == "another hook" and hook.path != hook.slot.git_runs:
        said = f"not installed; {short(hook.slot, hook.path)} is another hook" + _runs(hook)
    elif hook.state == "another hook" and hook.hooks_path:
        said += f" in {short(hook.slot, hook.path.parent)}"
    if hook.legacy is not None and hook.state not in _SDDS:
        said += f"; {hook.legacy.name} is there too"
    for path in hook.stale:
        said += f"; sdd's copy {short(hook.slot, path)} is not run"
    command = "sdd hooks install --path" if hook.hooks_path else "sdd hooks install"
    if hook.state == "out of date" or (hook.state in _SDDS and hook.stale):
        said += f": run `{command}` to update it"
    elif hook.state == "not installed" and (hook.hooks_path or hook.stale):
        said += f": `{command}` installs it"
    elif hook.state == "another hook" and hook.legacy is None:
        kept = hook.path.name + ".before-sdd"
        said += f": `{command}` keeps it as {kept}, run first by sdd's"
    if hook.state in _SDDS and not hook.slot.calls:
        said += f" (`{command}` prints the lines to add)"
    return said


def _runs(hook: HookStatus) -> str:
    slot = hook.slot
    if slot.manager == PRE_COMMIT:
        return f": {runner(slot)} runs it first, then its own hooks"
    if slot.manager == ANOTHER:
        return f": {runner(slot)} names it, and fires it if it runs it"
    if slot.manager in (LEFTHOOK, HUSKY) and slot.config is not None:
        config = short(slot, slot.config)
        if slot.calls:
            return f": {runner(slot)} runs it, called from {config}"
        if slot.manager == LEFTHOOK:
            jobs = f"the jobs in {config}, none of which calls it"
            return f", and nothing runs it yet: {runner(slot)} runs {jobs}"
        return f", and nothing runs it yet: {runner(slot)} runs {config}, which does not call it"
    return ""


def _would_run(hook: HookStatus) -> str:
    slot = hook.slot
    if slot.manager is None or slot.manager == ANOTHER:
        return ""
    if slot.manager == PRE_COMMIT:
        return f" ({runner(slot)} would run it first)"
    config = short(slot, slot.config) if slot.config is not None else "its config"
    return f" ({runner(slot)} would run it once {config} calls it)"
