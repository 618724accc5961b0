"""Shell completion, as a shell runs it: the real `sdd` with click's completion variables set,
in a real sdd root. Commands come from click; role names, change ids, stop ids, run ids and
routine names from the root's folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sdd_git.root import Root

SDD = [sys.executable, "-m", "sdd_git"]


def _complete(shell: str, words: str, cwd: Path) -> tuple[int, str, str]:
    env = {**os.environ, "_SDD_COMPLETE": f"{shell}_complete", "COMP_WORDS": words}
    # bash and zsh give the index of the word being completed; fish gives that word itself.
    last = words.split(" ")[-1]
    env["COMP_CWORD"] = last if shell == "fish" else str(len(words.split(" ")) - 1)
    done = subprocess.run(SDD, env=env, cwd=cwd, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    return done.returncode, done.stdout, done.stderr


def _values(shell: str, out: str) -> list[str]:
    if shell == "bash":
        return [line.split(",", 1)[1] for line in out.splitlines()]
    if shell == "zsh":
        lines = out.splitlines()
        return [lines[i + 1] for i in range(0, len(lines), 3)]
    return [line.split(",", 1)[1].split("\t")[0] for line in out.splitlines()]


@pytest.fixture
def furnished(root: Root) -> Path:
    base = root.path
    for name in ("builder", "qa-author"):
        (base / ".sdd" / "roles" / name / "routines").mkdir(parents=True)
        (base / ".sdd" / "roles" / name / "ROLE.md").write_text("---\nrole: x\n---\n")
    (base / ".sdd" / "roles" / "builder" / "routines" / "nightly.yaml").write_text("name: x\n")
    for change in ("CH-0001", "CH-0002"):
        (base / "changes" / change).mkdir(parents=True)
    (base / ".sdd" / "local" / "stops").mkdir(parents=True)
    (base / ".sdd" / "local" / "stops" / "S-7f3a.json").write_text("{}")
    (base / ".sdd" / "role-runs").mkdir(parents=True, exist_ok=True)
    (base / ".sdd" / "role-runs" / "20261207-builder-1.jsonl").write_text("")
    # A name no id has: never offered to the shell.
    (base / "changes" / "CH-0003\x1b[31m").mkdir()
    return base


CASES = (
    ("sdd role show ", ["builder", "executor", "qa-author", "supervisor"]),
    ("sdd role run q", ["qa-author"]),
    ("sdd accept reading CH", ["CH-0001", "CH-0002"]),
    ("sdd next ", ["CH-0001", "CH-0002"]),
    ("sdd release generate CH-0001 ", ["CH-0001", "CH-0002"]),
    ("sdd allow ", ["S-7f3a"]),
    ("sdd deny S", ["S-7f3a"]),
    ("sdd role log ", ["20261207-builder-1"]),
    ("sdd routine pause ", ["nightly"]),
    ("sdd routine create b", ["builder"]),
)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize(("words", "expected"), CASES, ids=[w for w, _ in CASES])
def test_ids_complete_in_each_shell(
    furnished: Path, shell: str, words: str, expected: list[str]
) -> None:
    code, out, err = _complete(shell, words, furnished)
    assert (code, err) == (0, "")
    assert _values(shell, out) == expected


def test_commands_complete_and_dash_c_names_the_root(furnished: Path, tmp_path: Path) -> None:
    code, out, _ = _complete("bash", "sdd ro", furnished)
    assert code == 0 and _values("bash", out) == ["role", "routine"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out, _ = _complete("bash", f"sdd -C {furnished} next ", elsewhere)
    assert code == 0 and _values("bash", out) == ["CH-0001", "CH-0002"]


def test_outside_an_sdd_root_nothing_is_offered_and_nothing_fails(tmp_path: Path) -> None:
    code, out, err = _complete("bash", "sdd next ", tmp_path)
    assert (code, out.strip(), err) == (0, "", "")


@pytest.mark.parametrize(("shell", "mark"), [("bash", "complete -o"), ("zsh", "compdef"),
                                             ("fish", "complete --no-files")])  # fmt: skip
def test_each_shell_gets_its_script(tmp_path: Path, shell: str, mark: str) -> None:
    env = {**os.environ, "_SDD_COMPLETE": f"{shell}_source"}
    done = subprocess.run(SDD, env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0 and mark in done.stdout, done.stdout[:300]
