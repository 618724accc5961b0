"""`sdd config show [--origin] [--json]`: her merged settings, and where each value is from."""

from __future__ import annotations

import json

from sdd_git.root import Root
from sdd_git.settings import local_config_file, user_config_file
from tests.conftest import SddRunner, run_cli


def _layers(root: Root) -> None:
    user = user_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        "approvals: {timeout: 3m}\n"
        "provider: {headers: {api-key: $AZURE_KEY, X-Plain: sk-literal-secret-value}}\n"
        "models: {mine: {kind: openai, model: gpt-x}}\n",
        encoding="utf-8",
    )
    local_config_file(root).write_text("messaging: off\n", encoding="utf-8")


def test_config_show_prints_the_merged_settings(root: Root, sdd: SddRunner) -> None:
    _layers(root)
    result = sdd("config", "show")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "messaging=false" in lines  # the local layer wins
    assert "approvals.timeout=10m" in lines  # the repo is above her user file
    assert "models.mine.kind=openai" in lines
    assert "provider.model=gpt-4.1-mini" in lines


def test_config_show_origin_names_each_values_file(root: Root, sdd: SddRunner) -> None:
    _layers(root)
    result = sdd("config", "show", "--origin")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert ".sdd/config.local.yaml\tmessaging=false" in lines
    assert ".sdd/config.yaml\tprovider.kind=openai" in lines
    assert f"{user_config_file()}\tmodels.mine.model=gpt-x" in lines


def test_config_show_json_has_key_value_origin(root: Root, sdd: SddRunner) -> None:
    _layers(root)
    result = sdd("config", "show", "--json")
    document = json.loads(result.stdout)
    by_key = {item["key"]: item for item in document}
    assert by_key["messaging"] == {
        "key": "messaging",
        "value": False,
        "origin": str(local_config_file(root)),
        "layer": "local",
    }
    assert by_key["models.mine.model"]["origin"] == str(user_config_file())
    assert by_key["roles.max_grantable_delegation"]["value"] is None
    # a header that names a variable is shown; one written out may be a key, and is not
    assert by_key["provider.headers.api-key"]["value"] == "$AZURE_KEY"
    assert by_key["provider.headers.X-Plain"]["value"] == "[secret]"
    assert "sk-literal-secret-value" not in result.stdout


def test_config_show_outside_a_root_says_so(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    done = run_cli("config", "show", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error: not inside an sdd root")


def test_a_broken_layer_is_an_error_naming_it(root: Root, sdd: SddRunner) -> None:
    local_config_file(root).write_text("messaging: [unclosed\n", encoding="utf-8")
    result = sdd("config", "show")
    assert result.code == 1
    assert result.stderr.startswith("error: .sdd/config.local.yaml:")
    assert "Traceback" not in result.stderr


def test_role_list_reads_the_layers_without_importing_keyring_or_platformdirs(root: Root) -> None:
    import subprocess
    import sys

    user = user_config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("roles: {default_depth_cutoff: 2}\n", encoding="utf-8")
    probe = (
        "import sys\n"
        "from sdd_git.cli.main import main\n"
        "try:\n    main(['role', 'list'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('keyring', 'platformdirs', 'http.client') if m in sys.modules],"
        " file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=root.path, capture_output=True, text=True, check=True
    )
    assert done.stderr.strip().splitlines()[-1] == "[]"
