"""The hook managers sdd's hooks are tested beside, installed outside the repository from the
registries, pinned:

- pre-commit 4.7.0 from PyPI, in a virtual environment of its own;
- lefthook 2.2.2 from npm (the `lefthook` package and the binary its optional dependency for
  this platform ships);
- husky 9.1.7 from npm.

    python tests/events/managers.py install   # once per machine; .ci/run calls it

The cache is `$SDD_CI_CACHE`, else `~/.cache/sdd-ci`, as for tests/routines/validators.py. A
manager that is missing is installed on first use; where it cannot be, its test is skipped,
said as a skip, except where SDD_REQUIRE_VALIDATORS is set (.ci/run sets it): there it fails.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

CACHE = Path(os.environ.get("SDD_CI_CACHE") or Path.home() / ".cache" / "sdd-ci")
REQUIRED = bool(os.environ.get("SDD_REQUIRE_VALIDATORS"))  # read at import, as validators.py
INSTALL = "python tests/events/managers.py install"

PRE_COMMIT_VERSION = "4.7.0"
LEFTHOOK_VERSION = "2.2.2"
HUSKY_VERSION = "9.1.7"
PRE_COMMIT_HOME = CACHE / f"pre-commit-{PRE_COMMIT_VERSION}"
LEFTHOOK_HOME = CACHE / f"lefthook-{LEFTHOOK_VERSION}"
HUSKY_HOME = CACHE / f"husky-{HUSKY_VERSION}"
_PRE_COMMIT = PRE_COMMIT_HOME / "bin" / "pre-commit"
_LEFTHOOK = LEFTHOOK_HOME / "node_modules" / ".bin" / "lefthook"
_HUSKY = HUSKY_HOME / "node_modules" / "husky" / "bin.js"


class ManagerMissing(AssertionError):
    """A hook manager is not installed: a failure, never a skip, where CI requires it."""


def _ready(path: Path) -> bool:
    return path.is_file() and (path.suffix == ".js" or os.access(path, os.X_OK))


def install_pre_commit() -> None:
    if _ready(_PRE_COMMIT):
        return
    subprocess.run([sys.executable, "-m", "venv", str(PRE_COMMIT_HOME)], check=True, timeout=300)
    subprocess.run(
        [str(PRE_COMMIT_HOME / "bin" / "python"), "-m", "pip", "install", "-q",
         "--disable-pip-version-check", f"pre-commit=={PRE_COMMIT_VERSION}"],
        check=True,
        timeout=300,
    )  # fmt: skip


def _npm(home: Path, package: str) -> None:
    if shutil.which("npm") is None:
        raise SystemExit(f"npm is needed to install {package} (from the npm registry)")
    home.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["npm", "install", "--prefix", str(home), "--no-audit", "--no-fund", "--ignore-scripts",
         package],
        check=True,
        stdout=subprocess.DEVNULL,
        timeout=300,
    )  # fmt: skip


def install_lefthook() -> None:
    if not _ready(_LEFTHOOK):
        _npm(LEFTHOOK_HOME, f"lefthook@{LEFTHOOK_VERSION}")


def install_husky() -> None:
    if not _ready(_HUSKY):
        _npm(HUSKY_HOME, f"husky@{HUSKY_VERSION}")


def _found(path: Path, name: str, install: Callable[[], None]) -> Path:
    if not _ready(path):
        with contextlib.suppress(OSError, subprocess.SubprocessError, SystemExit):
            install()
    if _ready(path):
        return path
    if not REQUIRED:
        import pytest

        pytest.skip(f"{name} could not be installed here ({INSTALL})")
    raise ManagerMissing(f"{name} is not installed ({path} missing): {INSTALL}")


def pre_commit() -> Path:
    return _found(_PRE_COMMIT, f"pre-commit {PRE_COMMIT_VERSION}", install_pre_commit)


def lefthook() -> Path:
    return _found(_LEFTHOOK, f"lefthook {LEFTHOOK_VERSION}", install_lefthook)


def husky() -> list[str]:
    """The command that runs husky's installer (`husky` in a package.json's prepare script)."""
    found = _found(_HUSKY, f"husky {HUSKY_VERSION}", install_husky)
    node = shutil.which("node")
    if node is None:
        if not REQUIRED:
            import pytest

            pytest.skip("husky needs Node.js, and this machine has none")
        raise ManagerMissing("husky needs Node.js (`node` on PATH)")
    return [node, str(found)]


def install() -> None:
    install_pre_commit()
    print(f"pre-commit {PRE_COMMIT_VERSION}")
    install_lefthook()
    print(f"lefthook {LEFTHOOK_VERSION}")
    install_husky()
    print(f"husky {HUSKY_VERSION}")
    missing = [str(p) for p in (_PRE_COMMIT, _LEFTHOOK, _HUSKY) if not _ready(p)]
    if missing:
        raise SystemExit(f"installed, and still missing: {', '.join(missing)}")


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        raise SystemExit(f"usage: {INSTALL}")
    install()
