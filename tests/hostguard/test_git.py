"""The git rule of `sdd guard` (docs/guard.md, "Git"): her host may commit, push, branch, merge
and rebase; no git command may change git's configuration or hooks, skip them, or write into a
protected path; what throws away uncommitted work across the tree is asked about."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import git
from tests.hostguard.guardrun import ALLOW, ASK, DENY, bash

CASES = (
    # the ordinary work her host approves
    ("git add -A && git commit -m 'work'", ALLOW),
    ("git push -u origin feature", ALLOW),
    ("git pull --rebase", ALLOW),
    ("git merge main", ALLOW),
    ("git rebase -i main", ALLOW),
    ("git switch -c feature", ALLOW),
    ("git tag v1.0", ALLOW),
    ("git log --oneline -5 -- memory/", ALLOW),
    ("git restore src/app.py", ALLOW),
    ("git stash list", ALLOW),
    ("git stash push -- src/app.py", ALLOW),
    ("git clean -n", ALLOW),
    ("git clean -fd src/", ALLOW),
    ("git reset HEAD~1", ALLOW),
    ("git config --get user.name", ALLOW),
    ("git config user.name", ALLOW),
    ("git worktree add ../feature-tree", ALLOW),
    ("git apply --check patches/record.patch", ALLOW),
    ("git rebase -x 'pytest -q' main", ASK),  # pytest runs code nobody has read
    # configuration, hooks and what git runs
    ("git config --global user.name x", DENY),
    ("git config --unset core.hooksPath", DENY),
    ("git -c core.pager='sh -c x' log", DENY),
    ("git --config-env=core.hooksPath=X status", DENY),
    ("git --exec-path=/tmp/bin status", DENY),
    ("git init --template=/tmp/templates", DENY),
    ("git commit -n -m x", DENY),
    ("git push --no-verify", DENY),
    ("git merge --no-verify main", DENY),
    # writes into a protected path
    ("git -C memory checkout -- decisions.yaml", DENY),
    ("git restore memory/decisions.yaml", DENY),
    ("/usr/lib/git-core/git-checkout -- memory/decisions.yaml", DENY),
    ("git clone https://example.invalid/x.git memory/x", DENY),
    ("git worktree add .sdd/tree", DENY),
    ("git archive -o memory/x.tar HEAD", DENY),
    ("git format-patch -o .sdd/patches HEAD~1", DENY),
    ("git am patches/record.patch", DENY),
    ("git rebase --exec 'sdd next' main", DENY),
    ("git bisect run sdd complete", DENY),
    ("git submodule foreach 'sdd next'", DENY),
    # the person decides
    ("git checkout .", ASK),
    ("git restore .", ASK),
    ("git checkout -f main", ASK),
    ("git switch --discard-changes main", ASK),
    ("git reset --hard HEAD~1", ASK),
    ("git clean -fd", ASK),
    ("git stash -u", ASK),
    ("git --git-dir=/tmp/other.git status", ASK),
    ("git --work-tree=memory checkout HEAD -- .", ASK),
    ("git update-index --cacheinfo 100644,abc,memory/x", ASK),
    ("git gc --prune=now", ASK),
    ("git apply", ASK),
    ("git $SUB", ASK),
)


@pytest.mark.parametrize(("command", "expect"), CASES, ids=[c for c, _ in CASES])
def test_the_git_rule(product: Path, command: str, expect: str) -> None:
    assert bash(command, product).decision == expect


def test_in_a_real_repository_the_allowed_ones_work(product: Path) -> None:
    """The guard decides; the commands it allows are real git commands that run as written."""
    git(product, "add", "-A")
    git(product, "commit", "-q", "-m", "start")
    for command in ("git stash list", "git config --get user.name", "git clean -n"):
        assert bash(command, product).decision == ALLOW
        git(product, *command.split()[1:])
