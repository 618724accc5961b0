"""Native Windows is not a platform sdd runs on: it says so in one `error:` line naming WSL and
one `hint:` line, exit 1, before click or any other part of sdd is imported. Linux and macOS
start as ever. The real check reads `sys.platform`; the tests set it to "win32" here, on Linux."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sdd_git.cli.entry import refuse_unsupported_platform


def _said(stderr: str) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 2, stderr
    assert lines[0].startswith("error: sdd does not run on native Windows") and "WSL" in lines[0]
    assert lines[1].startswith("hint: ") and "wsl --install" in lines[1]


def test_native_windows_is_refused_in_one_error_line_naming_wsl(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        refuse_unsupported_platform("win32")
    assert exited.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    _said(captured.err)


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_linux_and_macos_start(platform: str, capsys: pytest.CaptureFixture[str]) -> None:
    refuse_unsupported_platform(platform)
    assert capsys.readouterr() == ("", "")


# What the refusal left imported: nothing of click, nothing of sdd beyond the entry itself.
_IMPORTED = (
    "except SystemExit:\n"
    "    mine = {'sdd_git', 'sdd_git.cli', 'sdd_git.cli.entry'}\n"
    "    extra = [m for m in sys.modules if m == 'click' or m.startswith('click.')\n"
    "             or (m.startswith('sdd_git') and m not in mine)]\n"
    "    print(sorted(extra))\n"
    "    raise\n"
)


@pytest.mark.parametrize(
    "start",
    [
        # The console script `sdd` (sdd_git.cli.entry:main), with any command, `guard` included.
        "from sdd_git.cli.entry import main; sys.argv = ['sdd', 'guard']; main()",
        "from sdd_git.cli.entry import main; sys.argv = ['sdd', '--help']; main()",
        # `python -m sdd_git`
        "import runpy; sys.argv = ['sdd', 'demo']; "
        "runpy.run_module('sdd_git', run_name='__main__')",
    ],
    ids=["sdd guard", "sdd --help", "python -m sdd_git"],
)
def test_the_real_entry_refuses_windows_before_importing_click(start: str, tmp_path: Path) -> None:
    probe = f"import sys\nsys.platform = 'win32'\ntry:\n    {start}\n{_IMPORTED}"
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout.strip() == "[]"
    _said(done.stderr)
    assert "Traceback" not in done.stderr
