"""Every runnable shell block of the README and of each page of the manual (docs/*.md) runs as
written, in a fresh sdd root.

A `sh` block is runnable unless the line before its fence says why not, as
`<!-- not run by tests/test_readme.py: REASON -->` (it needs a model, a token, the network, or it
serves until stopped). Each command of a block runs in turn, in one folder: a fresh git
repository, with `sdd init` first unless the block starts with it. A command must exit 0, or the
code its own comment names (`# exit 1: ...`), so that a comment promising an exit code is
checked too. `sdd` is this checkout's, found on PATH as a reader's activated venv has it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"<!-- not run by tests/test_readme\.py: (?P<why>.+?) -->")
SAID_EXIT = re.compile(r"#\s*exit (\d+)\b")


@dataclass(frozen=True)
class Block:
    page: str  # README.md or docs/NAME.md
    line: int  # of the opening fence, 1-based
    text: str
    not_run: str | None  # the reason, when the page says it is not run

    @property
    def where(self) -> str:
        return f"{self.page} line {self.line}"


def shell_blocks(page: Path) -> list[Block]:
    blocks: list[Block] = []
    name = page.relative_to(REPO).as_posix()
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            marker = NOT_RUN.search(lines[i - 1]) if i else None
            end = lines.index("```", i + 1)
            why = marker["why"] if marker else None
            blocks.append(Block(name, i + 1, "\n".join(lines[i + 1 : end]), why))
            i = end
        i += 1
    return blocks


def commands(block: str) -> list[str]:
    """The block's commands: a line, joined with the next while a quote is still open."""
    found: list[str] = []
    pending = ""
    for line in block.splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            shlex.split(pending, comments=True)
        except ValueError:  # an open quote: the command goes on on the next line
            continue
        if pending.strip():
            found.append(pending)
        pending = ""
    assert not pending, f"unclosed quote in: {pending!r}"
    return found


BLOCKS = [block for page in PAGES for block in shell_blocks(page)]
RUNNABLE = [b for b in BLOCKS if b.not_run is None]


def test_each_block_the_readme_or_the_manual_does_not_run_says_why() -> None:
    assert len(BLOCKS) >= 15
    assert all(b.not_run and len(b.not_run) > 10 for b in BLOCKS if b not in RUNNABLE)
    # the record's journey (README and concepts), scopes, hooks, routine export
    assert len(RUNNABLE) >= 5
    assert any(b.page == "README.md" for b in RUNNABLE)  # the first hour, by hand


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.where for b in RUNNABLE])
def test_a_runnable_block_of_the_readme_or_the_manual_runs_as_written(
    block: Block, tmp_path: Path
) -> None:
    product = tmp_path / "product"
    product.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_AUTHOR_NAME": "Maya",
        "GIT_AUTHOR_EMAIL": "maya@example.com",
        "GIT_COMMITTER_NAME": "Maya",
        "GIT_COMMITTER_EMAIL": "maya@example.com",
        "SDD_PROVIDER": "",
    }
    subprocess.run(["git", "init", "-q", str(product)], check=True, env=env)
    steps = commands(block.text)
    if not steps[0].startswith("sdd init"):
        steps.insert(0, "sdd init")
    for step in steps:
        said = SAID_EXIT.search(step)
        want = int(said[1]) if said else 0
        done = subprocess.run(
            ["bash", "-c", step], cwd=product, env=env, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == want, (
            f"{block.where}: `{step}` exited {done.returncode}, not {want}:\n"
            f"{done.stdout[-1500:]}\n{done.stderr[-1500:]}"
        )
        assert "Traceback" not in done.stderr, done.stderr
