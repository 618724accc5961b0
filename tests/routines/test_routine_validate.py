"""`sdd routine validate [PATH...]`: routine files checked as sdd reads them; a bad one exits 1
naming file, line and key (what the pre-commit check `sdd-routine-validate` runs)."""

from __future__ import annotations

from pathlib import Path

from sdd_git.root import Root
from tests.conftest import SddRunner

GOOD = "name: {name}\non: pr-merged\ninput: the merge\nexpected: a note\n"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_every_routine_of_the_repo_and_its_templates_is_checked_by_default(
    root: Root, sdd: SddRunner
) -> None:
    write(root.sdd / "roles" / "builder" / "routines", "on-merge", GOOD.format(name="on-merge"))
    write(root.path / "templates" / "lead" / "routines", "weekly", GOOD.format(name="weekly"))
    result = sdd("routine", "validate")
    assert result.code == 0, result.stderr
    assert "checked 2 routine file(s): 0 with errors" in result.stderr


def test_a_bad_routine_exits_1_naming_file_line_and_key(root: Root, sdd: SddRunner) -> None:
    folder = root.sdd / "roles" / "builder" / "routines"
    write(folder, "on-merge", GOOD.format(name="on-merge"))
    write(folder, "nightly", 'name: nightly\nschedule: "0 9 * * 1-5"\ninput: a\nexpected: b\n'
          "when_source_missing: replace\n")  # fmt: skip
    result = sdd("routine", "validate")
    assert result.code == 1
    assert (
        "error: .sdd/roles/builder/routines/nightly.yaml:5: key 'when_source_missing': "
        "'replace' is not allowed"
    ) in result.stderr
    assert "hint: write when_source_missing: report" in result.stderr
    assert "checked 2 routine file(s): 1 with errors" in result.stderr


def test_the_files_named_are_the_ones_checked_and_broken_yaml_names_its_line(
    root: Root, sdd: SddRunner
) -> None:
    folder = root.sdd / "roles" / "builder" / "routines"
    good = write(folder, "on-merge", GOOD.format(name="on-merge"))
    broken = write(folder, "broken", "name: broken\non: [pr-merged\n")
    assert sdd("routine", "validate", str(good.relative_to(root.path))).code == 0
    result = sdd("routine", "validate", str(good.relative_to(root.path)), "nothing.yaml")
    assert result.code == 1 and "error: nothing.yaml: no such file or folder" in result.stderr
    result = sdd("routine", "validate", str(broken.relative_to(root.path)))
    assert result.code == 1
    assert "error: .sdd/roles/builder/routines/broken.yaml:3:" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_folder_with_no_routine_is_an_error_not_a_pass(root: Root, sdd: SddRunner) -> None:
    (root.path / "empty").mkdir()
    result = sdd("routine", "validate", "empty")
    assert result.code == 1 and "no routine files here, so nothing was checked" in result.stderr


def test_a_routine_file_reached_through_a_link_is_refused(
    root: Root, sdd: SddRunner, tmp_path: Path
) -> None:
    """Read as the hooks' worker reads it: a linked routines folder is not followed."""
    elsewhere = write(tmp_path / "elsewhere", "on-merge", GOOD.format(name="on-merge")).parent
    (root.sdd / "roles" / "builder").mkdir(parents=True)
    (root.sdd / "roles" / "builder" / "routines").symlink_to(elsewhere)
    result = sdd("routine", "validate", ".sdd/roles/builder/routines/on-merge.yaml")
    assert result.code == 1, result.stderr
    assert "goes through the link .sdd/roles/builder/routines" in result.stderr
    result = sdd("routine", "validate")  # nor when every routine is checked
    assert result.code == 1 and "error: " in result.stderr, result.stderr
