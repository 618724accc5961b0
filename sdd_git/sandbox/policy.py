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

# Inside the product folder: the person's record, sdd's own files and git's folder.
RECORD_FOLDERS = ("memory", "changes", ".sdd", ".git")
# Folders that define roles, skills and routines, carry rules for them or for the other agents
# working in the same repository (Claude Code, Codex, Cursor, Copilot, VS Code tasks), or hold
# code that git, CI or an editor runs by itself: rules come only from the person, so no role
# writes here either.
RULE_FOLDERS = (
    "templates",
    ".agents/skills",
    ".claude",
    ".codex",
    ".cursor",
    ".vscode",
    ".github/agents",
    ".github/skills",
    ".github/workflows",
    ".githooks",
    ".husky",
)
# A file with one of these names defines a role or a skill wherever it lives.
RULE_FILE_NAMES = ("ROLE.md", "SKILL.md")
# A file with one of these names gives another agent its rules, its tools or a filter git runs,
# wherever it lives (Claude Code and Codex read nested CLAUDE.md and AGENTS.md too).
AGENT_FILE_NAMES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "AGENTS.override.md",
    ".mcp.json",
    "copilot-instructions.md",
    ".gitattributes",
)
PROTECTED_FILE_NAMES = RULE_FILE_NAMES + AGENT_FILE_NAMES
PROTECTED_IN_PRODUCT = RECORD_FOLDERS + RULE_FOLDERS
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


def sdd_home() -> Path:
    return Path(os.environ.get("SDD_HOME") or Path.home() / ".sdd")


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


def site_folders() -> list[Path]:
    """Where Python looks for .pth files and sitecustomize at start: the environment's own site
    folders, the user's (also where it does not exist yet, as HOME says now), and every folder
    on sdd's own import path (sitecustomize is imported from any of them). Code planted there
    runs in every later Python, sdd's included."""
    import site

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    user = Path.home() / ".local" / "lib" / version / "site-packages"
    folders = [*site.getsitepackages(), site.getusersitepackages(), str(user)]
    folders += [entry for entry in sys.path if entry and os.path.isdir(entry)]
    return [Path(f).resolve() for f in dict.fromkeys(folders)]


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
