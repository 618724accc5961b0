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


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def test_a_lock_whose_holder_died_is_taken_over_and_the_takeover_is_logged(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    holder = {"pid": _dead_pid(), "host": socket.gethostname(), "command": "sdd next", "since": "x"}
    lock.write_text(json.dumps(holder))
    started = time.monotonic()
    with lockfile.hold(lock, wait_seconds=0.1):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert time.monotonic() - started < 0.5  # no waiting on a dead holder
    (entry,) = [
        json.loads(line) for line in (tmp_path / "takeovers.jsonl").read_text().splitlines()
    ]
    assert entry["lock"] == "record.lock" and f"pid {holder['pid']}" in entry["dead_holder"]
    assert entry["taken_by"]["pid"] == os.getpid()
    assert not (tmp_path / "record.lock.takeover").exists()


def test_a_reused_pid_does_not_keep_a_dead_holders_lock(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    # Our own pid is alive, but the holder recorded another start time: the pid was reused.
    holder = {"pid": os.getpid(), "host": socket.gethostname(), "started": 1, "since": "x"}
    lock.write_text(json.dumps(holder))
    with lockfile.hold(lock, wait_seconds=0.1):
        assert json.loads(lock.read_text())["started"] != 1


def test_a_live_holder_or_one_on_another_host_is_never_taken_over(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    elsewhere = {"pid": _dead_pid(), "host": "another-host.invalid", "since": "x"}
    lock.write_text(json.dumps(elsewhere))
    with pytest.raises(LockError), lockfile.hold(lock, wait_seconds=0.1):
        pass
    assert json.loads(lock.read_text()) == elsewhere
    with (
        lockfile.hold(tmp_path / "other.lock"),
        pytest.raises(LockError),
        lockfile.hold(tmp_path / "other.lock", wait_seconds=0.1),
    ):
        pass


def test_writers_racing_to_take_over_a_dead_lock_hold_it_one_at_a_time(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    lock.write_text(json.dumps({"pid": _dead_pid(), "host": socket.gethostname(), "since": "x"}))
    journal = tmp_path / "journal.txt"
    code = (
        "import os,sys,time; from pathlib import Path; from sdd_git import lockfile\n"
        "lock, journal = Path(sys.argv[1]), Path(sys.argv[2])\n"
        "with lockfile.hold(lock, wait_seconds=20):\n"
        "    with open(journal, 'a') as j: j.write(f'in {os.getpid()}\\n')\n"
        "    time.sleep(0.05)\n"
        "    with open(journal, 'a') as j: j.write(f'out {os.getpid()}\\n')\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", code, str(lock), str(journal)]) for _ in range(4)
    ]
    assert [w.wait(timeout=60) for w in writers] == [0, 0, 0, 0]
    lines = journal.read_text().splitlines()
    assert len(lines) == 8
    for index in range(0, 8, 2):  # every entry is followed by the same writer's exit
        assert lines[index].startswith("in ") and lines[index + 1] == "out " + lines[index][3:]


def test_a_holder_killed_but_not_yet_reaped_is_taken_over(tmp_path: Path) -> None:
    """A zombie (killed, its parent has not waited for it) holds nothing: its lock is stale."""
    import signal

    lock = tmp_path / "held.lock"
    child = subprocess.Popen(
        [sys.executable, "-c", f"""
import sys, time
from pathlib import Path
from sdd_git import lockfile
with lockfile.hold(Path({str(lock)!r})):
    print("held", flush=True)
    time.sleep(60)
"""],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        child.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never became a zombie"
            time.sleep(0.01)
        with lockfile.hold(lock, wait_seconds=0):  # not reaped yet, and taken over anyway
            pass
    finally:
        child.wait()


# Without /proc (macOS has none): liveness from kill(pid, 0) and `ps`, the start from
# `ps -o lstart`. Proven here on Linux by pointing the module's /proc at a folder that is not there.


@pytest.fixture
def no_proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lockfile, "PROC", tmp_path / "no-proc")


def _proc_start_utc(pid: int) -> float:
    """The real /proc's answer, in UTC seconds: boot time plus the start in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    boot = next(
        int(line.split()[1])
        for line in Path("/proc/stat").read_text().splitlines()
        if line.startswith("btime ")
    )
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")


@pytest.mark.usefixtures("no_proc")
def test_without_proc_a_process_is_alive_then_a_zombie_then_gone() -> None:
    import signal

    sleeper = subprocess.Popen(["sleep", "30"])
    holder = {"pid": sleeper.pid, "host": socket.gethostname(), "since": "x"}
    try:
        assert lockfile.pid_alive(sleeper.pid)
        assert not lockfile.gone(holder)
        sleeper.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{sleeper.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the sleeper never became a zombie"
            time.sleep(0.01)
        assert not lockfile.pid_alive(sleeper.pid)  # killed, not yet reaped: `ps` says Z
        assert lockfile.gone(holder)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not lockfile.pid_alive(sleeper.pid)  # reaped: kill(pid, 0) finds no such process
    assert lockfile.gone(holder)


@pytest.mark.usefixtures("no_proc")
def test_without_proc_the_start_comes_from_ps_and_tells_a_reused_pid_apart() -> None:
    me = lockfile.this_process()
    assert me["started"] is None  # never clock ticks: those would be compared with seconds
    started_at = me["started_at"]
    assert isinstance(started_at, int)
    # `ps -o lstart` shows whole seconds; /proc keeps ticks. Both name the same moment.
    assert abs(started_at - _proc_start_utc(os.getpid())) < 2
    assert not lockfile.gone(me)
    assert lockfile.gone({**me, "started_at": started_at - 60})  # our pid, an older process


@pytest.mark.usefixtures("no_proc")
def test_without_proc_a_dead_holders_lock_is_taken_and_a_live_ones_is_not(tmp_path: Path) -> None:
    lock = tmp_path / "record.lock"
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        lock.write_text(json.dumps({"pid": sleeper.pid, "host": socket.gethostname()}))
        with pytest.raises(LockError) as caught, lockfile.hold(lock, wait_seconds=0.1):
            pass
        assert "no longer running" not in caught.value.message
    finally:
        sleeper.kill()
        sleeper.wait()
    with lockfile.hold(lock, wait_seconds=0.1):
        assert json.loads(lock.read_text())["pid"] == os.getpid()
    assert (tmp_path / "takeovers.jsonl").exists()
