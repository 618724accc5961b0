from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sdd_git import __version__
from sdd_git.root import Root
from tests.conftest import SddRunner, run_cli


def test_version_and_help_work_outside_a_root(tmp_path: Path) -> None:
    version = run_cli("--version", cwd=tmp_path)
    assert version.returncode == 0 and __version__ in version.stdout
    helped = run_cli("--help", cwd=tmp_path)
    assert helped.returncode == 0
    for name in ("init", "demo", "change", "accept", "release", "next", "complete", "agents"):
        assert f"  {name} " in helped.stdout


def test_help_imports_no_yaml_git_or_record_code(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from sdd_git.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "names = ('yaml', 'ruamel', 'pygit2', 'git', 'sdd_git.records')\n"
        "print([m for m in names if m in sys.modules], file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert result.stderr.strip() == "[]"


def test_change_list_does_not_import_ruamel_or_git(root: Root) -> None:
    probe = (
        "import sys\n"
        "from sdd_git.cli.main import main\n"
        "try:\n    main(['change', 'list'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('ruamel', 'pygit2', 'git') if m in sys.modules], file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=root.path, capture_output=True, text=True, check=True
    )
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_usage_errors_exit_2_with_error_and_hint(sdd: SddRunner) -> None:
    result = sdd("accept", "nothing")
    assert result.code == 2
    assert result.stderr.startswith("error: No such command 'nothing'.")
    assert "hint: see 'sdd accept --help'" in result.stderr


def test_a_missing_argument_is_a_usage_error(sdd: SddRunner) -> None:
    result = sdd("qa", "record", "CH-0001/SC-1", "maybe", "words")
    assert result.code == 2
    assert result.stderr.startswith("error: ")


def test_json_listings_print_one_document_and_nothing_else(sdd: SddRunner) -> None:
    sdd("change", "new", "one")
    for args in (("change", "list"), ("change", "show", "CH-0001"), ("decision", "list")):
        result = sdd(*args, "--json")
        assert result.code == 0
        json.loads(result.stdout)


def test_broken_config_free_commands_never_print_a_traceback(root: Root) -> None:
    (root.path / "changes/CH-0001").mkdir()
    (root.path / "changes/CH-0001/change.yaml").write_text("id: CH-0001\n  stage: : bad\n")
    result = run_cli("change", "list", cwd=root.path)
    assert result.returncode == 1
    assert result.stderr.startswith("error: changes/CH-0001/change.yaml:2:")
    assert "Traceback" not in result.stderr


def test_python_dash_m_works(tmp_path: Path) -> None:
    result = run_cli("--help", cwd=tmp_path)
    assert result.returncode == 0 and "Usage: sdd" in result.stdout
