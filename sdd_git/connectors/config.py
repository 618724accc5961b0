"""The `connectors:` of `.sdd/config.yaml`, validated with file and key.

    connectors:
      github: {token_env: GITHUB_TOKEN, repo: acme/app}        # kind defaults to the name
      work-jira: {kind: jira, base_url: https://acme.atlassian.net, token_env: JIRA_TOKEN}
      fake: {kind: script, like: github, file: tests/github.yaml}
    deploy:
      production: {connector: jenkins, job: deploy-prod, parameters: {ENV: prod}}

`base_url` is the service's API root (documented paths are appended); a service with one
public host has a default. `token_env` names the variable that holds the token (CI, tests);
without one the token comes from the OS keyring (`sdd connect NAME`). `reads` lists operations
of a connector the table does not know (an MCP server's tools) that the person declares reads,
`acts` those she offers as acts (each stops for her); an MCP tool in neither is not offered.
Every other key is kept for the connector as its settings (`repo`, `project`, `command`...).
No token is ever written here: a key that holds one is refused."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sdd_git.errors import RecordError
from sdd_git.paths import display
from sdd_git.root import Root

# Where a service with one public host answers; the others are the team's own servers.
DEFAULT_BASE_URLS: dict[str, str] = {
    "github": "https://api.github.com",
    "gitlab": "https://gitlab.com/api/v4",
    "asana": "https://app.asana.com/api/1.0",
    "slack": "https://slack.com/api",
    "teams": "https://graph.microsoft.com/v1.0",
    "azure-devops": "https://dev.azure.com",
}
# What a self-hosted service's base_url looks like, for the hint when it is missing.
BASE_URL_EXAMPLES: dict[str, str] = {
    "jenkins": "https://jenkins.example.com",
    "artifactory": "https://acme.jfrog.io/artifactory",
    "jira": "https://acme.atlassian.net",
    "aha": "https://acme.aha.io/api/v1",
}
# Kinds that need no base_url: the scripted connector reads a file, MCP names a command or URL.
NO_BASE_URL = ("script", "mcp")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Keys whose value would be a secret: a token is never written into the (committed) config.
_SECRET_KEYS = re.compile(r"^(token|password|secret|api_?key|private_token|access_token)$", re.I)


@dataclass(frozen=True)
class ConnectorConfig:
    """One configured connector."""

    name: str  # as the person named it, what `@NAME` and `connector: NAME` say
    kind: str  # which connector class: github, jira, script, mcp, or a plug-in's name
    base_url: str
    token_env: str | None = None
    reads: tuple[str, ...] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)  # every other key
    acts: tuple[str, ...] = ()

    @property
    def table_kind(self) -> str:
        """Whose rows of the operation table classify its calls: its kind, or for the
        scripted connector the kind it stands in for (`like: github`)."""
        like = self.settings.get("like")
        return like if self.kind == "script" and isinstance(like, str) and like else self.kind


@dataclass(frozen=True)
class DeployTarget:
    """`deploy: {NAME: {connector: C, job: J, parameters: {...}}}`, or `{connector: C,
    operation: O, args: {...}}` for any connector."""

    name: str
    connector: str
    operation: str | None
    args: Mapping[str, Any]


def _where(root: Root, *keys: str) -> str:
    """The file (and line) the setting at `keys` came from: one of her settings' layers."""
    from sdd_git.settings import settings

    return settings(root).file_of(*keys) if keys else display(root.config)


def _raw(root: Root) -> dict[str, Any]:
    from sdd_git.settings import settings

    return settings(root).data


def load_connectors(root: Root) -> dict[str, ConnectorConfig]:
    """Every configured connector, in the order the file names them."""
    section = _raw(root).get("connectors")
    if section is None:
        return {}
    if not isinstance(section, dict):
        raise RecordError(
            f"{_where(root, 'connectors')}: key 'connectors' must be a mapping of names to "
            "settings",
            hint="connectors: {github: {token_env: GITHUB_TOKEN}}",
        )
    return {
        str(name): _one(_where(root, "connectors", str(name)), str(name), value)
        for name, value in section.items()
    }


def _one(where: str, name: str, value: Any) -> ConnectorConfig:
    key = f"connectors.{name}"
    if not _NAME.match(name):
        raise RecordError(
            f"{where}: key '{key}': a connector's name is lowercase letters, digits, '-' and "
            "'_', 1-40 characters",
            hint="connectors: {github: {...}, work-jira: {kind: jira, ...}}",
        )
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise RecordError(
            f"{where}: key '{key}' must be a mapping of settings, not {value!r}",
            hint=f"connectors: {{{name}: {{token_env: TOKEN_VARIABLE}}}}",
        )
    kind = value.get("kind", name)
    if not isinstance(kind, str) or not _NAME.match(kind):
        raise RecordError(
            f"{where}: key '{key}.kind' must be a connector kind such as github, not {kind!r}",
            hint="kinds: github, gitlab, jenkins, artifactory, jira, aha, asana, azure-devops, "
            "slack, teams, mcp, script",
        )
    base_url = value.get("base_url")
    if base_url is None:
        base_url = DEFAULT_BASE_URLS.get(kind, "")
    if not isinstance(base_url, str):
        raise RecordError(f"{where}: key '{key}.base_url' must be a URL, not {base_url!r}")
    if base_url:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise RecordError(
                f"{where}: key '{key}.base_url' must be an http(s) URL, not {base_url!r}",
                hint=f"{key}.base_url: {BASE_URL_EXAMPLES.get(kind, 'https://api.example.com')}",
            )
        if parts.username or parts.password:
            raise RecordError(
                f"{where}: key '{key}.base_url' holds a sign-in; tokens never live in the config",
                hint=f"name a variable instead ({key}.token_env: VAR), or run: sdd connect {name}",
            )
    token_env = value.get("token_env")
    if token_env is not None and (not isinstance(token_env, str) or not _VARIABLE.match(token_env)):
        raise RecordError(
            f"{where}: key '{key}.token_env' must name an environment variable, not {token_env!r}",
            hint=f"{key}.token_env: GITHUB_TOKEN",
        )
    secret = _secret_in(value)
    if secret is not None:
        raise RecordError(
            f"{where}: key '{key}.{secret}' would put a token into the config, which is "
            "committed; tokens never live in the repository",
            hint=f"name a variable instead ({key}.token_env: VAR), or run: sdd connect {name}",
        )
    _refuse_misspelt(where, key, value, kind)  # after the token check: that says more
    reads, acts = (_names(where, key, value, k) for k in ("reads", "acts"))
    settings = {
        str(k): v
        for k, v in value.items()
        if k not in ("kind", "base_url", "token_env", "reads", "acts")
    }
    if _names_x(name, kind, [base_url, *(v for v in settings.values() if isinstance(v, str))]):
        raise RecordError(
            f"{where}: key '{key}' points at X, the social network; no connector reads or "
            "posts on X",
            hint="sdd works with your product's repository and its development tools only",
        )
    if kind == "script" and not isinstance(settings.get("file"), str):
        raise RecordError(
            f"{where}: key '{key}.file' must name the script of canned answers",
            hint=f"{key}: {{kind: script, like: github, file: tests/github.yaml}}",
        )
    return ConnectorConfig(name, kind, base_url, token_env, reads, settings, acts)


# The keys sdd reads for every connector, and those its own connectors read from the rest.
COMMON_KEYS = ("kind", "base_url", "token_env", "reads", "acts")
BUILTIN_SETTING_KEYS = (
    "args", "command", "cwd", "email", "env", "file", "like", "needs_token", "organization",
    "project", "repo", "root", "sandbox", "team", "timeout", "token_as", "url", "user",
)  # fmt: skip


def _refuse_misspelt(where: str, key: str, value: dict[str, Any], kind: str) -> None:
    """A key that is a misspelling of a known one (`tokn_env`) is refused with the right one,
    as settings' and role files' are: kept as a setting nobody reads, the token would silently
    come from elsewhere. A plug-in's own keys are its own; only sdd's common keys are checked
    against them."""
    from sdd_git.config import did_you_mean
    from sdd_git.connectors.kinds import BUILTIN

    known = COMMON_KEYS + (BUILTIN_SETTING_KEYS if kind in BUILTIN else ())
    for name in value:
        if str(name) in known:
            continue
        close = did_you_mean(str(name), known)
        if close is not None:
            raise RecordError(
                f"{where}: unknown key '{key}.{name}': did you mean '{close}'?",
                hint=f"rename it: {key}.{close}",
            )


def _names(where: str, key: str, value: dict[str, Any], part: str) -> tuple[str, ...]:
    """`reads:` or `acts:` of one connector: a list of operation names (or one comma-joined)."""
    names = value.get(part, [])
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        example = "[search_docs, get_page]" if part == "reads" else "[rename_page]"
        raise RecordError(
            f"{where}: key '{key}.{part}' must be a list of operation names",
            hint=f"{key}.{part}: {example}",
        )
    return tuple(names)


def _secret_in(value: Any, path: str = "") -> str | None:
    """The key (dotted) under which `value` holds a token, or None: a key named for a secret
    (`token`, `api_token`, `pat`...) with a value, or a value shaped like a known token or
    holding one (`Bearer ghp_...`) under any key. `token_env`, `token_as` and `$VARIABLE`
    references name a secret without holding it."""
    from sdd_git.masking.masker import looks_like_credential
    from sdd_git.masking.returned import is_secret_key, mask_returned

    if isinstance(value, Mapping):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            words = str(k)
            if words in ("token_env", "token_as"):
                continue
            if _SECRET_KEYS.match(words) and v not in (None, "") and not _reference(v):
                return where
            named = is_secret_key(words) or words.lower() == "pat"
            if named and isinstance(v, str) and looks_like_credential(v) and not _reference(v):
                return where
            found = _secret_in(v, where)
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        for v in value:
            found = _secret_in(v, path)
            if found is not None:
                return found
        return None
    if isinstance(value, str) and mask_returned(value) != value:
        return path or "?"
    return None


def _reference(value: Any) -> bool:
    """`$NAME` or `${NAME}`: a variable named, not a value written."""
    return isinstance(value, str) and bool(re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", value))


_X_HOSTS = ("x.com", "twitter.com", "t.co", "twimg.com")


def _names_x(name: str, kind: str, values: list[str]) -> bool:
    """A connector to X (by its name, its kind or an address of one of X's hosts)."""
    if {name, kind} & {"x", "twitter"}:
        return True
    return any(on_x(value) for value in values if "://" in value)


def on_x(value: str) -> bool:
    """Whether `value` is an address on one of X's hosts (`https://x.com/...`, `t.co/abc`)."""
    text = value.strip()
    if not text:
        return False
    try:
        host = (urlsplit(text if "://" in text else "//" + text).hostname or "").lower()
    except ValueError:
        return False
    host = host.rstrip(".")
    return any(host == h or host.endswith("." + h) for h in _X_HOSTS)


def find_connector(root: Root, name: str) -> ConnectorConfig:
    """The configured connector `name`, or an error that lists the configured ones."""
    found = load_connectors(root)
    if name in found:
        return found[name]
    listed = ", ".join(found) or "none yet"
    raise RecordError(
        f"no connector '{name}' in {_where(root)} (configured: {listed})",
        hint=f"add it: connectors: {{{name}: {{token_env: VAR}}}} in .sdd/config.yaml, "
        f"or sign in with: sdd connect {name}",
    )


def require_base_url(root: Root, config: ConnectorConfig) -> None:
    """A self-hosted service needs to be told where it is."""
    if config.base_url or config.kind in NO_BASE_URL:
        return
    example = BASE_URL_EXAMPLES.get(config.kind, "https://api.example.com")
    raise RecordError(
        f"{_where(root, 'connectors', config.name)}: connector '{config.name}' "
        f"({config.kind}) has no base_url",
        hint=f"connectors: {{{config.name}: {{base_url: {example}}}}}",
    )


def code_host(root: Root) -> ConnectorConfig | None:
    """The connector that opens and merges pull requests: the first configured of kind github,
    then gitlab (a scripted stand-in for one counts as one)."""
    found = load_connectors(root).values()
    for kind in ("github", "gitlab"):
        for config in found:
            if config.table_kind == kind:
                return config
    return None


def deploy_targets(root: Root) -> dict[str, DeployTarget]:
    """`deploy:` of the config: where `deploy {target}` goes, through which connector."""
    section = _raw(root).get("deploy")
    if section is None:
        return {}
    where = _where(root, "deploy")
    example = "deploy: {production: {connector: jenkins, job: deploy-prod}}"
    if not isinstance(section, dict):
        raise RecordError(f"{where}: key 'deploy' must be a mapping of targets", hint=example)
    targets: dict[str, DeployTarget] = {}
    for name, value in section.items():
        key = f"deploy.{name}"
        if not isinstance(value, dict) or not isinstance(value.get("connector"), str):
            raise RecordError(f"{where}: key '{key}' must name its connector", hint=example)
        operation = value.get("operation")
        if operation is not None and not isinstance(operation, str):
            raise RecordError(f"{where}: key '{key}.operation' must be an operation name")
        args = value.get("args")
        if args is None:
            args = {k: v for k, v in value.items() if k not in ("connector", "operation")}
        if not isinstance(args, dict):
            raise RecordError(f"{where}: key '{key}.args' must be a mapping")
        targets[str(name)] = DeployTarget(str(name), value["connector"], operation, args)
    return targets


# How `deploy {target}` starts a target of each kind when its config names no operation.
DEFAULT_DEPLOY_OPERATIONS = {"jenkins": "trigger_build", "artifactory": "promote_build"}


def deploy_operation(target: DeployTarget, kind: str) -> str:
    return target.operation or DEFAULT_DEPLOY_OPERATIONS.get(kind, "deploy")


def main_branch(root: Root) -> str:
    value = _raw(root).get("main_branch")
    return value if isinstance(value, str) and value else "main"


def token_sources(root: Root) -> list[tuple[str, str | None]]:
    """(name, token_env) of every configured connector, read leniently: this feeds the masker,
    which must work even while the rest of the config is broken."""
    try:
        section = _raw(root).get("connectors")
    except RecordError:
        return []
    if not isinstance(section, dict):
        return []
    found: list[tuple[str, str | None]] = []
    for name, value in section.items():
        variable = value.get("token_env") if isinstance(value, dict) else None
        valid = isinstance(variable, str) and _VARIABLE.match(variable)
        found.append((str(name), variable if valid else None))
    return found


def repository(root: Root, config: ConnectorConfig) -> str | None:
    """The repository a code host's calls name: `repo` (GitHub) or `project` (GitLab) in its
    config, else the path of the git remote `origin` (`git@github.com:acme/app.git` is
    acme/app). A sign-in inside the remote's URL is never read."""
    for key in ("repo", "project"):
        value = config.settings.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return repository_from_remote(origin_url(root))


def origin_url(root: Root) -> str | None:
    import subprocess

    try:
        result = subprocess.run(
            ["git", "config", "--get", "remote.origin.url"],
            cwd=root.path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:(?!//)(.+)$")


def repository_from_remote(url: str | None) -> str | None:
    """owner/name (or group/sub/project) from a remote URL, or None."""
    if not url:
        return None
    scp = _SCP_LIKE.match(url)
    if scp is None and not urlsplit(url).hostname:
        return None  # a folder on this machine names no hosted repository
    path = scp.group(1) if scp else urlsplit(url).path
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return path if "/" in path else None
