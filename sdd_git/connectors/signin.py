"""Sign-in: where a connector's token comes from, and where `sdd connect` keeps it.

In order: the variable the config names (`token_env`: CI and tests), then the OS keyring through
`keyring` (service "sdd-git", user = the connector's name). `keyring` is imported here only, and
only when a token is looked up or stored: `sdd --help` and `sdd role list` never load it.

A token is never written to the repository, a log, a transcript or a model request, and never
given to a child process: `sdd_git.connectors.tokens` masks every connector token, and the run's
child processes never get the variables that hold them. Borrowing a token from `gh` or `glab`
runs them with a scrubbed environment and their output captured, never echoed."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from sdd_git import secretstore
from sdd_git.connectors.base import NotSignedIn
from sdd_git.connectors.config import ConnectorConfig
from sdd_git.errors import UsageError
from sdd_git.secretstore import KEYRING_SERVICE as KEYRING_SERVICE  # re-exported
from sdd_git.secretstore import NoKeyring as NoKeyring  # re-exported

BORROW_TIMEOUT_SECONDS = 30.0
# What gh and glab need to find their own sign-in, and nothing else: no other token, no
# SDD_RUN_ID, no variable a role could have set in the person's shell to steer them.
_BORROW_ENV = (
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
    "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",  # the keyring gh and glab keep their tokens in
    "GH_CONFIG_DIR", "GLAB_CONFIG_DIR", "APPDATA", "LOCALAPPDATA", "SYSTEMROOT", "USERPROFILE",
)  # fmt: skip
_GLAB_STATUS_TOKEN = re.compile(r"Token(?: found)?:\s*(\S+)")


@dataclass(frozen=True)
class Token:
    value: str | None
    source: str  # "env GITHUB_TOKEN", "keyring", or "" when there is none


def find_token(config: ConnectorConfig, environ: Mapping[str, str] | None = None) -> Token:
    """The connector's token: its `token_env` variable first, then the OS keyring."""
    environ = os.environ if environ is None else environ
    # A token has no whitespace: a line break copied with it would only break the request
    # (and an error quoting the header would quote the token).
    if config.token_env and environ.get(config.token_env, "").strip():
        return Token(environ[config.token_env].strip(), f"env {config.token_env}")
    stored = (keyring_token(config.name) or "").strip()
    if stored:
        return Token(stored, "keyring")
    return Token(None, "")


def keyring_token(name: str) -> str | None:
    """The token `sdd connect NAME` stored, or None (also when there is no keyring at all)."""
    return secretstore.get_secret(name)


def require_keyring(name: str) -> None:
    """Refuse at once when there is no OS keyring to keep connector `name`'s token in: before
    she is asked for it (or gh is asked), not after she pasted it."""
    secretstore.require_keyring(_env_route(name))


def store_token(name: str, token: str) -> str:
    """Keep `token` in the OS keyring for connector `name`; gives back the keyring's name."""
    return secretstore.store_secret(name, token, f"the token for {name}", _env_route(name))


def delete_token(name: str) -> bool:
    """Remove connector `name`'s token from the keyring; False when none was there."""
    return secretstore.delete_secret(name, f"the token of {name}")


def _env_route(name: str) -> str:
    variable = re.sub(r"[^A-Z0-9]+", "_", name.upper()) + "_TOKEN"
    return (
        f"put the token in an environment variable and name it in .sdd/config.yaml: "
        f"connectors: {{{name}: {{token_env: {variable}}}}}"
    )


def require_token(config: ConnectorConfig, needs_token: bool, token: Token) -> None:
    """A connector that needs a token and has none cannot be called: said, with both routes."""
    if needs_token and not token.value:
        variable = f"${config.token_env} is empty, and " if config.token_env else ""
        raise NotSignedIn(
            f"{config.name} is not signed in: {variable}no token is stored for it",
            hint=f"sdd connect {config.name}  (or, in CI: {_env_route(config.name)})",
        )


# -- borrowing a token from gh or glab ---------------------------------------------------------


def borrow_token(source: str, config: ConnectorConfig | None) -> str:
    """The token `--token-from` names: `gh` (`gh auth token`), `glab` (its stored token), or
    `env:VAR`. Output is captured and never shown; errors say what failed, not what was read."""
    if source.startswith("env:"):
        variable = source[4:]
        value = os.environ.get(variable, "").strip()
        if not value:
            raise UsageError(
                f"--token-from {source}: ${variable} is empty or not set",
                hint=f"export {variable}=... first, or leave --token-from out to type the token",
            )
        return value
    host = _host(config)
    if source == "gh":
        command = ["gh", "auth", "token"] + (["--hostname", host] if host else [])
        return _run_for_token(command, "gh auth login", lambda out: out.strip())
    if source == "glab":
        gitlab_host = host or "gitlab.com"
        try:
            return _run_for_token(
                ["glab", "config", "get", "token", "--host", gitlab_host],
                "glab auth login",
                lambda out: out.strip(),
            )
        except NotSignedIn:
            # A token glab keeps in the OS keyring is not in its config: its status shows it.
            return _run_for_token(
                ["glab", "auth", "status", "--show-token", "--hostname", gitlab_host],
                "glab auth login",
                _glab_status_token,
                merge_stderr=True,
            )
    raise UsageError(
        f"--token-from takes gh, glab or env:VAR, not {source!r}",
        hint="sdd connect github --token-from gh",
    )


def _host(config: ConnectorConfig | None) -> str | None:
    """The service's host for gh/glab, where it is not the public one (GitHub Enterprise)."""
    if config is None or not config.base_url:
        return None
    host = urlsplit(config.base_url).hostname or ""
    return None if host in ("api.github.com", "github.com", "gitlab.com") else host or None


def _glab_status_token(output: str) -> str:
    match = _GLAB_STATUS_TOKEN.search(output)
    token = match.group(1) if match else ""
    return "" if set(token) <= {"*"} else token


def borrow_environment() -> dict[str, str]:
    env = {k: os.environ[k] for k in _BORROW_ENV if k in os.environ}
    env.update(GH_PROMPT_DISABLED="1", GH_NO_UPDATE_NOTIFIER="1", NO_COLOR="1",
               GLAB_CHECK_UPDATE="false", GLAB_SEND_TELEMETRY="false")  # fmt: skip
    return env


def _run_for_token(
    command: list[str],
    login: str,
    pick: Callable[[str], str],
    merge_stderr: bool = False,
) -> str:
    program = command[0]
    try:
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env=borrow_environment(),
            # Not the product folder: a repository's own tool config is nobody's sign-in.
            cwd=os.path.expanduser("~") if os.path.isdir(os.path.expanduser("~")) else "/",
            timeout=BORROW_TIMEOUT_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError(
            f"{program} is not installed (or not on PATH), so there is no token to borrow",
            hint="leave --token-from out to type the token on hidden input",
        ) from None
    except subprocess.TimeoutExpired:
        raise NotSignedIn(f"{program} did not answer in {BORROW_TIMEOUT_SECONDS:.0f} s") from None
    output = result.stdout + (result.stderr if merge_stderr else "")
    token = pick(output)
    if result.returncode != 0 or not token:
        # Its words are not repeated: a tool's error output could hold the token itself.
        raise NotSignedIn(
            f"{' '.join(command[:3])} gave no token (exit code {result.returncode})",
            hint=f"sign {program} in first ({login}), or leave --token-from out to type it",
        )
    return token
