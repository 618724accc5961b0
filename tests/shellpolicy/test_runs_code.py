"""The guard says when a shell command runs code, so that no saved rule allows it without a
sandbox: what the product folder provides counts too, not only what the words say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sdd_git.root import Root
from sdd_git.runner import guard
from sdd_git.shellpolicy.runs_code import runs_code
from sdd_git.tools.catalog import TOOL_CLASSES

EVERY_TOOL = tuple(TOOL_CLASSES)


def _clearance(root: Path, command: str) -> guard.Clearance:
    verdict = guard.check("run_command", {"command": command, "purpose": "p"}, root, EVERY_TOOL)
    assert isinstance(verdict, guard.Clearance), verdict
    return verdict


def _program(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o755)


def test_a_program_named_by_an_absolute_path_into_the_product_runs_code(root: Root) -> None:
    _program(root.path / "tools" / "gen")
    verdict = _clearance(root.path, f"{root.path}/tools/gen --all")
    assert verdict.runs_code and verdict.certain
    assert any("program in the product folder" in r for r in verdict.reasons)


@pytest.mark.parametrize("folder", ["node_modules/.bin", ".venv/bin", "bin"])
def test_a_bare_name_the_product_provides_runs_code(root: Root, folder: str) -> None:
    _program(root.path / folder / "lint")
    verdict = _clearance(root.path, "lint src")
    assert verdict.runs_code
    assert verdict.reasons == (f"lint is a program in the product folder ({folder}/lint)",)


def test_a_bare_name_the_product_does_not_provide_is_plain(root: Root) -> None:
    _program(root.path / "node_modules" / ".bin" / "jest")
    assert not _clearance(root.path, "ls -la").runs_code


def test_a_builtin_is_bash_s_own_whatever_the_product_holds(root: Root) -> None:
    _program(root.path / "bin" / "test")
    assert not _clearance(root.path, "test -f README.md").runs_code


def test_a_path_entry_inside_the_product_makes_its_programs_the_products(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(root.path / "tools" / "fmt")
    assert not _clearance(root.path, "fmt x").runs_code
    monkeypatch.setenv("PATH", os.pathsep.join(["tools", os.environ.get("PATH", "")]))
    assert _clearance(root.path, "fmt x").runs_code


def test_an_empty_path_entry_is_the_product_folder(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    _program(root.path / "fmt")
    monkeypatch.setenv("PATH", os.pathsep + os.environ.get("PATH", ""))
    assert _clearance(root.path, "fmt x").runs_code


def test_a_conftest_the_role_wrote_is_why_pytest_runs_code(root: Root) -> None:
    verdict = _clearance(root.path, "pytest -q")
    # It stays certain (the boundary shows it plainly) but can never be saved without a sandbox.
    assert verdict.certain and verdict.runs_code
    assert verdict.reasons == (
        "pytest runs the product's build, tests or the code its config names",
    )


def test_tools_other_than_run_command_never_run_code(root: Root) -> None:
    verdict = guard.check(
        "write_file", {"path": "src/a.py", "content": "x", "purpose": "p"}, root.path, EVERY_TOOL
    )
    assert verdict == guard.Clearance(certain=True, runs_code=False, reasons=())


def test_busybox_stays_uncertain_and_its_applet_is_classified(root: Root) -> None:
    verdict = guard.check(
        "run_command", {"command": "busybox rm -rf memory", "purpose": "p"}, root.path, EVERY_TOOL
    )
    assert isinstance(verdict, guard.Rejection) and verdict.code == "protected_path"
    verdict = guard.check(
        "run_command",
        {"command": "busybox sh -c 'sdd next'", "purpose": "p"},
        root.path,
        EVERY_TOOL,
    )
    assert isinstance(verdict, guard.Rejection) and verdict.code == "person_command"
    assert not _clearance(root.path, "busybox ls").certain


@pytest.mark.parametrize(
    ("words", "reason"),
    [
        (["python", "-c", "x"], "python runs code given on the command line"),
        (["python3", "-m", "pytest"], "python3 -m runs a module, which may be one in the product"),
        (["python", "x.py"], "python runs x.py"),
        (["perl"], "perl runs a script or code from its input"),
        (["./x"], "./x is a program in the product folder"),
        (["/opt/tool/bin/x"], "/opt/tool/bin/x is a program outside the system's folders"),
        (["npm", "--prefix", "ls", "test"], "npm --prefix runs the product's build, tests"),
        (["go", "-C", "sub", "test"], "go test builds and runs the product's code"),
        (["tar", "-cf", "/dev/null", "-I", "sh", "x"], "tar is told to run a program"),
        (["mawk", "-W", "exec", "prog.awk"], "mawk -W: an option that may run a program file"),
        (["awk", None], "awk gets a word that is not fixed"),
        (["awk", '{ print | "sh" }'], "the awk program can run commands"),
        (["7z", "-y", "x", "a.7z"], "7z extracts an archive"),
    ],
)
def test_runs_code_names_what_runs(words: list[str | None], reason: str) -> None:
    assert words[0] is not None
    reasons = runs_code(words[0], list(words[1:]))
    assert reasons and reasons[0].startswith(reason), reasons


@pytest.mark.parametrize(
    "words",
    [
        ["python", "--version"],
        ["node", "-v"],
        ["/usr/bin/git", "status"],
        ["/usr/local/bin/jq", "."],
        ["awk", "-F,", "{ if ($1 == 2) print $2 }"],
        ["go", "version"],
        ["cargo"],
        ["npm", "view", "left-pad"],
        ["unzip"],
        ["ar", "t", "lib.a"],
        ["gunzip", "a.gz"],
        ["cat", "a.py"],
    ],
)
def test_plain_commands_do_not_run_code(words: list[str]) -> None:
    assert runs_code(words[0], list(words[1:])) == []


def test_a_version_flag_beside_code_is_still_code() -> None:
    assert runs_code("python", ["--version", "-c", "x"])
    assert runs_code("pytest", ["-v"])  # verbose for pytest, not its version


def test_the_dynamic_loader_runs_the_program_it_is_given(root: Root) -> None:
    verdict = _clearance(root.path, "/lib64/ld-linux-x86-64.so.2 src/tool -c id")
    assert verdict.runs_code and verdict.certain
    assert any("program in the product folder" in r for r in verdict.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "printf '#!/bin/sh\\nsdd next\\n' > src/z.sh; sort --compress-program=src/z.sh f",
        "echo 'sdd next' > x.sh; chmod +x x.sh; ./x.sh",
        "echo -n 'sdd ' > x.sh; echo next >> x.sh; bash x.sh",
    ],
)
def test_a_script_the_same_line_writes_and_runs_is_read_as_shell(root: Root, command: str) -> None:
    verdict = guard.check(
        "run_command", {"command": command, "purpose": "p"}, root.path, EVERY_TOOL
    )
    assert isinstance(verdict, guard.Rejection) and verdict.code == "person_command", verdict


def test_a_script_written_with_text_sdd_cannot_read_is_uncertain(root: Root) -> None:
    assert not _clearance(root.path, 'printf "$X" > x.sh; ./x.sh').certain
