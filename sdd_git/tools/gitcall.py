"""sdd's own git calls: git runs nothing a role could have written.

A role writes the product folder, so anything git would run from there is the role's code:
a `core.hooksPath` inside it, the husky layout, the person's own pre-commit hook running pytest
with a `conftest.py` the role wrote, a `.gitattributes` that routes every file through a filter
or textconv program, an fsmonitor, a signing program, a pager, an external diff, a credential
helper. Every git sdd runs for a role therefore gets `-c` settings, which beat every config
file, that switch each of these off; the command's own flags say the same where git has them.

Aliases need nothing: git never lets an alias shadow a built-in command, and sdd runs only
built-in ones.

`git push` is the one call that needs a program from configuration: the person's credential
helper or ssh command, which only she can configure (`$HOME` and `.git/` are closed to roles).
It keeps those, and refuses when any setting comes from a file inside the product folder (an
`include.path` pointing there), names a program there, or the remote itself lives there (its
hooks would be the role's).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sdd_git.childenv import GIT_IDENTITY
from sdd_git.tools.base import ToolContext, ToolFailed

GIT_TIMEOUT_SECONDS = 120.0
# As a program, /dev/null cannot be executed: git reports an error and nothing runs, with no
# PATH lookup a planted `false` could answer.
NOWHERE = "/dev/null"

ALWAYS: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # no hook of any kind: pre-commit, reference-transaction...
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),  # git treats `cat` as no pager at all
    ("core.editor", NOWHERE),
    ("sequence.editor", NOWHERE),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("tag.forceSignAnnotated", "false"),
    ("log.showSignature", "false"),  # verifying a signature would run gpg.program too
    ("gpg.program", NOWHERE),
    ("gpg.openpgp.program", NOWHERE),
    ("gpg.ssh.program", NOWHERE),
    ("gpg.x509.program", NOWHERE),
    ("gpg.ssh.defaultKeyCommand", NOWHERE),
    # Empty makes git fail where it would run one; diff and log also get --no-ext-diff.
    ("diff.external", ""),
    ("core.attributesFile", "/dev/null"),
    ("protocol.ext.allow", "never"),  # ext:: URLs run a command
    ("uploadpack.packObjectsHook", ""),
    ("core.alternateRefsCommand", ""),
)
# Everything but push needs no transport at all: no credential helper (empty resets the list,
# URL-specific helpers included), no ssh or askpass program, no protocol (a partial clone
# would otherwise fetch missing objects with the person's credentials during `git log`).
NOT_PUSH: tuple[tuple[str, str], ...] = (
    ("credential.helper", ""),
    ("core.sshCommand", NOWHERE),
    ("core.askPass", NOWHERE),
    ("protocol.allow", "never"),
)
# Command flags, where git has them, next to the settings. Status and diff would otherwise run
# `git status` inside each submodule, whose own configuration (in .git/modules/, out of reach
# of the overrides read here) may name a filter for files the role wrote; `dirty` still reports
# a submodule at a new commit.
COMMAND_FLAGS: dict[str, tuple[str, ...]] = {
    "status": ("--ignore-submodules=dirty",),
    "diff": ("--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty"),
    "log": ("--no-ext-diff", "--no-textconv"),
    "show": ("--no-ext-diff", "--no-textconv"),
    "commit": ("--no-verify",),
    "push": ("--no-verify",),
}
# Settings a push runs as a program: refused when they name something inside the product.
PUSH_PROGRAMS = re.compile(
    r"^(credential(\..+)?\.helper|core\.sshcommand|core\.askpass|core\.gitproxy"
    r"|remote\..+\.receivepack)$"
)
_FILTER_KEY = re.compile(r"^filter\.(.+)\.[^.]+$")
_SAFE_NAME = re.compile(r"^[^=\n\0]+$")


@dataclass(frozen=True)
class Setting:
    origin: str  # as git says it: "file:.git/config", "command line:", ...
    key: str  # section and variable lowercased, subsection as written
    value: str


def git_env(context: ToolContext, push: bool = False) -> dict[str, str]:
    # The run's child environment (sdd_git.childenv); of git's own variables, only the identity
    # she set is kept: any other GIT_* (GIT_DIR, GIT_CONFIG_*, GIT_EXEC_PATH, GIT_SSH_COMMAND...)
    # could redirect git.
    env = {
        key: value
        for key, value in context.child_env.items()
        if not key.startswith("GIT_") or key in GIT_IDENTITY
    }
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password nobody will type
    if not push:
        env["GIT_CONFIG_NOSYSTEM"] = "1"
    # A push keeps the system file: it is root's, and is where some installs (Apple's git)
    # name the credential helper the person's push needs.
    env["PATH"] = _safe_path(env.get("PATH", os.defpath), _root(context))
    return env


def _root(context: ToolContext) -> Path:
    return context.root.path.resolve()


def _inside(path: Path, root: Path) -> bool:
    """True when `path` (absolute) is in the product folder, by its name or where it leads."""
    lexical = Path(os.path.normpath(path))
    if lexical == root or lexical.is_relative_to(root):
        return True
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return False
    return real == root or real.is_relative_to(root)


def _safe_path(path: str, root: Path) -> str:
    """PATH without the folders a role could fill: relative ones (empty means the current
    folder) and any inside the product (`node_modules/.bin`, a direnv `bin/`)."""
    kept = [
        entry
        for entry in path.split(os.pathsep)
        if entry and os.path.isabs(entry) and not _inside(Path(entry), root)
    ]
    return os.pathsep.join(kept)


def _role_writable(path: Path, root: Path) -> bool:
    """Inside the product folder and outside git's own folder (which roles cannot write)."""
    git_dir = root / ".git"
    if not _inside(path, root):
        return False
    lexical = Path(os.path.normpath(path))
    return not (lexical == git_dir or lexical.is_relative_to(git_dir))


def _subcommand(args: tuple[str, ...]) -> str:
    return next((a for a in args if not a.startswith("-")), "")


def _launch(
    context: ToolContext,
    argv: list[str],
    env: dict[str, str],
    timeout: float,
    input_text: str | None,
    name: str,
) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("git", path=env["PATH"])
    if binary is None:
        raise ToolFailed("git is not installed or not on PATH")
    try:
        return subprocess.run(
            [binary, *argv],
            cwd=_root(context),
            env=env,
            input=input_text,
            stdin=subprocess.DEVNULL if input_text is None else None,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise ToolFailed("git is not installed or not on PATH") from None
    except subprocess.TimeoutExpired:
        raise ToolFailed(
            f"git {name} did not finish within {timeout:.0f} s; it was stopped"
        ) from None


def settings(context: ToolContext, push: bool = False) -> list[Setting]:
    """git's configuration as this call would see it, with where each value comes from.

    Reading configuration runs nothing: no hook, filter or helper.
    """
    result = _launch(
        context,
        ["--no-pager", "config", "--show-origin", "--null", "--list"],
        git_env(context, push),
        GIT_TIMEOUT_SECONDS,
        None,
        "config",
    )
    if result.returncode != 0:
        said = result.stderr.strip() or f"exit code {result.returncode}"
        raise ToolFailed(f"git cannot read its configuration: {said}")
    fields = result.stdout.split("\0")
    found: list[Setting] = []
    for index in range(0, len(fields) - 1, 2):
        key, _, value = fields[index + 1].partition("\n")
        found.append(Setting(fields[index], key, value))
    return found


def filter_drivers(found: list[Setting]) -> list[str]:
    """The filter drivers configured anywhere (`filter.NAME.clean`, `.smudge`, `.process`)."""
    names: list[str] = []
    for setting in found:
        match = _FILTER_KEY.match(setting.key)
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return names


def hardening(found: list[Setting], push: bool) -> list[str]:
    """The `-c` options for one call: the fixed ones, and every filter driver switched off."""
    pairs = list(ALWAYS) if push else [*ALWAYS, *NOT_PUSH]
    for name in filter_drivers(found):
        if not _SAFE_NAME.match(name):
            # `-c` splits at the first '=': such a name could not be switched off reliably.
            raise ToolFailed(
                f"git's configuration names a filter driver sdd cannot switch off ({name!r}); "
                "nothing ran"
            )
        # An empty command is "no filter" to git (convert.c runs only a non-empty one), and a
        # filter that is not required may be skipped without failing the command.
        pairs += [
            (f"filter.{name}.clean", ""),
            (f"filter.{name}.smudge", ""),
            (f"filter.{name}.process", ""),
            (f"filter.{name}.required", "false"),
        ]
    options: list[str] = ["--no-pager"]
    for key, value in pairs:
        options += ["-c", f"{key}={value}"]
    return options


def _names_product_program(value: str, root: Path) -> bool:
    """True when a program setting names a file inside the product (`!./tools/cred.sh`)."""
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    for word in words:
        word = word.lstrip("!")
        if "/" not in word:
            continue
        path = Path(word) if os.path.isabs(word) else root / word
        if _inside(path, root):
            return True
    return False


def check_push_settings(context: ToolContext, found: list[Setting]) -> None:
    """A push keeps the person's credential programs, so none of them may be a role's."""
    root = _root(context)
    for setting in found:
        if setting.origin.startswith("file:"):
            source = Path(setting.origin[len("file:") :])
            source = Path(os.path.normpath(source if source.is_absolute() else root / source))
            if _role_writable(source, root):
                shown = source.relative_to(root) if source.is_relative_to(root) else source
                raise ToolFailed(
                    f"git's configuration reads {shown.as_posix()}, a file "
                    "inside the product folder that roles can write; sdd pushes only with "
                    "configuration a role cannot change. Nothing was pushed."
                )
        if PUSH_PROGRAMS.match(setting.key) and _names_product_program(setting.value, root):
            raise ToolFailed(
                f"git's setting {setting.key} runs {setting.value!r}, inside the product folder "
                "that roles can write; nothing was pushed"
            )


def _local_url_inside(url: str, root: Path) -> bool:
    if url.startswith("file://"):
        path = url[len("file://") :]
    elif "://" in url or re.match(r"^[^/]+:", url):
        return False  # a network URL, or scp-style host:path
    else:
        path = url
    full = Path(path) if os.path.isabs(path) else root / path
    return _inside(full, root)


def check_push_target(context: ToolContext, remotes: list[str]) -> None:
    """A remote inside the product folder would run its own hooks, which a role wrote."""
    root = _root(context)
    for remote in remotes:
        result = run_git(context, "remote", "get-url", "--push", "--all", remote)
        if result.returncode != 0:
            continue  # git push says what is wrong with the remote
        for url in result.stdout.splitlines():
            if url.strip() and _local_url_inside(url.strip(), root):
                raise ToolFailed(
                    f"the remote {remote} is a folder inside the product ({url.strip()}); "
                    "pushing there would run hooks a role could have written. Nothing was pushed."
                )


def run_git(
    context: ToolContext,
    *args: str,
    timeout: float = GIT_TIMEOUT_SECONDS,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """git `args` in the product folder, hardened (see the module's doc)."""
    command = _subcommand(args)
    push = command == "push"
    found = settings(context, push)
    if push:
        check_push_settings(context, found)
    argv = list(args)
    flags = COMMAND_FLAGS.get(command, ())
    if flags:
        at = argv.index(command) + 1
        argv[at:at] = flags
    return _launch(
        context,
        [*hardening(found, push), *argv],
        git_env(context, push),
        timeout,
        input_text,
        command,
    )


def git_output(context: ToolContext, *args: str) -> str:
    """stdout of a git command that must succeed, else ToolFailed with git's own words."""
    result = run_git(context, *args)
    if result.returncode != 0:
        said = (result.stderr or result.stdout).strip() or f"exit code {result.returncode}"
        raise ToolFailed(f"git {_subcommand(args)} failed: {said}")
    return result.stdout


def listed_names(context: ToolContext, *paths: str) -> list[str]:
    """The files under the literal `paths` that git knows of: tracked, and untracked ones not
    ignored (never an ignored one)."""
    listing = git_output(
        context, "--literal-pathspecs", "ls-files", "-z", "--cached", "--others",
        "--exclude-standard", "--", *paths,
    )  # fmt: skip
    return [name for name in listing.split("\0") if name]


def in_git_repo(context: ToolContext) -> bool:
    try:
        result = run_git(context, "rev-parse", "--is-inside-work-tree")
    except ToolFailed:
        return False
    return result.returncode == 0 and result.stdout.strip() == "true"


def require_git_repo(context: ToolContext) -> None:
    if not in_git_repo(context):
        raise ToolFailed("the product folder is not a git repository")


def has_head(context: ToolContext) -> bool:
    return run_git(context, "rev-parse", "--verify", "--quiet", "HEAD").returncode == 0


def filtered_files(context: ToolContext, files: list[str]) -> dict[str, str]:
    """The files among `files` that git would pass through a configured filter driver, with
    the driver's name. Asking runs nothing: check-attr only reads the attributes."""
    drivers = set(filter_drivers(settings(context)))
    if not drivers or not files:
        return {}
    result = run_git(
        context, "check-attr", "-z", "--stdin", "filter", input_text="\0".join(files) + "\0"
    )
    if result.returncode != 0:
        said = result.stderr.strip() or f"exit code {result.returncode}"
        raise ToolFailed(f"git check-attr failed: {said}")
    fields = result.stdout.split("\0")
    found: dict[str, str] = {}
    for index in range(0, len(fields) - 2, 3):
        path, value = fields[index], fields[index + 2]
        if value in drivers:
            found[path] = value
    return found
