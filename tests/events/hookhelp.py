"""Helpers for the hook and worker tests: a product with a first commit and a role, routines
written by hand, waiting with a deadline, and a byte-for-byte picture of a folder."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdd_git.root import Root

ROLE = "spec-steward"  # a shipped template whose run ends with a reply (no spec needed)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout


def product(root: Root, role: str | None = ROLE) -> Root:
    """The root with its first commit on main and, when asked, a role from a shipped template."""
    if role is not None:
        from sdd_git.roles.manage import add

        add(root, role)
    git(root.path, "add", "-A")
    git(root.path, "commit", "-q", "-m", "first")
    return root


def routine(root: Root, name: str, on: str, role: str = ROLE, paused: bool = False) -> Path:
    path = root.sdd / "roles" / role / "routines" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"name: {name}\non: {on}\ninput: the commit that landed\n"
        f"expected: a one-line note on it\nwhen_source_missing: report\n"
        f"paused: {'true' if paused else 'false'}\n",
        encoding="utf-8",
    )
    from tests.trusthelp import confirm

    confirm(root, path.relative_to(root.path).as_posix())  # as `sdd routine create` records it
    return path


def script(tmp_path: Path, calls: list[dict[str, Any]]) -> str:
    """A scripted provider file; the value for SDD_PROVIDER."""
    import yaml

    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump({"calls": calls}, sort_keys=False), encoding="utf-8")
    return f"script:{path}"


def merge_feature(root: Root, branch: str = "feature", into: str = "main", name: str = "f") -> str:
    """A commit on `branch`, merged (--no-ff) into `into`; the merge's commit id."""
    git(root.path, "checkout", "-q", "-B", branch, into)
    (root.path / f"{name}.txt").write_text(f"{name}\n", encoding="utf-8")
    git(root.path, "add", f"{name}.txt")
    git(root.path, "commit", "-q", "-m", f"work {name}")
    git(root.path, "checkout", "-q", into)
    git(root.path, "merge", "-q", "--no-ff", branch, "-m", f"merge {branch}")
    return git(root.path, "rev-parse", "HEAD").strip()


def wait_until(check: Callable[[], Any], seconds: float = 20.0, what: str = "it") -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds} s")
        time.sleep(0.05)


def event_files(root: Root) -> list[dict[str, Any]]:
    """Every event, waiting or done."""
    folder = root.local / "events"
    found = []
    for path in sorted([*folder.glob("*.json"), *folder.glob("done/*.json")]):
        found.append({**json.loads(path.read_text(encoding="utf-8")), "_path": path})
    return found


def worker_idle(root: Root, seconds: float = 30.0) -> None:
    """No worker holds the lock, and nothing waits: every process a hook started is done."""
    from sdd_git.events.queue import pending
    from sdd_git.events.worker import lock_path

    wait_until(
        lambda: not lock_path(root).exists() and not pending(root), seconds, "the worker's end"
    )


def runs_of(root: Root, name: str, event_id: str | None = None) -> list[dict[str, Any]]:
    """run_started lines of the routine's runs (origin routine). The log of a fire that could
    not start its run (routines/notrun.py: no key, a file git was still writing) is no run."""
    found = []
    for path in sorted((root.sdd / "role-runs").glob("*.jsonl")):
        text = path.read_text(encoding="utf-8")
        if "\n" not in text:
            continue  # a run whose log is being started: its first line is on its way
        lines = text.splitlines()
        first = json.loads(lines[0])
        mine = first.get("origin") == "routine" and first.get("routine") == name
        if any('"event": "could_not_run"' in line for line in lines):
            continue
        if mine and (event_id is None or first.get("event_id") == event_id):
            found.append({**first, "_path": path})
    return found


def ended(run: dict[str, Any]) -> bool:
    lines = Path(run["_path"]).read_text(encoding="utf-8").splitlines()
    return any(json.loads(line).get("event") == "run_ended" for line in lines)


def snapshot(folder: Path) -> dict[str, tuple[int, str]]:
    """Each entry's mode and content hash (a link's target), to compare a folder byte for byte."""
    found = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            content = "link:" + os.readlink(path)
        elif stat.S_ISDIR(info.st_mode):
            content = "folder"
        else:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        found[str(path.relative_to(folder))] = (info.st_mode, content)
    return found
