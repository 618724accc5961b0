"""The progress bar of a long listing, as she sees it: `sdd role list` over many role files in a
real pseudo-terminal; nothing of it without a terminal, and nothing for work that ends at once."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from sdd_git.cli.progress import SlowBar
from sdd_git.root import Root

ROLES = 400
COMMAND = [sys.executable, "-m", "sdd_git", "role", "list"]


def _many_roles(root: Root) -> None:
    for index in range(ROLES):
        folder = root.sdd / "roles" / f"r{index:04d}"
        folder.mkdir(parents=True)
        (folder / "ROLE.md").write_text(
            f"---\nrole: r{index:04d}\njob: job {index}\nlevel: 0\n"
            "toolPolicy.delegation: deny\nproduces: review\n---\nReviews.\n"
        )


def _in_a_terminal(cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    leader, follower = pty.openpty()
    child = subprocess.Popen(COMMAND, cwd=cwd, env=env, stdin=follower, stdout=follower,
                             stderr=follower, close_fds=True)  # fmt: skip
    os.close(follower)
    seen = b""
    while select.select([leader], [], [], 60)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return child.wait(timeout=60), seen.decode(errors="replace")


def test_a_long_listing_shows_a_bar_that_reaches_the_end_and_goes(root: Root) -> None:
    _many_roles(root)
    code, seen = _in_a_terminal(root.path, {**os.environ, "SDD_PROGRESS_AFTER": "0"})
    assert code == 0, seen
    assert f"reading role files [{'#' * 30}] {ROLES}/{ROLES}" in seen
    end = seen.rindex(f"{ROLES}/{ROLES}")
    assert "\r\x1b[K" in seen[end:]  # erased before the list is printed
    assert "r0399" in seen[end:]


def test_without_a_terminal_there_is_no_bar(root: Root) -> None:
    _many_roles(root)
    env = {**os.environ, "SDD_PROGRESS_AFTER": "0"}
    done = subprocess.run(COMMAND, cwd=root.path, env=env, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0
    assert "reading role files" not in done.stdout + done.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_work_that_ends_at_once_draws_nothing() -> None:
    screen = _Terminal()
    bar = SlowBar("reading role files", stream=screen)
    for done in range(1, 1001):
        bar(done, 1000)
    bar.done()
    assert screen.getvalue() == ""
