"""Role templates: the six shipped with sdd, and those a team shares in its repo's templates/."""

from __future__ import annotations

from pathlib import Path

from sdd_git.errors import RecordError
from sdd_git.root import Root


def shipped_dir() -> Path:
    """Installed: sdd_git/templates. From a source checkout: the checkout's top-level templates/."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "templates"
    return installed if installed.is_dir() else package.parent / "templates"


def shipped_names() -> list[str]:
    folder = shipped_dir()
    if not folder.is_dir():
        return []
    return sorted(p.parent.name for p in folder.glob("*/ROLE.md"))


def find_template(root: Root | None, name_or_dir: str) -> Path:
    """A template folder: a path, a template in the repo's templates/, or a shipped one."""
    as_path = Path(name_or_dir)
    named: list[Path] = []
    if root is not None:
        named.append(root.path / "templates" / name_or_dir)
    named.append(shipped_dir() / name_or_dir)
    looks_like_path = "/" in name_or_dir or name_or_dir.startswith(".")
    candidates = [as_path, *named] if looks_like_path else [*named, as_path]
    for candidate in candidates:
        if (candidate / "ROLE.md").is_file():
            return candidate
    known = ", ".join(shipped_names())
    raise RecordError(
        f"no template '{name_or_dir}' (no ROLE.md there, in templates/, or shipped with sdd)",
        hint=f"shipped templates: {known}; or name a folder holding a ROLE.md",
    )


def is_shipped(folder: Path, root: Root | None = None) -> bool:
    """Whether a template folder is one shipped with sdd (its rules come with the tool). A
    folder inside the product never is: where the product is sdd's own source checkout, its
    templates/ is also what a pull request can change."""
    try:
        resolved = folder.resolve()
        if root is not None and resolved.is_relative_to(root.path.resolve()):
            return False
        return resolved.parent == shipped_dir().resolve()
    except OSError:
        return False
