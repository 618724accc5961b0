"""`sdd routine export --all --ENGINE --out-dir DIR`: every routine, one file each, the same text
`export NAME` gives; nothing written when one cannot be exported; a progress bar only in a
terminal (its drawing is tested in tests/cli/test_progress.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.root import Root
from sdd_git.routines.export import export_definition
from sdd_git.routines.routine import Routine
from tests.conftest import SddRunner
from tests.routines.test_export import TRIGGERS, pin
from tests.runner.scripted import add_role
from tests.trusthelp import confirm


@pytest.fixture
def routines(root: Root) -> dict[str, Routine]:
    """The routines of tests/routines/test_export.py, one of each trigger."""
    from sdd_git.routines.routine import find_routine

    pin(root)
    add_role(root, "builder")
    for name, trigger in TRIGGERS.items():
        path = root.sdd / "roles" / "builder" / "routines" / f"{name}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'{trigger}\ninput: "the source"\nexpected: "a short note"\n')
        confirm(root, path.relative_to(root.path).as_posix())
    return {name: find_routine(root, f"builder/{name}") for name in TRIGGERS}


FILES = {
    "github-actions": "sdd-routine-{}.yml",
    "gitlab-ci": "sdd-routine-{}.gitlab-ci.yml",
    "jenkins": "Jenkinsfile.sdd-routine-{}",
}


@pytest.mark.parametrize("engine", list(FILES))
def test_every_routine_is_written_as_export_name_would_write_it(
    sdd: SddRunner, root: Root, routines: dict[str, Routine], engine: str, tmp_path: Path
) -> None:
    out = tmp_path / "ci"
    result = sdd("routine", "export", "--all", f"--{engine}", "--out-dir", str(out))
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        FILES[engine].format(name) for name in routines
    )
    for name, routine in routines.items():
        written = (out / FILES[engine].format(name)).read_text()
        assert written == export_definition(root, routine, engine)
    assert f"wrote the {engine} definitions of {len(routines)} routines" in result.stderr
    assert "exporting routines" not in result.stderr  # no terminal, no bar


def test_a_routine_that_cannot_be_exported_leaves_the_folder_as_it_was(
    sdd: SddRunner, root: Root, routines: dict[str, Routine], tmp_path: Path
) -> None:
    bad = root.sdd / "roles" / "builder" / "routines" / "odd.yaml"
    bad.write_text('on: file-changed "src/?.py"\ninput: "x"\nexpected: "y"\n')
    out = tmp_path / "ci"
    result = sdd("routine", "export", "--all", "--github-actions", "--out-dir", str(out))
    assert result.code == 2 and "single-character wildcard" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--all", "--github-actions"],
        ["main-build-watch", "--all", "--github-actions", "--out-dir", "x"],
        ["--out-dir", "x", "--github-actions"],
    ],
)
def test_all_and_out_dir_go_together_with_no_name(
    sdd: SddRunner, routines: dict[str, Routine], args: list[str]
) -> None:
    result = sdd("routine", "export", *args)
    assert result.code == 2 and "--all and --out-dir go together" in result.stderr
