"""The shipped hook files (top-level hooks/): POSIX sh, one shared part, and the marker that lets
sdd tell its own files, and a changed one, from anyone else's."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from sdd_git.events.hooks import HOOK_NAMES, MARKER, render, shipped_dir, signature

SHARED_START, SHARED_END = "# >>> shared", "# <<< shared"


def shared_part(name: str) -> str:
    text = (shipped_dir() / name).read_text(encoding="utf-8")
    return text[text.index(SHARED_START) : text.index(SHARED_END)]


def test_the_three_hooks_ship_and_share_one_text_for_their_common_part() -> None:
    assert {p.name for p in shipped_dir().iterdir()} >= set(HOOK_NAMES)
    first = shared_part(HOOK_NAMES[0])
    assert "sdd_event()" in first and "sdd_read_index()" in first
    assert all(shared_part(name) == first for name in HOOK_NAMES[1:])


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_each_hook_is_posix_sh_that_parses(name: str) -> None:
    path = shipped_dir() / name
    assert path.read_text(encoding="utf-8").startswith("#!/bin/sh\n")
    for shell in ("sh", "dash", "bash"):
        found = shutil.which(shell)
        if found is None:
            continue
        flags = ["--posix", "-n"] if shell == "bash" else ["-n"]
        result = subprocess.run([found, *flags, str(path)], capture_output=True, text=True)
        assert result.returncode == 0, f"{shell}: {result.stderr}"


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_an_installed_hook_names_its_interpreter_and_carries_an_intact_marker(name: str) -> None:
    text = render(name, "/opt/py 3/bin/python")
    lines = text.splitlines()
    assert lines[0] == "#!/bin/sh" and lines[1].startswith(MARKER)
    assert "SDD_PYTHON='/opt/py 3/bin/python'\n" in text
    assert render(name) != text and f"SDD_PYTHON={sys.executable}\n" in render(name)
    assert signature(text.encode()) == "intact"
    assert signature(text.replace("exit", "exit ", 1).encode()) == "changed"
    assert signature((shipped_dir() / name).read_bytes()) is None  # the template is not sdd's
