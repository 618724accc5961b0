from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import run_cli


def test_demo_walks_the_whole_record_journey_offline(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    result = run_cli("demo", "--dir", str(folder), cwd=tmp_path, env={"SDD_PROVIDER": ""})
    assert result.returncode == 0, result.stderr
    assert f"sdd demo in {folder}" in result.stdout
    assert "The reading she accepted is unchanged: yes." in result.stdout
    assert "RECORDED" in result.stdout  # the model's replies are labelled as recorded
    assert "qa-author found 1 gap(s): G1 (SPEC-0001#S1/C2)" in result.stdout
    assert (
        "pass 2: revision of G1" in result.stdout
        and "pass 2: qa-author found no gap" in result.stdout
    )
    assert "The file is written and NOT committed" in result.stdout
    assert (
        "Commits in the repository: 1 (only the one a stop named and she allowed)." in result.stdout
    )
    change = yaml.safe_load((folder / "changes/CH-0001/change.yaml").read_text())
    assert change["stage"] == "done"
    kinds = [d["kind"] for d in yaml.safe_load((folder / "memory/decisions.yaml").read_text())]
    assert kinds == [
        "accept-section",
        "accept-scenario",
        "release",
        "accept-section",
        "accept-plan",
    ]
    notes = (folder / "memory/releases/R-0001.md").read_text()
    assert "> I can never find last month's hotel charge." in notes
    # the second part: two modules, no connection: a plan she accepts, then each action allowed
    assert "the product lead drafts a plan" in result.stdout
    assert "N1 (builder) stops: Create the file src/reimbursed.py" in result.stdout
    assert "N1 expenses builder: done file src/reimbursed.py" in result.stdout
    assert "N2 invoices qa-author: done scenario CH-0002/SC-1" in result.stdout
    assert (folder / "src/reimbursed.py").is_file()
    decisions = yaml.safe_load((folder / "memory/decisions.yaml").read_text())
    assert decisions[-1]["kind"] == "accept-plan" and decisions[-1]["change"] == "CH-0002"


def test_the_demos_last_line_works_in_a_shell_whose_path_has_no_sdd(tmp_path: Path) -> None:
    import subprocess

    folder = tmp_path / "demo folder"  # a space, too: the line quotes what it names
    result = run_cli("demo", "--dir", str(folder), cwd=tmp_path, env={"SDD_PROVIDER": ""})
    assert result.returncode == 0, result.stderr
    [line] = [x for x in result.stdout.splitlines() if x.startswith("Look around: ")]
    command = line.removeprefix("Look around: ")
    shell = subprocess.run(
        ["bash", "-c", command], env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert shell.returncode == 0, (command, shell.stderr)
    assert "spec-steward" in shell.stdout and "N1" in shell.stdout


def test_demo_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    result = run_cli("demo", "--dir", str(tmp_path / "busy"), cwd=tmp_path)
    assert result.returncode == 2
    assert "is not empty" in result.stderr
