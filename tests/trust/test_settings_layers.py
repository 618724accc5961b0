"""Every settings layer grants, and is confirmed as `.sdd/config.yaml` is: her user file (keyed by
its absolute path in this product's ledger) and `.sdd/config.local.yaml` (CONTRACT §13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.root import Root
from sdd_git.runner import trusted
from sdd_git.settings import local_config_file, user_config_file
from sdd_git.trust import ledger as trust_ledger
from sdd_git.trust.pending import (
    WaitsForHer,
    ledger_for,
    record_layer,
    require_settings,
    settings_items,
)
from tests.conftest import SddRunner


def _user(text: str) -> Path:
    path = user_config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_fresh_root_confirms_its_own_settings_and_no_layer_waits(root: Root) -> None:
    assert settings_items(root, ledger_for(root)) == []


def test_an_unconfirmed_user_file_is_listed_with_what_it_grants(root: Root, sdd: SddRunner) -> None:
    path = _user("provider: {base_url: 'http://10.9.9.9/v1', api_key_env: MY_KEY}\n")
    [item] = settings_items(root, ledger_for(root))
    assert item.key == str(path) and item.kind == "settings"
    review = sdd("trust", "review")
    assert review.code == 0
    assert f"{path}  (settings)" in review.stdout
    assert "its address becomes `http://10.9.9.9/v1`" in review.stdout
    assert "reads its key from the variable `MY_KEY`" in review.stdout
    [shown] = json.loads(sdd("trust", "review", "--json").stdout)
    assert shown["path"] == str(path) and shown["kind"] == "settings"


def test_an_unconfirmed_local_file_waits_and_is_accepted_by_its_path(
    root: Root, sdd: SddRunner
) -> None:
    local_config_file(root).write_text("provider: {base_url: 'http://10.1.1.1/v1'}\n")
    with pytest.raises(WaitsForHer) as waits:
        require_settings(root, "sending the model's key")
    assert "your local settings (.sdd/config.local.yaml)" in waits.value.message
    with pytest.raises(WaitsForHer):
        trusted.require(root, [])  # every run, routine, handoff and network node asks this
    accepted = sdd("trust", "accept", ".sdd/config.local.yaml")
    assert accepted.code == 0, accepted.stderr
    require_settings(root, "sending the model's key")  # confirmed: nothing waits
    local_config_file(root).write_text("provider: {base_url: 'http://10.1.1.2/v1'}\n")
    [item] = settings_items(root, ledger_for(root))
    assert any("http://10.1.1.2/v1" in change for change in item.changes)


def test_the_user_file_is_accepted_by_any_spelling_of_its_path(root: Root, sdd: SddRunner) -> None:
    path = _user("messaging: off\n")
    relative = Path("..") / Path(*[".."] * (len(root.path.parts) - 1)) / path.relative_to("/")
    accepted = sdd("trust", "accept", str(relative))
    assert accepted.code == 0, accepted.stderr
    assert trust_ledger.read(root).confirmed(str(path), {"messaging": False})
    assert sdd("trust", "review").stdout.startswith("nothing waits")
    assert sdd("trust", "forget", str(path)).code == 0
    assert settings_items(root, ledger_for(root))[0].key == str(path)


def test_a_person_command_that_writes_a_layer_records_it(root: Root) -> None:
    path = _user("")
    record_layer(root, path, None, "sdd keys set", existed=False)
    assert settings_items(root, ledger_for(root)) == []
    # a change she did not make with a command is not hers until she confirms it
    path.write_text("models: {fast: {kind: openai, model: m, base_url: 'http://x.example'}}\n")
    assert [i.key for i in settings_items(root, ledger_for(root))] == [str(path)]
    # and a command does not confirm in passing what it did not write
    before = {"models": {"fast": {"kind": "openai", "model": "m", "base_url": "http://x.example"}}}
    path.write_text("models: {}\n")
    record_layer(root, path, before, "sdd keys set", existed=True)
    assert [i.key for i in settings_items(root, ledger_for(root))] == [str(path)]


def test_each_product_confirms_her_user_file_for_itself(tmp_path: Path, root: Root) -> None:
    from sdd_git.records.person import init as init_root

    path = _user("messaging: off\n")
    record_layer(root, path, None, "test", existed=False)
    other = init_root(tmp_path / "other", product="Other").root
    assert settings_items(root, ledger_for(root)) == []
    assert [i.key for i in settings_items(other, ledger_for(other))] == [str(path)]
