"""`sdd guard` as a command: reached before click by the console script and `python -m sdd_git`,
listed by `sdd --help`, reached through click too (`sdd -C DIR guard`), and on its hot path it
imports nothing of sdd but the classifier, the path rules and its own modules."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sdd_git.hostguard import main as guard_main
from tests.conftest import run_cli
from tests.hostguard.guardrun import event

# What `sdd guard` may import of sdd: the classifier, the path rules and itself.
MAY_IMPORT = ("sdd_git.hostguard", "sdd_git.shellpolicy", "sdd_git.protected", "sdd_git.sandbox")
MAY_IMPORT_EXACTLY = {
    "sdd_git",
    "sdd_git.cli",
    "sdd_git.cli.entry",
    "sdd_git.cli.spawned",
    "sdd_git.__main__",
    "sdd_git.sandbox.policy",
    "sdd_git.sandbox.tables",
    "sdd_git.personcommands",
}


def _imported(code: str, data: bytes, cwd: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-P", "-X", "importtime", "-c", code],
        input=data, cwd=cwd, capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    lines = done.stderr.decode().splitlines()
    return {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}


@pytest.mark.parametrize(
    "command",
    ["echo x > memory/decisions.yaml && git status", "sdd -C . accept reading CH-0001"],
)
def test_the_hot_path_imports_only_the_classifier_and_the_path_rules(
    product: Path, command: str
) -> None:
    data = json.dumps(event("Bash", {"command": command}, product)).encode()
    entry = (
        "import sys; sys.argv = ['sdd', 'guard', '--host', 'claude']\n"
        "from sdd_git.cli.entry import main\nmain()"
    )
    for code in (entry, "import runpy; import sys; sys.argv = ['x', 'guard']; "
                 "runpy.run_module('sdd_git', run_name='__main__')"):  # fmt: skip
        modules = _imported(code, data, product)
        assert "sdd_git.shellpolicy.walk" in modules  # it did classify
        assert "click" not in modules and "yaml" not in modules
        ours = {m for m in modules if m == "sdd_git" or m.startswith("sdd_git.")}
        extra = {m for m in ours if m not in MAY_IMPORT_EXACTLY and not m.startswith(MAY_IMPORT)}
        assert extra == set()
        sandbox = {m for m in ours if m.startswith("sdd_git.sandbox.")}
        assert sandbox <= {"sdd_git.sandbox.policy", "sdd_git.sandbox.tables"}


def test_guard_help_and_sdd_help(product: Path) -> None:
    shown = run_cli("guard", "--help", cwd=product)
    assert shown.returncode == 0 and "Usage: sdd guard [--host NAME]" in shown.stdout
    listed = run_cli("--help", cwd=product)
    assert listed.returncode == 0 and "guard" in listed.stdout
    assert "Check another agent's tool call" in listed.stdout


def test_through_click_with_global_options_too(product: Path) -> None:
    data = json.dumps(event("Bash", {"command": "sdd next"}, product))
    for args in (["-C", str(product), "guard", "--host", "claude"], ["--no-agent", "guard"]):
        done = subprocess.run(
            [sys.executable, "-P", "-m", "sdd_git", *args],
            input=data, text=True, cwd=product, capture_output=True, check=False, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2 and done.stderr.startswith("sdd guard: "), done


@pytest.mark.parametrize(
    ("args", "words"),
    [(["--host", "codex9"], "knows no host 'codex9'"), (["--frob"], "takes only --host")],
)
def test_a_wrong_command_line_refuses_and_says_why(
    product: Path, args: list[str], words: str
) -> None:
    done = run_cli("guard", *args, cwd=product)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_a_fault_inside_the_guard_refuses_the_call(
    product: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(call: object) -> object:
        raise RuntimeError("a bug")

    monkeypatch.setattr("sdd_git.hostguard.check.decide", broken)
    out, err = io.StringIO(), io.StringIO()
    data = io.StringIO(json.dumps(event("Bash", {"command": "ls"}, product)))
    assert guard_main.main(["--host", "claude"], stdin=data, stdout=out, stderr=err) == 2
    assert "could not check this call (RuntimeError: a bug)" in err.getvalue()
    assert out.getvalue() == ""
