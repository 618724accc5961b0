"""Sign-in: the token comes from the config's variable, then the OS keyring; `sdd connect` asks
on hidden input or borrows from gh, glab or a variable, and keeps it in the keyring, never in the
repository or on screen; with no keyring (CI) it says to use a variable; `sdd disconnect`
removes it. A file keyring under the test's HOME stands in for the OS one."""

from __future__ import annotations

import contextlib
import os
import pty
import select
import stat
import subprocess
import sys
import time
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


def _in_a_terminal(root: Root, answer: bytes, *args: str) -> tuple[int, str]:
    """`sdd ARGS` on a pseudo-terminal: the token question answered once it is asked."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "sdd_git", *args],
        cwd=root.path,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "NO_COLOR": "1"},
        close_fds=True,
    )
    os.close(follower)
    seen, answered = b"", False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
        if not answered and b"(hidden):" in seen:
            os.write(leader, answer)
            answered = True
    code = process.wait(timeout=30)
    with contextlib.suppress(OSError):
        while select.select([leader], [], [], 0.1)[0]:
            chunk = os.read(leader, 4096)
            if not chunk:
                break
            seen += chunk
    os.close(leader)
    return code, seen.decode("utf-8", "replace")


def test_connect_asks_on_hidden_input_and_keeps_the_token_out_of_the_repository(
    root: Root,
) -> None:
    code, said = _in_a_terminal(root, GH_TOKEN.encode() + b"\n", "connect", "github")
    assert code == 0, said
    assert stored("github") == GH_TOKEN
    assert GH_TOKEN not in said  # hidden: never echoed
    config = root.config.read_text()
    assert "github: {}" in config and GH_TOKEN not in config
    assert "added connectors.github to .sdd/config.yaml" in said
    code, again = _in_a_terminal(root, b"ghp_another_token_value_123456\n", "connect", "github")
    assert code == 0 and "added" not in again  # the entry was there already


def test_connect_with_no_terminal_says_to_use_token_from_in_one_error(root: Root) -> None:
    """Piped, in CI or from a script: no GetPassWarning, no exit 130, nothing stored."""
    done = subprocess.run(
        [sys.executable, "-m", "sdd_git", "connect", "github"],
        cwd=root.path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert [line for line in lines if line.startswith("error:")] == [
        "error: there is no terminal to ask for the token of github on; nothing was stored"
    ]
    assert lines[-1].startswith("hint: give it with --token-from: sdd connect github")
    assert "Warning" not in done.stderr and "Traceback" not in done.stderr
    assert stored("github") is None and "connectors" not in root.config.read_text()


def test_with_no_keyring_connect_says_so_before_asking_for_the_token(
    root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")  # the child's
    code, said = _in_a_terminal(root, GH_TOKEN.encode() + b"\n", "connect", "github")
    assert code == 1, said
    assert "there is no OS keyring here" in said
    assert "(hidden)" not in said  # never asked: she does not paste a token for nothing
    assert "connectors" not in root.config.read_text()


def test_connect_to_a_self_hosted_service_needs_its_address(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JIRA_TOKEN_FOR_TEST", "t0ken-for-jira")
    refused = sdd("connect", "jira", "--token-from", "env:JIRA_TOKEN_FOR_TEST")
    assert refused.code == 2 and "--base-url https://acme.atlassian.net" in refused.stderr
    assert stored("jira") is None
    done = sdd("connect", "jira", "--base-url", "https://acme.atlassian.net",
               "--token-from", "env:JIRA_TOKEN_FOR_TEST")  # fmt: skip
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
