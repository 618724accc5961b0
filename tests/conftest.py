"""Shared fixtures: every test gets its own HOME, a fixed git identity and no SDD_* settings."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from sdd_git.cli.main import main
from sdd_git.records.person import init as init_root
from sdd_git.root import Root


def pytest_configure(config: pytest.Config) -> None:
    """Compile sdd once, before any worker starts: the tamper check rightly counts a new file in
    sdd's own package (a planted .pyc runs), and a worker importing a module for the first time
    writes one while another worker's sandboxed command is being checked."""
    if not hasattr(config, "workerinput"):
        import compileall

        import sdd_git

        # The package these tests import: this checkout's, or an installed wheel's (.ci/wheel
        # runs a copy of the tests with no sdd_git beside them).
        compileall.compile_dir(Path(sdd_git.__file__).resolve().parent, quiet=1)


IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Person",
    "GIT_AUTHOR_EMAIL": "person@example.invalid",
    "GIT_COMMITTER_NAME": "Test Person",
    "GIT_COMMITTER_EMAIL": "person@example.invalid",
}


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("home")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Test Person\n\temail = person@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    # Her user settings layer (~/.config/sdd/config.yaml) is the test's own, whatever the
    # machine running the tests sets.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    for key in list(os.environ):
        if key.startswith("SDD_"):
            monkeypatch.delenv(key)
    # A CI engine is the trust anchor where sdd runs on one (CONTRACT §13): the tests run as on
    # her machine, whatever runs them; a test of the CI path sets these itself.
    for key in ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "TF_BUILD", "BUILDKITE", "JENKINS_URL"):
        monkeypatch.delenv(key, raising=False)
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("NO_COLOR", "1")
    from sdd_git.sandbox.choose import current

    current.cache_clear()  # SDD_SANDBOX is read once per process; each test sets its own
    return home


@pytest.fixture
def root(tmp_path: Path) -> Root:
    return init_root(tmp_path / "product", product="Expenses").root


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str


SddRunner = Callable[..., Result]


@pytest.fixture
def sdd(root: Root, monkeypatch: pytest.MonkeyPatch) -> SddRunner:
    """Run `sdd ARGS...` in-process, in the root (or `cwd=`), through the real entry point."""

    def run(*args: str, cwd: Path | None = None, input: str | None = None) -> Result:
        monkeypatch.chdir(cwd or root.path)
        runner = CliRunner()
        with runner.isolation(input=input) as (out, err, _):
            try:
                main(list(args))
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        return Result(code, out.getvalue().decode(), err.getvalue().decode())

    return run


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m sdd_git ARGS...` as a real child process."""
    return subprocess.run(
        [sys.executable, "-m", "sdd_git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
        timeout=60,
    )


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout


def commit_all(cwd: Path, message: str = "work") -> None:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", message)
