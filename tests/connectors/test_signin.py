"""Sign-in: the token comes from the config's variable, then the OS keyring; `sdd connect` asks
on hidden input or borrows from gh, glab or a variable, and keeps it in the keyring, never in the
repository or on screen; with no keyring (CI) it says to use a variable; `sdd disconnect`
removes it. A file keyring under the test's HOME stands in for the OS one."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail

from sdd_git.connectors.config import ConnectorConfig
from sdd_git.connectors.signin import KEYRING_SERVICE, find_token, store_token
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.connectors.core_support import GH_TOKEN, TOKEN_VARIABLE, configure, file_keyring

__all__ = ["file_keyring"]

GITHUB = ConnectorConfig("github", "github", "https://api.github.com", TOKEN_VARIABLE)


def stored(name: str) -> str | None:
    return keyring.get_password(KEYRING_SERVICE, name)


def test_the_variable_comes_first_then_the_keyring(monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_token(GITHUB).value is None
    store_token("github", "from-the-keyring-123")
    assert find_token(GITHUB) == find_token(GITHUB)  # stable
    assert (find_token(GITHUB).value, find_token(GITHUB).source) == (
        "from-the-keyring-123",
        "keyring",
    )
    monkeypatch.setenv(TOKEN_VARIABLE, GH_TOKEN)
    token = find_token(GITHUB)
    assert (token.value, token.source) == (GH_TOKEN, f"env {TOKEN_VARIABLE}")


def test_connect_asks_on_hidden_input_and_keeps_the_token_out_of_the_repository(
    sdd: SddRunner, root: Root
) -> None:
    result = sdd("connect", "github", input=GH_TOKEN + "\n")
    assert result.code == 0, result.stderr
    assert stored("github") == GH_TOKEN
    assert GH_TOKEN not in result.stdout + result.stderr  # hidden: never echoed
    config = root.config.read_text()
    assert "github: {}" in config and GH_TOKEN not in config
    assert "added connectors.github to .sdd/config.yaml" in result.stderr
    again = sdd("connect", "github", input="ghp_another_token_value_123456\n")
    assert again.code == 0 and "added" not in again.stderr  # the entry was there already


def test_connect_to_a_self_hosted_service_needs_its_address(sdd: SddRunner, root: Root) -> None:
    refused = sdd("connect", "jira", input="t0ken-for-jira\n")
    assert refused.code == 2 and "--base-url https://acme.atlassian.net" in refused.stderr
    assert stored("jira") is None
    done = sdd("connect", "jira", "--base-url", "https://acme.atlassian.net",
               input="t0ken-for-jira\n")  # fmt: skip
    assert done.code == 0, done.stderr
    assert "jira: {base_url: https://acme.atlassian.net}" in root.config.read_text()
    assert stored("jira") == "t0ken-for-jira"


def fake_tool(folder: Path, name: str, answers: dict[str, str], dump: Path) -> None:
    """A stand-in for gh or glab: prints a token for the commands it knows, and writes down the
    environment it was given."""
    lines = [f"#!/bin/sh\nenv > {dump}\n", 'case "$*" in\n']
    for args, token in answers.items():
        lines.append(f'  "{args}") echo "{token}"; exit 0;;\n')
    lines.append('  *) echo "unknown command: $*" >&2; exit 1;;\nesac\n')
    path = folder / name
    path.write_text("".join(lines))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_connect_borrows_the_gh_token_with_a_scrubbed_environment(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir, dump = tmp_path / "bin", tmp_path / "gh.env"
    bin_dir.mkdir()
    fake_tool(bin_dir, "gh", {"auth token": GH_TOKEN}, dump)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DEPLOY_KEY", "some-other-secret-value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-gh-0123456789")
    result = sdd("connect", "github", "--token-from", "gh")
    assert result.code == 0, result.stderr
    assert stored("github") == GH_TOKEN
    assert GH_TOKEN not in result.stdout + result.stderr
    given = dump.read_text()
    assert "DEPLOY_KEY" not in given and "OPENAI_API_KEY" not in given
    assert "GH_PROMPT_DISABLED=1" in given and "PATH=" in given


def test_connect_borrows_the_glab_token(
    sdd: SddRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    token = "glpat-Zz9Yy8Xx7Ww6Vv5Uu4Tt"
    fake_tool(bin_dir, "glab", {"config get token --host gitlab.com": token}, tmp_path / "env")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = sdd("connect", "gitlab", "--token-from", "glab")
    assert result.code == 0, result.stderr
    assert stored("gitlab") == token and token not in result.stderr


def test_connect_says_so_when_gh_has_no_token(
    sdd: SddRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_tool(bin_dir, "gh", {}, tmp_path / "env")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = sdd("connect", "github", "--token-from", "gh")
    assert result.code == 1 and "gh auth token gave no token" in result.stderr
    assert "gh auth login" in result.stderr and stored("github") is None


def test_connect_borrows_from_a_variable(sdd: SddRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SLACK", "xoxb-4242-1717-QwErTyUiOpAsDfGh")
    result = sdd("connect", "slack", "--token-from", "env:MY_SLACK")
    assert result.code == 0, result.stderr
    assert stored("slack") == "xoxb-4242-1717-QwErTyUiOpAsDfGh"
    empty = sdd("connect", "slack", "--token-from", "env:NOT_SET_AT_ALL")
    assert empty.code == 2 and "$NOT_SET_AT_ALL is empty or not set" in empty.stderr


def test_with_no_keyring_connect_names_the_variable_route(sdd: SddRunner, root: Root) -> None:
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    result = sdd("connect", "github", input=GH_TOKEN + "\n")
    assert result.code == 1
    assert "there is no OS keyring here" in result.stderr
    assert "hint: put the token in an environment variable" in result.stderr
    assert "token_env: GITHUB_TOKEN" in result.stderr
    assert "connectors" not in root.config.read_text()  # nothing written at all


def test_disconnect_removes_the_token(sdd: SddRunner, root: Root) -> None:
    store_token("github", GH_TOKEN)
    configure(root, connectors={"github": {"token_env": TOKEN_VARIABLE}})
    result = sdd("disconnect", "github")
    assert result.code == 0 and "removed the token of github" in result.stderr
    assert f"${TOKEN_VARIABLE} still signs it in" in result.stderr
    assert stored("github") is None
    again = sdd("disconnect", "github")
    assert again.code == 0 and "no token was stored for github" in again.stderr


def test_connect_refuses_inside_a_run(sdd: SddRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDD_RUN_ID", "run-x")
    result = sdd("connect", "github", input=GH_TOKEN + "\n")
    assert result.code == 1 and "inside a role run" in result.stderr
    assert stored("github") is None
    assert sdd("disconnect", "github").code == 1
