"""Her settings in three layers: her user file, the product's `.sdd/config.yaml` and the
gitignored `.sdd/config.local.yaml`, merged key by key, each value's file known."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sdd_git.config import messaging_on, roles_config
from sdd_git.errors import RecordError
from sdd_git.providers.base import ProviderError
from sdd_git.providers.select import settings_for
from sdd_git.root import Root
from sdd_git.settings import (
    LOCAL,
    REPO,
    USER,
    local_config_file,
    merge,
    settings,
    user_config_file,
)


def write_user(text: str) -> Path:
    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_local(root: Root, text: str) -> Path:
    path = local_config_file(root)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_user_file_is_where_platformdirs_says(isolated_home: Path) -> None:
    import platformdirs

    assert user_config_file() == Path(platformdirs.user_config_dir("sdd")) / "config.yaml"
    assert user_config_file() == isolated_home / ".config" / "sdd" / "config.yaml"


def test_xdg_config_home_moves_the_user_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
    assert user_config_file() == tmp_path / "elsewhere" / "sdd" / "config.yaml"


def test_later_layers_win_mappings_merge_key_by_key_lists_whole(root: Root) -> None:
    write_user(
        "approvals: {timeout: 5m}\n"
        "roles: {default_depth_cutoff: 3}\n"
        "watch: {build_results: [a.xml, b.xml]}\n"
        "models: {mine: {kind: openai, model: gpt-x}}\n"
    )
    write_local(root, "approvals: {timeout: 1m}\nwatch: {build_results: [c.xml]}\n")
    found = settings(root)
    assert [layer.name for layer in found.layers] == [USER, REPO, LOCAL]
    assert found.data["approvals"] == {"timeout": "1m"}  # local over repo over user
    # roles: the repo's own keys, and the user's cutoff below them where the repo says it too
    assert found.data["roles"]["default_depth_cutoff"] == 1
    assert found.data["watch"] == {"build_results": ["c.xml"]}  # a list is replaced whole
    assert found.data["models"] == {"mine": {"kind": "openai", "model": "gpt-x"}}
    assert found.origin("approvals", "timeout").name == LOCAL  # type: ignore[union-attr]
    assert found.origin("models", "mine").name == USER  # type: ignore[union-attr]
    assert found.origin("messaging").name == REPO  # type: ignore[union-attr]


def test_merge_keeps_nested_keys_and_replaces_another_kind_whole() -> None:
    base = {"provider": {"kind": "openai", "model": "a", "base_url": "http://x"}, "n": [1]}
    assert merge(base, {"provider": {"model": "b"}}) == {
        "provider": {"kind": "openai", "model": "b", "base_url": "http://x"},
        "n": [1],
    }
    # settings written for openai lend nothing to anthropic
    assert merge(base, {"provider": {"kind": "anthropic"}})["provider"] == {"kind": "anthropic"}


def test_every_reader_sees_the_layers(root: Root) -> None:
    write_local(root, "messaging: off\nroles: {max_grantable_delegation: 50}\n")
    assert messaging_on(root) is False
    assert roles_config(root).max_grantable_delegation == 50.0
    write_user("provider: {kind: openai, model: from-user, timeout: 7}\n")
    chosen = settings_for(root, None)
    assert chosen.model == "gpt-4.1-mini"  # the repo's model is above the user's
    assert chosen.timeout == 7.0  # what the repo does not say comes from her user file


def test_a_bad_value_names_the_file_and_line_of_its_layer(root: Root) -> None:
    local = write_local(root, "# mine\nmessaging: perhaps\n")
    with pytest.raises(RecordError) as caught:
        messaging_on(root)
    assert caught.value.message.startswith(f"{os.path.relpath(local, Path.cwd())}:2:") or (
        caught.value.message.startswith(f"{local}:2:")
    )
    local.unlink()
    user = write_user("provider:\n  kind: openai\n  timout: 5\n")
    with pytest.raises(ProviderError) as bad:
        settings_for(root, None)
    assert f"{user}:3: unknown key 'provider.timout'" in bad.value.message
    assert "did you mean 'timeout'" in (bad.value.hint or "")


def test_a_layer_that_is_not_a_mapping_is_an_error_with_its_file(root: Root) -> None:
    user = write_user("- just\n- a list\n")
    with pytest.raises(RecordError) as caught:
        settings(root)
    assert f"{user}:1: expected a mapping" in caught.value.message


def test_an_empty_user_or_local_file_is_no_settings(root: Root) -> None:
    write_user("")
    write_local(root, "# nothing yet\n")
    assert settings(root).data["messaging"] is True


def test_sdd_init_ignores_the_local_layer(tmp_path: Path, root: Root) -> None:
    write_local(root, "messaging: off\n")
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", ".sdd/config.local.yaml"],
        cwd=root.path, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert status.startswith("!! .sdd/config.local.yaml")


def test_a_change_to_a_layer_is_read_again(root: Root) -> None:
    write_local(root, "messaging: off\n")
    assert messaging_on(root) is False
    write_local(root, "messaging: on\nmain_branch: trunk\n")
    assert messaging_on(root) is True
