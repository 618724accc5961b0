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
    # the repository git reads its configuration and hooks from, and where it pushes
    ("git remote add upstream https://example.invalid/u.git", ALLOW),
    ("git remote add upstream git@example.invalid:u.git", ALLOW),
    ("git push upstream main", ALLOW),
    ("git -C src log -1", ALLOW),
    ("git remote add mirror /tmp/mirror.git", ASK),
    ("git remote set-url origin ../mirror.git", ASK),
    ("git push ../mirror.git main", ASK),
    ("git push file:///tmp/mirror.git main", ASK),
    ("git -C / status", ASK),
    # the benign forms of what the rule reads closely: patterns outside the protected paths,
    # options that take a value, merge-file to its output, a strategy git ships
    ("git checkout -- 'src/*.py'", ALLOW),
    ("git restore -s HEAD~1 -- 'src/*.py'", ALLOW),
    ("git checkout -- 'src/[a-z]*.py'", ALLOW),
    ("git checkout -- ':(glob)src/**/*.py'", ALLOW),
    ("git checkout -- ':(exclude)src/app.py' src", ALLOW),
    ("git --literal-pathspecs checkout -- 'm*'", ALLOW),
    ("git checkout HEAD~1 -- src", ALLOW),
    ("git rm src/app.py", ALLOW),
    ("git rm --cached '*.yaml'", ALLOW),
    ("git rm -r --cached .", ALLOW),
    ("git clean -f -- 'src/*.tmp'", ALLOW),
    ("git stash push src/app.py", ALLOW),
    ("git stash push -m 'fix *all* of [it]' -- src/app.py", ALLOW),
    ("git stash pop", ALLOW),
    ("git merge-file -p memory/decisions.yaml src/app.py src/app.py", ALLOW),
    ("git merge-file src/app.py src/app.py src/app.py", ALLOW),
    ("git grep -n foo", ALLOW),
    ("git grep -e -x foo", ALLOW),
    ("git sparse-checkout list", ALLOW),
    ("git worktree add -b memory ../feature-tree", ALLOW),
    ("git clone -b main https://example.invalid/y.git ../y", ALLOW),
    ("git submodule add https://example.invalid/lib.git vendor/lib", ALLOW),
    ("git init ../new-repository", ALLOW),
    ("git archive -o ../x.tar HEAD", ALLOW),
    ("git apply -p0 patches/src.patch", ALLOW),
    ("git apply --directory=src patches/src.patch", ALLOW),
    ("git merge -s ort main", ALLOW),
    ("git merge -sours main", ALLOW),
    ("git cherry-pick -s HEAD", ALLOW),
    ("git commit -am 'no hooks skipped'", ALLOW),
    ("git difftool --tool=meld HEAD", ALLOW),
    ("git send-email --to person@example.invalid x.patch", ALLOW),
    ("git send-email --smtp-server smtp.example.invalid x.patch", ALLOW),
    ("git lfs ls-files", ALLOW),
    ("git fetch origin", ALLOW),
    ("git am --continue", ALLOW),
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
    ("git commit -anm x", DENY),
    ("git commit --no-verif -m x", DENY),
    ("git difftool -x 'diff -u' HEAD", DENY),
    ("git grep -O'less' foo", DENY),
    ("git fetch --upload-pack=git-upload-pack origin", DENY),
    ("git clone --config core.hooksPath=x https://example.invalid/y.git ../y", DENY),
    ("git lfs update", DENY),
    # writes into a protected path
    ("git -C memory checkout -- decisions.yaml", DENY),
    ("git restore memory/decisions.yaml", DENY),
    ("/usr/lib/git-core/git-checkout -- memory/decisions.yaml", DENY),
    ("git clone https://example.invalid/x.git memory/x", DENY),
    ("git worktree add .sdd/tree", DENY),
    ("git archive -o memory/x.tar HEAD", DENY),
    ("git format-patch -o .sdd/patches HEAD~1", DENY),
    ("git am patches/record.patch", DENY),
    ("git checkout -- '*.py'", DENY),
    ("git checkout -- :memory/decisions.yaml", DENY),
    ("git restore -- ':(icase)Memory/decisions.yaml'", DENY),
    ("git -C src restore -- ':/memory'", DENY),
    ("git rm -r .", DENY),
    ("git -C memory init", DENY),
    ("git bundle create memory/x.bundle HEAD", DENY),
    ("git submodule add https://example.invalid/y.git memory/y", DENY),
    ("git merge-file memory/decisions.yaml src/app.py src/app.py", DENY),
    ("git apply --directory=memory patches/src.patch", DENY),
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
    ("git reset --har", ASK),
    ("git checkout HEAD~1 -- ':!src'", ASK),
    ("git clean -fd -e '*.log'", ASK),
    ("git stash clear", ASK),
    ("git sparse-checkout set src", ASK),
    ("git maintenance start", ASK),
    ("git merge -s custom main", ASK),
    ("git instaweb --browser=firefox", ASK),
    ("git restore --pathspec-from-file=-", ASK),
    ("git apply", ASK),
    ("git $SUB", ASK),
)


@pytest.mark.parametrize(("command", "expect"), CASES, ids=[c for c, _ in CASES])
def test_the_git_rule(product: Path, command: str, expect: str) -> None:
    assert bash(command, product).decision == expect


@pytest.mark.parametrize(
    ("listed", "expect"),
    [("src/app.py\n", ALLOW), ("src/app.py\nmemory/decisions.yaml\n", DENY),
     ('"memory/d\\303\\251.yaml"\n', DENY), ("src/*.py\n", ALLOW), ("*.yaml\n", DENY)],
)  # fmt: skip
def test_pathspecs_from_a_file_are_read(product: Path, listed: str, expect: str) -> None:
    (product / "paths.txt").write_text(listed)
    for command in (
        "git checkout --pathspec-from-file=paths.txt",
        "git rm --pathspec-from-file paths.txt",
    ):
        assert bash(command, product).decision == expect, command


def test_in_a_real_repository_the_allowed_ones_work(product: Path) -> None:
    """The guard decides; the commands it allows are real git commands that run as written."""
    git(product, "add", "-A")
    git(product, "commit", "-q", "-m", "start")
    for command in ("git stash list", "git config --get user.name", "git clean -n"):
        assert bash(command, product).decision == ALLOW
        git(product, *command.split()[1:])
