from __future__ import annotations

from pathlib import Path

import yaml

from sdd_git.root import find_root, init_root
from tests.conftest import SddRunner, git, run_cli


def test_init_creates_the_layout_runs_git_init_and_commits_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "new-product"
    report = init_root(folder, product="Expenses")

    assert report.git_initialized
    assert (folder / ".git").is_dir()
    for sub in ("memory/specs", "memory/releases", "changes", ".sdd/roles", ".sdd/skills"):
        assert (folder / sub).is_dir(), sub
    config = yaml.safe_load((folder / ".sdd/config.yaml").read_text())
    assert config["provider"] == {
        "kind": "openai",
        "model": "gpt-4.1-mini",
        "base_url": None,
        "api_key_env": "OPENAI_API_KEY",
    }
    assert config["approvals"] == {"timeout": "10m"}
    assert config["messaging"] is True
    assert config["roles"] == {"default_depth_cutoff": 1, "max_grantable_delegation": None}
    assert yaml.safe_load((folder / "memory/product.yaml").read_text())["name"] == "Expenses"
    ignored = (folder / ".gitignore").read_text().splitlines()
    assert ".sdd/role-runs" in ignored and ".sdd/local" in ignored
    assert git(folder, "rev-list", "--all") == ""  # no commit at all


def test_init_is_idempotent_and_keeps_existing_files(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    init_root(folder, product="Expenses")
    (folder / ".sdd/config.yaml").write_text("# mine\nprovider: {kind: script}\n")
    (folder / ".gitignore").write_text("node_modules/\n.sdd/local/\n")

    again = init_root(folder, product=None)

    assert not again.git_initialized
    assert (folder / ".sdd/config.yaml").read_text() == "# mine\nprovider: {kind: script}\n"
    kept = (folder / ".gitignore").read_text().splitlines()
    assert kept[:2] == ["node_modules/", ".sdd/local/"]
    assert kept.count(".sdd/local") == 1 and kept.count(".sdd/role-runs") == 1
    assert init_root(folder, product=None).created == ()


def test_init_inside_an_existing_repository_does_not_run_git_init(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    report = init_root(tmp_path / "sub", product=None)
    assert not report.git_initialized
    assert not (tmp_path / "sub" / ".git").exists()


def test_root_is_found_by_walking_up(tmp_path: Path) -> None:
    init_root(tmp_path / "p", product=None)
    deep = tmp_path / "p" / "src" / "a" / "b"
    deep.mkdir(parents=True)
    assert find_root(deep).path == (tmp_path / "p").resolve()


def test_outside_a_root_every_command_but_init_and_demo_fails(tmp_path: Path) -> None:
    result = run_cli("change", "list", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(
        f"error: not inside an sdd root (no .sdd/config.yaml above {tmp_path}"
    )
    assert "hint:" in result.stderr
    assert "Traceback" not in result.stderr


def test_dash_C_runs_as_if_started_in_dir(tmp_path: Path) -> None:
    init_root(tmp_path / "p", product=None)
    made = run_cli("-C", str(tmp_path / "p"), "change", "new", "Show totals", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip() == "CH-0001"
    assert (tmp_path / "p/changes/CH-0001/change.yaml").exists()


def test_sdd_init_command_prints_the_root(sdd: SddRunner, tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    result = sdd("init", "--product", "Billing", cwd=folder)
    assert result.code == 0
    assert result.stdout.strip() == str(folder.resolve())
    assert "ran git init" in result.stderr
    again = sdd("init", cwd=folder)
    assert "nothing to do" in again.stderr
    assert yaml.safe_load((folder / "memory/product.yaml").read_text())["name"] == "Billing"
