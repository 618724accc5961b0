"""Which repository a git command reads its configuration and hooks from, and where it pushes.

A repository whose git folder is named `.git` is safe to run git in: no agent writes a path with
a `.git` part, so its configuration and hooks are the person's. A bare repository anywhere else
(`/tmp/x.git`, made by `git clone --bare`) is a folder like any other: an agent can write its
`config` (`diff.external`, `core.fsmonitor`) or its hooks, then have git run them. So git run in
a repository sdd guard cannot vouch for, or pushing into one on this machine (whose receive hooks
run as the person), is asked about."""

from __future__ import annotations

import os

from sdd_git.hostguard.call import Answer, ask

# Subcommands that need no repository where they run (they make one, or only print).
_NO_REPOSITORY = frozenset({"clone", "init", "help", "version"})
# Subcommands that hand a repository named on the line to git on this machine, which runs its
# hooks (push's receive hooks) as the person.
_SENDS_TO = frozenset({"push", "send-pack"})


def repository_answer(sub: str, rest: list[str], cwd: str) -> Answer | None:
    if sub not in _NO_REPOSITORY and not _vouched(cwd):
        return ask(
            f"git {sub} would run in {cwd}, which is not inside a repository whose git folder is "
            "`.git`: its configuration and hooks may be anyone's, and git runs what they name"
        )
    if sub in _SENDS_TO:
        target = next((word for word in rest if not word.startswith("-")), None)
        if target is not None and _local(target, cwd):
            return ask(
                f"git {sub} into {target}, a repository on this machine, runs its hooks as the "
                "person, and sdd guard cannot vouch for them"
            )
    if sub == "remote" and rest[:1] in (["add"], ["set-url"]):
        urls = [word for word in rest[1:] if not word.startswith("-")][1:]
        if any(_local(url, cwd) for url in urls):
            return ask(
                "a remote on this machine runs its own hooks when pushed to, and sdd guard "
                "cannot vouch for them"
            )
    return None


def _vouched(cwd: str) -> bool:
    """The folder is inside a work tree with a `.git` entry, or inside a `.git` folder."""
    folder = os.path.realpath(cwd)
    while True:
        if os.path.basename(folder) == ".git" or os.path.lexists(os.path.join(folder, ".git")):
            return True
        if _bare(folder):
            return False
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _bare(folder: str) -> bool:
    return all(os.path.exists(os.path.join(folder, name)) for name in ("HEAD", "objects", "refs"))


def _local(target: str, cwd: str) -> bool:
    """A repository named by a path or a file URL, rather than a remote's name or a URL."""
    if target.startswith(("/", "./", "../", "~", "file:")) or target in (".", ".."):
        return True
    if "://" in target or (":" in target and "/" not in target.split(":", 1)[0]):
        return False  # https://..., ssh://..., host:path
    return os.path.isdir(os.path.join(cwd, target))
