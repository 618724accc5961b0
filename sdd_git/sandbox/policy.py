"""What a sandboxed command may touch, as data every backend (bubblewrap, Landlock, Seatbelt)
turns into its own rules. The product folder is writable except the protected parts; the rest of
the machine is read-only; credential files are hidden; /tmp and HOME are a private scratch folder.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

# The tables are in sdd_git.sandbox.tables, which `sdd guard` reads without this module's Policy;
# every name stays importable from here.
from sdd_git.sandbox.tables import AGENT_FILE_NAMES as AGENT_FILE_NAMES
from sdd_git.sandbox.tables import PROTECTED_FILE_NAMES as PROTECTED_FILE_NAMES
from sdd_git.sandbox.tables import PROTECTED_IN_PRODUCT as PROTECTED_IN_PRODUCT
from sdd_git.sandbox.tables import RECORD_FOLDERS as RECORD_FOLDERS
from sdd_git.sandbox.tables import RULE_FILE_NAMES as RULE_FILE_NAMES
from sdd_git.sandbox.tables import RULE_FOLDERS as RULE_FOLDERS
from sdd_git.sandbox.tables import sdd_home as sdd_home
from sdd_git.sandbox.tables import site_folders as site_folders

# Under the person's home: files that sign in somewhere. Hidden, not only read-only.
CREDENTIALS = (
    ".netrc",
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/gh",
    ".config/hub",
    ".gnupg",
    ".password-store",
    ".terraform.d/credentials.tfrc.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".config/op",
    ".vault-token",
    # The OS keyring's own files (where `sdd connect` keeps connector tokens): the Secret
    # Service's, keyrings.alt's files, KWallet's, the macOS keychains.
    ".local/share/keyrings",
    ".local/share/python_keyring",
    ".local/share/kwalletd",
    "Library/Keychains",
)


# In the person's home: what her next shell runs at start.
SHELL_START_FILES = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".config/fish",
)


def rule_link_targets(product: Path) -> list[Path]:
    """Where the symlinks in the rule folders lead, inside the product: a Claude agent kept in
    `src/helper.md` and linked from `.claude/agents/` is defined by that file, so roles must not
    write it either."""
    base = product.resolve()
    found: list[Path] = []
    for name in RULE_FOLDERS:
        folder = base / name
        if not folder.is_dir():
            continue
        for current, dirs, files in os.walk(folder):
            for entry in [*dirs, *files]:
                path = Path(current) / entry
                if not path.is_symlink():
                    continue
                try:
                    target = path.resolve(strict=True)
                except (OSError, RuntimeError):
                    continue
                if target.is_relative_to(base) and target not in found:
                    found.append(target)
    return found


def dotenv_files(product: Path) -> list[str]:
    """The `.env*` files at the top of the product: its secrets. Hidden from commands, and kept
    where they are (a `.env` moved away would leave the next process's masker blind to it)."""
    try:
        return sorted(n for n in os.listdir(product) if n == ".env" or n.startswith(".env."))
    except OSError:
        return []


@dataclass(frozen=True)
class Policy:
    product: Path  # resolved: writable, except `read_only`
    read_only: tuple[Path, ...]  # existing paths inside the product that stay read-only
    hidden: tuple[Path, ...]  # existing credential files and folders: unreadable
    scratch: Path  # a private folder that stands for /tmp and HOME inside the sandbox
    home: Path  # the person's real home: read-only
    network: bool
    # Files kept as they are where a single file can be made read-only (bubblewrap, Seatbelt),
    # and put back by the tamper check elsewhere: Landlock cannot keep one file in a folder whose
    # other files stay writable, and making the folder read-only would stop ordinary work there.
    kept: tuple[Path, ...] = ()


def runtime_folder() -> Path | None:
    """The person's runtime folder (`$XDG_RUNTIME_DIR`, else /run/user/UID), when there is one.
    It holds sockets that hand out secrets to whoever connects: the D-Bus session bus (the
    Secret Service keyring, where `sdd connect` keeps tokens), gpg-agent, ssh-agent. A unix
    socket is reached through the file system whatever the network namespace says, so the
    folder is hidden, not only read-only."""
    named = os.environ.get("XDG_RUNTIME_DIR")
    uid = getattr(os, "getuid", None)
    folder = Path(named) if named else Path(f"/run/user/{uid()}") if uid is not None else None
    if folder is None or not folder.is_absolute() or not folder.is_dir():
        return None
    return folder.resolve()


def python_environments(product: Path) -> list[Path]:
    """The Python environments sdd runs from that live inside the product folder (a .venv beside
    the code): a .pth file written there would run in the person's next `sdd`."""
    base = product.resolve()
    found: list[Path] = []
    for prefix in (sys.prefix, sys.base_prefix):
        resolved = Path(prefix).resolve()
        if resolved != base and resolved.is_relative_to(base) and resolved not in found:
            found.append(resolved)
    return found


def hooks_folder(product: Path) -> str | None:
    """The folder `core.hooksPath` names, relative to the product, when it lies inside it: git
    runs what is there at the next commit. Read as git reads it (her global and system config
    too: a relative path there is taken in each repository), once per process and product; no
    role can change git's configuration (it is read-only in the sandbox, and a protected path)."""
    return _hooks_folder(str(product.resolve()))


@functools.lru_cache(maxsize=64)
def _hooks_folder(product: str) -> str | None:
    import subprocess  # here, not at the top: `sdd guard` imports this module on its hot path

    try:
        found = subprocess.run(
            ["git", "-C", product, "config", "--get", "--path", "core.hooksPath"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    if not found:
        return None
    base = Path(product)
    path = Path(os.path.normpath(base / os.path.expanduser(found)))
    if path == base or not path.is_relative_to(base):
        return None
    relative = path.relative_to(base).as_posix()
    return None if relative.split("/", 1)[0] == ".git" else relative


def agent_files(product: Path, named: set[str] | None = None) -> list[Path]:
    """Every existing file in the product named like another agent's rule file."""
    from sdd_git.sandbox.tamper import rule_files

    if named is None:
        named = rule_files(product, AGENT_FILE_NAMES)
    wanted = {name.casefold() for name in AGENT_FILE_NAMES}
    return [Path(name) for name in sorted(named) if Path(name).name.casefold() in wanted]


def policy_for(
    product: Path, scratch: Path, network: bool, named: set[str] | None = None
) -> Policy:
    """`named`: the product's files with a protected name (`tamper.rule_files`), when the
    caller has walked the product already: one walk per command, not two."""
    base = product.resolve()
    read_only: list[Path] = []
    hooks = hooks_folder(base)
    for name in (*PROTECTED_IN_PRODUCT, *([hooks] if hooks else [])):
        path = base / name
        if os.path.lexists(path):
            read_only.append(path)
    read_only += [p for p in python_environments(base) if p not in read_only]
    read_only += [p for p in rule_link_targets(base) if p not in read_only]
    home = Path.home().resolve()
    dotenv = [base / name for name in dotenv_files(base)]
    read_only += [p for p in dotenv if p not in read_only]
    hidden = tuple(home / name for name in CREDENTIALS if os.path.lexists(home / name))
    hidden += tuple(dotenv)
    hidden += tuple(p for p in [runtime_folder()] if p is not None and not base.is_relative_to(p))
    return Policy(
        product=base,
        read_only=tuple(read_only),
        hidden=hidden,
        scratch=scratch,
        home=home,
        network=network,
        kept=tuple(p for p in agent_files(base, named) if p not in read_only),
    )
