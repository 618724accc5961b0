"""A second local user of this computer, real: made with `useradd` for the test session and
removed after it, and programs run as that user (a uid and gid of their own, no groups of ours).

Only root can make a user and switch to it; elsewhere the tests that need one are skipped, with
that reason."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest


def _others_may_reach(path: Path, need: int) -> bool:
    """Whether a user who is neither its owner nor in its group may use `path` (resolved) with
    the bits `need` for others (0o001 to run it, 0o004 to read it), and enter every folder
    above it."""
    real = path.resolve()
    return (
        real.is_file()
        and bool(real.stat().st_mode & need)
        and all(p.stat().st_mode & 0o001 for p in real.parents)
    )


def _cannot(reason: str) -> NoReturn:
    """A skip, or in CI as root (SDD_REQUIRE_OTHER_USER=1) a failure: there, the tests that
    need another user must run."""
    if os.environ.get("SDD_REQUIRE_OTHER_USER") and os.geteuid() == 0:
        pytest.fail(f"SDD_REQUIRE_OTHER_USER is set, and {reason}")
    pytest.skip(reason)


def interpreter_for_others() -> str:
    """A Python another user can run. This one, when its interpreter and standard library are
    open to others; else the system's (root's home, where pyenv puts Python, is often 0700).
    The code run as the other user is isolated (-I) and uses the standard library alone."""
    import sysconfig

    here = Path(sys.executable)
    stdlib = Path(sysconfig.get_paths()["stdlib"]) / "os.py"
    if _others_may_reach(here, 0o001) and _others_may_reach(stdlib, 0o004):
        return sys.executable
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"):
        if Path(candidate).exists() and _others_may_reach(Path(candidate), 0o001):
            return candidate
    _cannot(
        f"no Python that another user may run: {here} lies in a folder closed to others, and"
        " there is no system python3"
    )


@dataclass(frozen=True)
class OtherUser:
    name: str
    uid: int
    gid: int

    def run(self, code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Python `code` run as this user (isolated mode: nothing of ours on its path)."""
        return subprocess.run(
            [interpreter_for_others(), "-I", "-c", code, *args], **self._as_them(),
            capture_output=True, text=True, timeout=timeout, check=False,
        )  # fmt: skip

    def start(self, code: str, *args: str) -> subprocess.Popen[str]:
        """The same, left running: the caller ends it (by its handle)."""
        return subprocess.Popen(
            [interpreter_for_others(), "-I", "-c", code, *args], **self._as_them(),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def _as_them(self) -> dict[str, Any]:
        return {
            "user": self.uid,
            "group": self.gid,
            "extra_groups": [],
            "cwd": "/",
            "env": {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/"},
        }


def other_user() -> Iterator[OtherUser]:
    """A fresh user for as long as the caller holds it (a fixture's body): `useradd`, then
    `userdel` after. Skipped, with the reason, where this process cannot make one."""
    if os.geteuid() != 0:
        pytest.skip("needs root: only root can add a second local user and run as it")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        _cannot("needs useradd and userdel (the passwd package) to add a second local user")
    name = f"sddo{os.getpid()}"[:31]  # one per test process: parallel runs never share one
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--user-group", "--shell", "/bin/false", name],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert made.returncode == 0, f"useradd {name} failed: {made.stderr}"
    try:
        entry = pwd.getpwnam(name)
        assert entry.pw_uid != os.geteuid()
        yield OtherUser(name, entry.pw_uid, entry.pw_gid)
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)
