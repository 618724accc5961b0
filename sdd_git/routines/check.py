"""`sdd routine validate [PATH...]`: routine files checked as sdd reads them, each problem with
file, line and key, for a person before a commit and for pre-commit (`.pre-commit-hooks.yaml`
passes the staged files)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sdd_git.beneath import Refused
from sdd_git.errors import RecordError
from sdd_git.paths import display
from sdd_git.root import Root
from sdd_git.routines.routine import read_routine, routine_paths


@dataclass(frozen=True)
class Checked:
    path: Path
    problem: RecordError | None  # None: the file reads as a routine

    @property
    def ok(self) -> bool:
        return self.problem is None


def files_to_check(
    root: Root | None, targets: Sequence[Path], refused: list[str] | None = None
) -> list[Path]:
    """The routine files named (a file, or a folder's `routines/*.yaml`), else the product's
    and its templates' (a link among the product's is said in `refused`, never followed). A
    folder that holds none is an error: checking nothing must not look like a pass."""
    if not targets:
        if root is None:
            raise RecordError("name a routine file or folder to check")
        templates = sorted((root.path / "templates").glob("*/routines/*.yaml"))
        return [*routine_paths(root, refused), *templates]
    found: list[Path] = []
    for target in targets:
        if target.is_file():
            found.append(target)
        elif target.is_dir():
            inside = sorted(p for p in target.rglob("*.yaml") if p.parent.name == "routines")
            if target.name == "routines":
                inside = sorted(target.glob("*.yaml"))
            if not inside:
                raise RecordError(
                    f"{display(target)}: no routine files here, so nothing was checked",
                    hint="routine files are .sdd/roles/ROLE/routines/NAME.yaml (and "
                    "templates/NAME/routines/NAME.yaml)",
                )
            found += inside
        else:
            raise RecordError(f"{display(target)}: no such file or folder")
    return list(dict.fromkeys(found))


def check(root: Root | None, targets: Sequence[Path]) -> list[Checked]:
    refused: list[str] = []
    paths = files_to_check(root, targets, refused)
    results = [Checked(Path(why.split(" ", 1)[0]), Refused(why)) for why in refused]
    for path in paths:
        # Inside the product, read as the hooks' worker reads it: no link followed (the path is
        # made absolute, never resolved, so a link in it is seen and refused).
        within = root.path if root is not None and _inside(root, path) else None
        try:
            read_routine(path.absolute() if within else path, within)
            results.append(Checked(path, None))
        except RecordError as exc:
            results.append(Checked(path, exc))
    return results


def _inside(root: Root, path: Path) -> bool:
    return path.absolute().is_relative_to(root.path.absolute())
