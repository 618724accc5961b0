"""A role file that is a link is never a role (issue 21, part 1).

The route: `.sdd/roles/X/ROLE.md -> docs/x.md` let a role rewrite its own boundary through the
link's target, since `docs/` is a product file a role may write. The link is skipped with its
reason, nothing of it runs, and no person command writes from or through it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.runner.scripted import script

ROLE_TEXT = (
    "---\nrole: helper\njob: Help\nlevel: 1\ntoolPolicy.delegation: deny\nproduces: other\n"
    "boundary:\n  always_allow:\n    - {tool: run_command, inputs: {command: echo planted}}\n"
    "---\nHelp.\n"
)


@pytest.fixture(params=["file", "folder"])
def linked(request: pytest.FixtureRequest, root: Root) -> Path:
    """`.sdd/roles/helper/ROLE.md` a link to docs/helper.md, or the whole role folder a link
    to docs/helper/; the target the role itself could write."""
    docs = root.path / "docs"
    if request.param == "file":
        docs.mkdir()
        target = docs / "helper.md"
        target.write_text(ROLE_TEXT)
        folder = root.sdd / "roles" / "helper"
        folder.mkdir(parents=True)
        (folder / "ROLE.md").symlink_to("../../../docs/helper.md")
    else:
        (docs / "helper").mkdir(parents=True)
        target = docs / "helper" / "ROLE.md"
        target.write_text(ROLE_TEXT)
        (root.sdd / "roles" / "helper").symlink_to("../../docs/helper")
    return target


def test_a_linked_role_file_is_skipped_and_the_list_says_why(sdd: SddRunner, linked: Path) -> None:
    listed = sdd("role", "list", "--all")
    assert listed.code == 0, listed.stderr
    assert "helper" not in listed.stdout
    assert "warning: skipped .sdd/roles/helper" in listed.stderr
    assert "is a link; sdd reads only regular files inside the product" in listed.stderr


def test_a_linked_role_never_runs(
    sdd: SddRunner, linked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script(tmp_path, monkeypatch, [{"say": "I ran."}])
    ran = sdd("role", "run", "helper", "--task", "Help")
    assert ran.code == 1
    assert "sdd reads only regular files inside the product" in ran.stderr
    assert "hint:" in ran.stderr
    assert not (tmp_path / "s.transcript.jsonl").exists()  # no model call at all


@pytest.mark.parametrize(
    "command",
    [("role", "edit", "helper", "--job", "Help more"), ("role", "pin", "helper")],
    ids=["edit", "pin"],
)
def test_no_person_command_writes_from_or_through_a_linked_role_file(
    sdd: SddRunner, linked: Path, command: tuple[str, ...]
) -> None:
    before = linked.read_bytes()
    done = sdd(*command)
    assert done.code == 1, done.stdout + done.stderr
    assert "sdd reads only regular files inside the product" in done.stderr
    assert linked.read_bytes() == before


def test_saving_an_always_allow_rule_never_writes_through_a_linked_role_file(
    root: Root, linked: Path
) -> None:
    """What `sdd allow --always` does after a stop of the role: the rule goes into its file."""
    from sdd_git.errors import RecordError
    from sdd_git.roles.manage import add_always_allow

    before = linked.read_bytes()
    with pytest.raises(RecordError, match="sdd reads only regular files inside the product"):
        add_always_allow(root, "helper", "run_command", {"command": "ls"})
    assert linked.read_bytes() == before
