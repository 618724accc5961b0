"""The sdd root: finding it, its layout, and `sdd init`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sdd_git.errors import SddError

CONFIG_RELATIVE = Path(".sdd") / "config.yaml"
# No trailing slash: `.sdd/local/` matches only a folder, so a link committed in its place
# (`.sdd/local -> /tmp/x`) would not be ignored. An older file's slashed lines are kept; these are
# added beside them.
# `.sdd/config.local.yaml` is her own settings layer for this product on this machine.
GITIGNORE_ENTRIES = (".sdd/role-runs", ".sdd/local", ".sdd/config.local.yaml")

DEFAULT_CONFIG = """\
# sdd settings. Environment overrides: SDD_PROVIDER, SDD_MODEL, SDD_BASE_URL, SDD_API_KEY.
provider: {kind: openai, model: gpt-4.1-mini, base_url: null, api_key_env: OPENAI_API_KEY}
approvals: {timeout: 10m}
messaging: on            # roles may message each other (handoff); off stops every handoff
roles: {default_depth_cutoff: 1, max_grantable_delegation: null}
"""

DECISIONS_HEADER = """\
# Decisions: the person's record. Appended by person commands only (sdd accept, sdd decision
# replace, sdd release generate); an entry is never edited or removed.
"""


@dataclass(frozen=True)
class Root:
    """An sdd root and the places of its record."""

    path: Path

    @property
    def memory(self) -> Path:
        return self.path / "memory"

    @property
    def specs(self) -> Path:
        return self.memory / "specs"

    @property
    def releases(self) -> Path:
        return self.memory / "releases"

    @property
    def decisions(self) -> Path:
        return self.memory / "decisions.yaml"

    @property
    def product(self) -> Path:
        return self.memory / "product.yaml"

    @property
    def changes(self) -> Path:
        return self.path / "changes"

    @property
    def sdd(self) -> Path:
        return self.path / ".sdd"

    @property
    def config(self) -> Path:
        return self.path / CONFIG_RELATIVE

    @property
    def local(self) -> Path:
        return self.sdd / "local"

    @property
    def record_lock(self) -> Path:
        return self.local / "record.lock"

    def spec_file(self, spec_id: str) -> Path:
        return self.specs / f"{spec_id}.md"

    def change_dir(self, change_id: str) -> Path:
        return self.changes / change_id


def find_root(start: Path) -> Root:
    """The first folder at or above `start` that holds `.sdd/config.yaml`."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_RELATIVE).is_file():
            return Root(folder)
    raise SddError(
        f"not inside an sdd root (no .sdd/config.yaml above {start})",
        hint="run `sdd init` here to make this folder an sdd root, or use -C DIR to point at one",
    )


@dataclass(frozen=True)
class InitReport:
    root: Root
    git_initialized: bool
    created: tuple[str, ...]
    # The root this one sits in, when the folder is a git repository of its own (a
    # submodule) inside it: a product of its own, said so on screen.
    inside: Path | None = None


def init_root(folder: Path, product: str | None) -> InitReport:
    """Create whatever is missing of the sdd layout in `folder`. Idempotent; commits nothing."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    inside = _refuse_nested(folder.resolve())
    folder.mkdir(parents=True, exist_ok=True)
    folder = folder.resolve()
    root = Root(folder)
    created: list[str] = []
    git_initialized = False
    if not _inside_git_work_tree(folder):
        _git_init(folder)
        git_initialized = True
    for sub in (root.specs, root.releases, root.changes, root.sdd / "roles", root.sdd / "skills"):
        if not sub.is_dir():
            sub.mkdir(parents=True, exist_ok=True)
            created.append(str(sub.relative_to(folder)) + "/")
    if not root.config.exists():
        write_text_atomic(root.config, DEFAULT_CONFIG)
        created.append(str(CONFIG_RELATIVE))
    if not root.decisions.exists():
        write_text_atomic(root.decisions, DECISIONS_HEADER)
        created.append("memory/decisions.yaml")
    if not root.product.exists():
        from sdd_git.yamlio import dump_yaml

        name = product or folder.name
        write_text_atomic(root.product, dump_yaml({"name": name, "modules": []}))
        created.append("memory/product.yaml")
    elif product is not None:
        _set_product_name(root, product)
    if _ensure_gitignore(folder):
        created.append(".gitignore entries")
    for keep in (root.specs, root.releases, root.changes):
        marker = keep / ".gitkeep"
        if not any(keep.iterdir()):
            marker.touch()
    return InitReport(
        root=root, git_initialized=git_initialized, created=tuple(created), inside=inside
    )


def _refuse_nested(folder: Path) -> Path | None:
    """Refuse a root inside another (nothing written): every command below the folder would
    then find the new one, and the record would split in two without a word. A folder that is
    its own git repository (a submodule, a nested clone) has its own history, so it may be a
    product of its own; the outer root is given back for the CLI to say so."""
    outer = next((f for f in folder.parents if (f / CONFIG_RELATIVE).is_file()), None)
    if outer is None or (folder / CONFIG_RELATIVE).is_file():
        return None  # not inside one, or this is already a root (init is idempotent)
    if _git_top(folder) == folder:
        return outer  # the top of a repository of its own, below the outer root
    from sdd_git.errors import UsageError

    raise UsageError(
        f"{folder} is inside the sdd root {outer}; nothing was written (a root inside another "
        "would split the record in two)",
        hint=f"sdd commands here already use {outer}; to make this folder a product of its own, "
        "make it a git repository of its own first (git init, or a submodule), then sdd init",
    )


def _git_top(folder: Path) -> Path | None:
    """The top of the git work tree `folder` is in (its own, for a submodule), or None."""
    import subprocess

    probe = folder
    while not probe.is_dir():  # a folder still to be made: ask from where it will be
        probe = probe.parent
    result = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"],
        cwd=probe,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 or not result.stdout.strip():
        return None
    return Path(result.stdout.strip()).resolve()


def _set_product_name(root: Root, product: str) -> None:
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.yamlio import edit_mapping, read_mapping

    if read_mapping(root.product, root.path).get("name") != product:
        write_text_atomic(root.product, edit_mapping(root.product, {"name": product}, root.path))


def _inside_git_work_tree(folder: Path) -> bool:
    import subprocess

    result = subprocess.run(
        ["git", "rev-parse", "--is-inside-work-tree"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode == 0 and result.stdout.strip() == "true"


def _git_init(folder: Path) -> None:
    import subprocess

    try:
        result = subprocess.run(
            ["git", "init", "--quiet"], cwd=folder, capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise SddError(
            "git is not installed or not on PATH", hint="install git, then run `sdd init` again"
        ) from None
    if result.returncode != 0:
        raise SddError(f"git init failed in {folder}: {result.stderr.strip()}")


def _ensure_gitignore(folder: Path) -> bool:
    from sdd_git.atomicfile import write_text_atomic

    path = folder / ".gitignore"
    if os.path.lexists(path) and not (path.is_file() and not path.is_symlink()):
        from sdd_git.errors import UsageError

        # Read, it would copy its target (her key, /proc/self/environ) into a file she commits.
        raise UsageError(
            f"{path} is a link or not a regular file; sdd adds its ignore lines only to a "
            ".gitignore of the product's own",
            hint=f"remove it (rm {path}; if git tracks it: git rm --cached {path}), then run "
            "sdd init again",
        )
    from sdd_git import beneath

    text = beneath.read_text(folder, ".gitignore") if path.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [entry for entry in GITIGNORE_ENTRIES if entry not in present]
    if not missing:
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    text += "# sdd: run logs and local state are never committed\n" + "".join(
        f"{entry}\n" for entry in missing
    )
    write_text_atomic(path, text)
    return True
