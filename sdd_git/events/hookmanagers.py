"""Where sdd's hook lives beside another hook manager, and what makes it fire there.

git runs one file per hook. When that file is a manager's, sdd's hook goes where the manager
looks, or keeps, the hook it found:

- pre-commit runs `HOOK.legacy` first ("migration mode"), so sdd's hook is `HOOK.legacy`;
- lefthook renames the hook it finds to `HOOK.old` and never runs it, so sdd's hook is
  `HOOK.old`, and fires once a job in lefthook's config calls it;
- husky 9 points core.hooksPath at `.husky/_`, whose stubs it rewrites on every install, and
  runs `.husky/HOOK`: sdd's hook stays in the repository's own hooks folder, and fires once
  `.husky/HOOK` calls it.

Each manager's own uninstall gives the file back where git runs it (pre-commit and lefthook
rename it back; without husky, git runs the repository's own folder again). Nothing here writes:
it reads, and says which lines would make the manager call sdd's hook."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from sdd_git.events.hookfile import (
    HUSKY,
    LEFTHOOK,
    OTHER,
    PRE_COMMIT,
    SDD,
    SDD_CHANGED,
    kind,
    read,
)

ANOTHER = "another hook"  # an unknown hook whose text names the file where sdd's hook is
# Hooks whose input git gives on stdin: a lefthook job gets it only with `use_stdin: true`.
_READS_STDIN = ("post-rewrite", "reference-transaction")
_LEFTHOOK_CONFIGS = tuple(
    f"{base}{local}.{ext}"
    for local in ("", "-local")
    for base in ("lefthook", ".lefthook", ".config/lefthook")
    for ext in ("yml", "yaml", "toml", "json", "jsonc")
)


@dataclass(frozen=True)
class Folders:
    """The folders a hook can be in."""

    runs_from: Path  # where git runs hooks from: core.hooksPath's folder, or `own`
    own: Path  # the repository's own hooks folder (in the common git dir)
    top: Path  # the top of the working tree, where git (and every manager) runs hooks
    common: Path  # the common git dir


@dataclass(frozen=True)
class Slot:
    """Where sdd's hook is, or goes, for one hook, and what runs it there."""

    path: Path  # sdd's file
    git_runs: Path  # the file git runs for this hook
    manager: str | None  # PRE_COMMIT, LEFTHOOK, HUSKY, ANOTHER; None: git runs sdd's file itself
    config: Path | None  # the manager's file that has to call sdd's (lefthook's, .husky/HOOK)
    calls: bool  # the manager runs sdd's file (pre-commit always; the others once configured)
    lines: str | None  # what to add to `config` so that it does
    top: Path | None = None  # the top of the working tree, for saying where a file is


def slot(folders: Folders, name: str) -> Slot:
    git_runs = folders.runs_from / name
    data = read(git_runs)
    found = kind(data)
    if found == PRE_COMMIT:
        legacy = git_runs.with_name(f"{name}.legacy")
        return Slot(legacy, git_runs, PRE_COMMIT, None, True, None, folders.top)
    if found == LEFTHOOK:
        return _configured(folders, name, git_runs, git_runs.with_name(f"{name}.old"), LEFTHOOK)
    if found == HUSKY:
        return _configured(folders, name, git_runs, folders.own / name, HUSKY)
    if found == OTHER and data is not None:
        for suffix in (".legacy", ".old"):
            kept = git_runs.with_name(name + suffix)
            if kind(read(kept)) in (SDD, SDD_CHANGED) and kept.name.encode() in data:
                return Slot(kept, git_runs, ANOTHER, None, True, None, folders.top)
    return Slot(git_runs, git_runs, None, None, True, None, folders.top)


def _configured(folders: Folders, name: str, git_runs: Path, path: Path, manager: str) -> Slot:
    named, spelled = _names(folders, path)
    if manager == LEFTHOOK:
        configs = [folders.top / c for c in _LEFTHOOK_CONFIGS]
        calling = next((c for c in configs if _mentions(c, named)), None)
        config = calling or next((c for c in configs if c.is_file()), configs[0])
        lines = _lefthook_lines(name, spelled)
    else:
        config = git_runs.parent.parent / name  # .husky/_/HOOK is run; .husky/HOOK is hers
        calling = config if _mentions(config, named) else None
        lines = _husky_lines(spelled)
    calls = calling is not None
    return Slot(path, git_runs, manager, config, calls, None if calls else lines, folders.top)


def _names(folders: Folders, path: Path) -> tuple[str, str]:
    """How a line names `path` from the top of the working tree, where managers run hooks: the
    part a config must hold to call it, and the shell word that says it. In the git dir it is
    `.git/...` where the git dir is the top's `.git` folder, else asked of git (a linked
    worktree, `--separate-git-dir`)."""
    if path.is_relative_to(folders.common):
        relative = path.relative_to(folders.common).as_posix()
        if folders.common == folders.top / ".git":
            return relative, shlex.quote(f".git/{relative}")
        return relative, f'"$(git rev-parse --git-common-dir)/{relative}"'
    if path.is_relative_to(folders.top):
        relative = path.relative_to(folders.top).as_posix()
        return relative, shlex.quote(relative)
    return str(path), shlex.quote(str(path))


def _mentions(config: Path, named: str) -> bool:
    data = read(config)
    if data is None:
        return False
    text = data.decode("utf-8", "replace")
    return re.search(rf"(?<![\w-]){re.escape(named)}(?![\w.-])", text) is not None


def _lefthook_lines(name: str, spelled: str) -> str:
    # lefthook runs a job with `sh -c` at the top of the working tree; {0} is git's arguments.
    run = f'sdd_hook={spelled}; [ ! -x "$sdd_hook" ] || "$sdd_hook" {{0}}'
    stdin = "      use_stdin: true\n" if name in _READS_STDIN else ""
    return f"{name}:\n  jobs:\n    - name: sdd\n      run: '{run}'\n{stdin}"


def _husky_lines(spelled: str) -> str:
    return (
        "# sdd: run sdd's hook, which fires its routines (lines from `sdd hooks install --path`)\n"
        f'[ ! -x {spelled} ] || {spelled} "$@"\n'
    )
