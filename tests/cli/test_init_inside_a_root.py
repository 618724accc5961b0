"""`sdd init` inside a root refuses and names the root (issue 22, 3): exit 2, nothing written,
instead of a nested root that every command below it would quietly use. A folder that is a git
repository of its own (a submodule, a nested clone) has its own history: it may be a product of
its own, and init says so."""

from __future__ import annotations

from pathlib import Path

from sdd_git.root import Root
from tests.conftest import SddRunner, git


def _everything(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_init_in_a_subfolder_of_a_root_refuses_naming_the_root(sdd: SddRunner, root: Root) -> None:
    sub = root.path / "services" / "billing"
    sub.mkdir(parents=True)
    before = _everything(root.path)
    result = sdd("init", cwd=sub)
    assert result.code == 2
    assert result.stderr.splitlines()[0] == (
        f"error: {sub} is inside the sdd root {root.path}; nothing was written (a root inside "
        "another would split the record in two)"
    )
    assert "hint: sdd commands here already use" in result.stderr
    assert _everything(root.path) == before  # no .sdd/, no memory/, no .gitignore lines


def test_init_with_c_into_a_subfolder_refuses_too(sdd: SddRunner, root: Root) -> None:
    (root.path / "docs").mkdir()
    result = sdd("-C", "docs", "init", cwd=root.path)
    assert result.code == 2 and f"inside the sdd root {root.path}" in result.stderr
    assert not (root.path / "docs" / ".sdd").exists()


def test_init_at_the_root_itself_stays_idempotent(sdd: SddRunner, root: Root) -> None:
    result = sdd("init", cwd=root.path)
    assert result.code == 0, result.stderr
    assert "already an sdd root; nothing to do" in result.stderr


def test_a_git_repository_of_its_own_inside_a_root_may_be_a_product_of_its_own(
    sdd: SddRunner, root: Root
) -> None:
    vendored = root.path / "vendor" / "ledger"
    vendored.mkdir(parents=True)
    git(vendored, "init", "-q")
    result = sdd("init", cwd=vendored)
    assert result.code == 0, result.stderr
    assert (
        f"note: this folder is a git repository of its own inside the sdd root {root.path}"
        in result.stderr
    )
    assert (vendored / ".sdd" / "config.yaml").is_file()
    # A subfolder of that repository is inside its root now, and refused in turn.
    (vendored / "src").mkdir()
    assert sdd("init", cwd=vendored / "src").code == 2
