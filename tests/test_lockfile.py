from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdd_git import lockfile
from sdd_git.errors import LockError


def test_a_second_writer_waits_then_fails_naming_the_holder(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    with lockfile.hold(lock):
        holder = json.loads(lock.read_text())
        assert holder["pid"] == os.getpid()
        started = time.monotonic()
        with pytest.raises(LockError) as caught, lockfile.hold(lock, wait_seconds=0.3):
            pass
        assert time.monotonic() - started >= 0.3
    assert f"pid {os.getpid()}" in caught.value.message
    assert "wait for that command" in (caught.value.hint or "")
    assert not lock.exists()  # released after use


def test_a_waiting_writer_gets_the_lock_once_it_is_released(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys,time; from pathlib import Path; from sdd_git import lockfile\n"
            "with lockfile.hold(Path(sys.argv[1])):\n"
            "    print('held', flush=True); time.sleep(0.5)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    with lockfile.hold(lock, wait_seconds=5):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    child.wait(timeout=10)


def test_a_stale_lock_is_reported_with_the_command_to_clear_it_never_taken(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    lock = tmp_path / "record.lock"
    holder = {
        "pid": int(dead.stdout),
        "host": socket.gethostname(),
        "command": "sdd next",
        "since": "x",
    }
    lock.write_text(json.dumps(holder))
    with pytest.raises(LockError) as caught, lockfile.hold(lock, wait_seconds=0.1):
        pass
    assert "no longer running" in caught.value.message
    assert f"rm {lock}" in (caught.value.hint or "")
    assert json.loads(lock.read_text()) == holder  # left for the person to clear
