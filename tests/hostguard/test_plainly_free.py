"""The guard's short cut agrees with the rules: a path it calls plainly free (so no rule is even
loaded) is one the rules of sdd_git.protected would never refuse. Checked over every path the
other tests use, in a product with links into its rule folders and a hooks folder of its own, and
in one with neither."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sdd_git.hostguard import paths
from tests.conftest import git

PATHS = (
    "src/app.py", "src/new/deep/file.txt", "build", ".", "..", "../..", "src/..", "notes.md",
    "records/decisions.yaml", "memory/decisions.yaml", "MEMORY/x", "Changes/y", ".SDD/config",
    ".git/config", ".GIT/hooks/x", ".claude/settings.json", ".github/workflows/ci.yml",
    ".github/ISSUE_TEMPLATE/bug.md", "templates/x/ROLE.md", "guide/AGENTS.md", "docs/CLAUDE.md",
    ".env", ".env.local", "src/helper.md", "hooks-here/pre-commit", "linked-agent.md",
    "/tmp/elsewhere.txt", "~/.sdd/packs/x", "~/.claude/settings.json", "scripts/s",
)  # fmt: skip


def _furnished(product: Path, planted: bool) -> None:
    if planted:
        # A Claude agent kept in src/helper.md and linked from .claude/agents/, and a hooks
        # folder inside the product named by core.hooksPath: both protected, under plain names.
        (product / ".claude" / "agents").mkdir(parents=True, exist_ok=True)
        (product / "src" / "helper.md").write_text("an agent\n")
        (product / ".claude" / "agents" / "helper.md").symlink_to("../../src/helper.md")
        (product / "hooks-here").mkdir()
        git(product, "config", "core.hooksPath", "hooks-here")
    (product / "linked-agent.md").symlink_to("guide/AGENTS.md")


@pytest.mark.parametrize("planted", [False, True], ids=["plain product", "links and hooks"])
def test_a_plainly_free_path_is_one_the_rules_never_refuse(product: Path, planted: bool) -> None:
    _furnished(product, planted)
    paths.prepare(str(product), None, (os.path.expanduser("~/.claude"),))
    paths._plain_product.cache_clear()
    for path in PATHS:
        full = paths.absolute(str(product), os.path.expanduser(path))
        for whole_tree in (False, True):
            refused = paths.rules_problem(full, path, whole_tree)
            if paths.plainly_free(full, whole_tree):
                assert refused is None, (path, whole_tree, refused)
    # And the short cut is taken where it should be: ordinary paths of a plain product.
    if not planted:
        assert paths.plainly_free(str(product / "src" / "app.py"))
        assert paths.plainly_free("/tmp/elsewhere.txt")
    else:
        assert not paths.plainly_free(str(product / "src" / "app.py"))
        assert paths.rules_problem(str(product / "src" / "helper.md"), "src/helper.md")
        assert paths.rules_problem(str(product / "hooks-here" / "x"), "hooks-here/x")
