"""The inline prompt in a terminal offers "for this [r]un": answered `r`, the same call runs
again without a stop in that run (a real pseudo-terminal and a real `sdd` process)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import yaml

from sdd_git.root import Root
from tests.runner.scripted import accepted_change, add_role, write_call


def _read_until(leader: int, wanted: str, seen: str, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    while wanted not in seen and time.monotonic() < deadline:
        if select.select([leader], [], [], 1)[0]:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk.decode(errors="replace")
    return seen


def test_the_inline_prompt_offers_allow_for_this_run(root: Root, tmp_path: Path) -> None:
    accepted_change(root)
    add_role(root, "builder")
    calls = [
        {"tool_calls": [write_call("a.txt")]},
        {"tool_calls": [write_call("a.txt", purpose="again")]},
        {"say": "Written twice."},
    ]
    script = tmp_path / "s.yaml"
    script.write_text(yaml.safe_dump({"calls": calls}, sort_keys=False))
    env = {**os.environ, "SDD_PROVIDER": f"script:{script}"}
    leader, follower = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", "role", "run", "builder", "--task", "W"],
        cwd=root.path, env=env, stdin=follower, stdout=follower, stderr=follower, close_fds=True,
    )  # fmt: skip
    os.close(follower)
    seen = _read_until(leader, "or [l]ater?", "")
    assert "Allow [o]nce, for this [r]un, [a]lways, [d]eny, or [l]ater?" in seen, seen
    os.write(leader, b"r\n")
    seen = _read_until(leader, "\x00never\x00", seen)  # to the end of its output
    os.close(leader)
    assert "Written twice." in seen
    assert child.wait(timeout=60) == 0, seen
    assert seen.count("or [l]ater?") == 1  # the second, same call did not stop
    assert (root.path / "a.txt").exists()
