"""`.pre-commit-hooks.yaml`: sdd's checks the way a pre-commit user adds them. pre-commit 4.7
itself validates the manifest, and, in a product whose `.pre-commit-config.yaml` names a clone
of this checkout (its working tree as it is, as `pre-commit try-repo` takes it), a commit of a
bad role or routine file fails with sdd's error, naming file, line and key."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from sdd_git.root import Root
from tests.events import managers
from tests.events.hookhelp import git

CHECKOUT = Path(__file__).resolve().parents[2]
MANIFEST = CHECKOUT / ".pre-commit-hooks.yaml"


def entries() -> dict[str, dict[str, object]]:
    return {e["id"]: e for e in yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))}


def test_pre_commit_accepts_the_manifest() -> None:
    done = subprocess.run(
        [str(managers.pre_commit()), "validate-manifest", str(MANIFEST)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(entries()) == {"sdd-role-validate", "sdd-skill-validate", "sdd-routine-validate"}


@pytest.mark.parametrize(
    ("hook", "path", "runs"),
    [
        ("sdd-role-validate", ".sdd/roles/builder/ROLE.md", True),
        ("sdd-role-validate", "templates/builder/ROLE.md", True),
        ("sdd-role-validate", ".claude/agents/reviewer.md", True),
        ("sdd-role-validate", ".github/agents/reviewer.agent.md", True),
        ("sdd-role-validate", "docs/ROLE.md", False),
        ("sdd-role-validate", ".sdd/roles/builder/routines/a.yaml", False),
        ("sdd-skill-validate", ".sdd/skills/deploy/SKILL.md", True),
        ("sdd-skill-validate", ".agents/skills/deploy/SKILL.md", True),
        ("sdd-skill-validate", "templates/builder/skills/deploy/SKILL.md", True),
        ("sdd-skill-validate", "docs/SKILL.md", False),
        ("sdd-routine-validate", ".sdd/roles/builder/routines/nightly.yaml", True),
        ("sdd-routine-validate", "templates/builder/routines/nightly.yaml", True),
        ("sdd-routine-validate", ".sdd/config.yaml", False),
        ("sdd-routine-validate", "src/routines/x.yaml", False),
    ],
)
def test_each_check_runs_only_on_its_own_files(hook: str, path: str, runs: bool) -> None:
    # pre-commit matches `files:` with re.search against the path from the repository's top.
    pattern = entries()[hook]["files"]
    assert isinstance(pattern, str)
    assert (re.search(pattern, path) is not None) == runs


def source_clone(tmp_path: Path) -> tuple[Path, str]:
    """A clone of this checkout at its working tree: edited and new files committed on top, as
    `pre-commit try-repo` does (in CI the checkout is clean, and this is its HEAD)."""
    clone = tmp_path / "sdd-src"
    git(tmp_path, "clone", "-q", "--no-hardlinks", str(CHECKOUT), str(clone))
    git(clone, "checkout", "-q", git(CHECKOUT, "rev-parse", "HEAD").strip())
    listed = git(CHECKOUT, "ls-files", "-z", "--modified", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source, target = CHECKOUT / name, clone / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        elif target.exists():
            target.unlink()  # deleted in the working tree
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "--allow-empty", "-m", "the working tree")
    return clone, git(clone, "rev-parse", "HEAD").strip()


def commit(root: Root, message: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "commit", "-q", "-m", message],
        cwd=root.path,
        capture_output=True,
        text=True,
        timeout=600,  # the first commit builds pre-commit's environment for sdd
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_a_bad_role_or_routine_file_fails_the_commit_with_sdds_error(
    root: Root, tmp_path: Path
) -> None:
    clone, rev = source_clone(tmp_path)
    hooks = [{"id": name} for name in entries()]
    config = {"repos": [{"repo": str(clone), "rev": rev, "hooks": hooks}]}
    (root.path / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    git(root.path, "add", "-A")
    git(root.path, "commit", "-q", "-m", "first")
    subprocess.run(
        [str(managers.pre_commit()), "install"], cwd=root.path, check=True, capture_output=True
    )

    role = root.sdd / "roles" / "reviewer" / "ROLE.md"
    role.parent.mkdir(parents=True)
    role.write_text("---\nrole: reviewer\njob: Review changes\nlevel: nine\n---\nReads.\n")
    git(root.path, "add", "-A")
    failed = commit(root, "a bad role")
    said = failed.stdout + failed.stderr
    assert failed.returncode != 0, said
    assert "sdd role files" in said and "Failed" in said
    assert re.search(r"error: \.sdd/roles/reviewer/ROLE\.md:\d+: key 'level'", said), said
    assert git(root.path, "log", "--format=%s").splitlines() == ["first"]

    role.write_text(
        "---\nrole: reviewer\njob: Review changes\nlevel: 2\n"
        "toolPolicy:\n  delegation: deny\n---\nReads.\n"
    )
    nightly = role.parent / "routines" / "nightly.yaml"
    nightly.parent.mkdir()
    nightly.write_text('name: nightly\nschedule: "0 9 * * 1-5"\ninput: a\nexpected: b\npaused: 2\n')
    git(root.path, "add", "-A")
    failed = commit(root, "a bad routine")
    said = failed.stdout + failed.stderr
    assert failed.returncode != 0, said
    expected = "error: .sdd/roles/reviewer/routines/nightly.yaml:5: key 'paused': must be true"
    assert expected in said, said
    assert "sdd role files" in said and "Passed" in said

    nightly.write_text(nightly.read_text().replace("paused: 2", "paused: false"))
    git(root.path, "add", "-A")
    passed = commit(root, "a good role and routine")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "sdd skill files" in passed.stdout + passed.stderr  # said, and skipped: no skill
