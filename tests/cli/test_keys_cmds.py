"""`sdd keys set | list | remove NAME`: model keys in a real keyring (keyrings.alt's plain file
backend, in the test's own XDG_DATA_HOME), each sent only to the host it was set for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyrings.alt.file import PlaintextKeyring

from sdd_git.personcommands import person_command
from sdd_git.providers.base import ProviderRequest
from sdd_git.providers.select import make_provider, settings_for
from sdd_git.root import Root
from sdd_git.settings import user_config_file
from sdd_git.trust.pending import ledger_for, settings_items
from tests.conftest import SddRunner, run_cli
from tests.providers.loopback import PROXY_VARIABLES, Loopback, serve

KEY = "sk-kept-Wq4Zr8Tm2Xv6Pn9Kb3"


@pytest.fixture(autouse=True)
def file_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A real keyring backend in a file under this test's XDG_DATA_HOME (its children too)."""
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    before = keyring.get_keyring()
    backend = PlaintextKeyring()  # type: ignore[no-untyped-call]
    keyring.set_keyring(backend)
    yield Path(backend.file_path)
    keyring.set_keyring(before)


def kept(name: str) -> str | None:
    """What the keyring file holds for model key NAME, read by a fresh backend."""
    return PlaintextKeyring().get_password("sdd-git", f"model-key/{name}")  # type: ignore[no-untyped-call]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[Loopback]:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with serve() as loopback:
        yield loopback


def test_set_reads_the_key_from_stdin_and_list_shows_names_and_hosts_only(
    root: Root, sdd: SddRunner, file_keyring: Path
) -> None:
    done = sdd("keys", "set", "openai", input=KEY + "\n")
    assert done.code == 0, done.stderr
    assert "for api.openai.com" in done.stderr  # the configured provider's base_url
    assert KEY not in done.stdout + done.stderr
    assert kept("openai") == KEY  # kept in the keyring ...
    user = user_config_file().read_text()
    assert KEY not in user and "https://api.openai.com/v1" in user  # ... the host in her file
    listed = sdd("keys", "list", "--json")
    assert json.loads(listed.stdout) == [
        {"name": "openai", "url": "https://api.openai.com/v1", "host": "api.openai.com",
         "stored": True}
    ]  # fmt: skip
    shown = sdd("keys", "list")
    assert "openai" in shown.stdout and "api.openai.com" in shown.stdout
    assert KEY not in shown.stdout + listed.stdout
    # the command wrote her user file, and recorded it as hers in this product
    assert settings_items(root, ledger_for(root)) == []


def test_the_key_is_never_read_from_the_command_line(sdd: SddRunner) -> None:
    refused = sdd("keys", "set", "openai", KEY)
    assert refused.code == 2  # no such argument: a key in argv would sit in her shell history


def test_remove_deletes_the_key_and_its_host(
    root: Root, sdd: SddRunner, file_keyring: Path
) -> None:
    assert sdd("keys", "set", "work", "--for-url", "https://llm.example/v1", input=KEY).code == 0
    assert sdd("keys", "remove", "work").code == 0
    assert kept("work") is None
    assert json.loads(sdd("keys", "list", "--json").stdout) == []
    again = sdd("keys", "remove", "work")
    assert again.code == 2 and "no model key work is kept" in again.stderr


def test_a_stored_key_goes_to_its_host_and_to_no_other(
    root: Root, sdd: SddRunner, server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    root.config.write_text(
        f"provider: {{kind: openai, model: m, base_url: '{server.url}/v1', api_key_env: MY_KEY}}\n"
    )
    from tests.trusthelp import confirm

    confirm(root)
    assert sdd("keys", "set", "local", input=KEY).code == 0  # for the configured base_url
    chosen = settings_for(root, None)
    assert chosen.key == KEY and chosen.key_source == "keyring:local"
    server.reply(body={"choices": [{"message": {"role": "assistant", "content": "ok"}}]})
    messages = [{"role": "user", "content": "Hi"}]
    make_provider(chosen).complete(ProviderRequest("builder", "run-1", 1, messages, []))
    assert server.last.headers["authorization"] == f"Bearer {KEY}"
    # a variable that gives a key wins over the keyring
    monkeypatch.setenv("MY_KEY", "sk-from-variable-123456")
    assert settings_for(root, None).key == "sk-from-variable-123456"
    monkeypatch.delenv("MY_KEY")
    # another host never gets it: a role naming its own server, or another base_url
    other = settings_for(root, {"kind": "openai", "model": "m", "base_url": "http://x.example"})
    assert other.key is None
    root.config.write_text("provider: {kind: openai, model: m, base_url: 'http://y.example/v1'}\n")
    assert settings_for(root, None).key is None


def test_a_key_set_in_one_product_waits_for_her_in_another(
    tmp_path: Path, root: Root, sdd: SddRunner
) -> None:
    from sdd_git.records.person import init as init_root

    assert sdd("keys", "set", "openai", input=KEY).code == 0
    other = init_root(tmp_path / "other", product="Other").root
    [item] = settings_items(other, ledger_for(other))
    assert item.key == str(user_config_file())
    assert any("model_keys" in change for change in item.changes)


def test_keys_is_a_person_command_refused_to_roles() -> None:
    assert person_command(["keys", "set", "openai"]) == "keys"
    assert person_command(["keys", "list"]) == "keys"


def test_keys_set_inside_a_role_run_is_refused(root: Root) -> None:
    done = run_cli("keys", "set", "openai", cwd=root.path, env={"SDD_RUN_ID": "run-x"})
    assert done.returncode != 0
    assert not user_config_file().exists()


def test_a_short_or_empty_key_is_refused_and_nothing_is_written(sdd: SddRunner) -> None:
    short = sdd("keys", "set", "openai", input="abc\n")
    assert short.code == 2 and "shorter than 8" in short.stderr
    empty = sdd("keys", "set", "openai", input="\n")
    assert empty.code == 2 and "no key was given" in empty.stderr
    assert not user_config_file().exists()


def test_keys_set_in_a_real_process_reads_stdin(root: Root, file_keyring: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "sdd_git", "keys", "set", "anthropic", "--for-url",
         "https://api.anthropic.com"],
        cwd=root.path, input=KEY + "\n", capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert kept("anthropic") == KEY
    assert KEY not in done.stdout + done.stderr
