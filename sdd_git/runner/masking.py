"""Where secrets come from, which variables hold them, and what a run's child processes get.

`collect_secrets` gathers every secret value within reach: variables whose name says secret or
whose value has a credential's shape, passwords inside URL-shaped values, `.env*` files at the top
of the product folder, and the usual credential files in the home folder (`~/.netrc`,
`~/.aws/credentials`, ...); `masker_for` adds the variables her config names (a key, a token).
The masker that hides them (`Masker`, `MASK`) lives in `sdd_git.masker`, so that providers can
mask their own errors; it is re-exported here, the one place the rest of sdd imports it from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from sdd_git.childenv import allowed_environment
from sdd_git.masker import (
    FRAGMENT_LENGTH,
    MASK,
    MIN_LENGTH,
    Masker,
    has_secret_shape,
    looks_like_credential,
    url_credentials,
)

__all__ = [
    "FRAGMENT_LENGTH",
    "MASK",
    "MIN_LENGTH",
    "Masker",
    "child_environment",
    "collect_secrets",
    "config_variables",
    "connector_secret_names",
    "connector_secrets",
    "is_secret_name",
    "is_secret_variable",
    "looks_like_credential",
    "masker_for",
    "netrc_secrets",
    "parse_dotenv",
    "secrets_from_environment",
    "url_credentials",
]

_MAX_FILE_BYTES = 1 << 20  # a credential file is small; a huge one is not read whole

# -- names ------------------------------------------------------------------------------------

# One part of a name (split at anything not a letter or digit), upper case. Matched whole, so
# GIT_AUTHOR_NAME (AUTHOR), PASSENGER_APP_ENV and KEYRING do not count, but APIKEY, MYSQLPWD,
# DBPASS, OAUTH and SESSIONID do.
_SECRET_PART = re.compile(
    r"""
    [A-Z0-9]*(?:KEYS?|PWD|PASS|PASSWORDS?|PASSWD|PASSPHRASE|DSN|AUTH|TOKENS?|SECRETS?
               |CREDENTIALS?|CREDS?|COOKIES?|SESSIONS?|PRIVATE|WEBHOOKS?)
    | (?:PASSWORD|PASSWD|PASSPHRASE|TOKEN|SECRET|CREDENTIAL|COOKIE|SESSION|PRIVATE|WEBHOOK
         |APIKEY|AUTHORI[SZ]ATION)[A-Z0-9]*
    | AUTH(?!OR)[A-Z0-9]+
    """,
    re.VERBOSE,
)
# A URL to a database or broker carries its password more often than not.
_DATABASE_URL = re.compile(
    r"(?:^|_)[A-Z0-9]*(?:DATABASE|DB|JDBC|MONGO|MONGODB|REDIS|POSTGRES|POSTGRESQL|PG|MYSQL"
    r"|MARIADB|AMQP|RABBITMQ|BROKER)_UR[LI]S?(?:_|$)"
)
# Shell variables that only look secret: PWD and OLDPWD are the current folder, and masking them
# would hide the product's path in every log line.
_NOT_SECRET = frozenset({"PWD", "OLDPWD"})


def is_secret_name(name: str) -> bool:
    """Whether a variable (or a `.env` key, or a credential file's key) holds a secret by its
    name alone."""
    upper = re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")
    if upper in _NOT_SECRET:
        return False
    if any(_SECRET_PART.fullmatch(part) for part in upper.split("_") if part):
        return True
    return bool(_DATABASE_URL.search(upper))


def is_secret_variable(name: str, value: str) -> bool:
    """Whether a variable holds a secret by its name, by a password inside its value, or by its
    value's shape (a JWT, a GitHub token... under any name)."""
    return is_secret_name(name) or bool(url_credentials(value)) or has_secret_shape(value)


# -- where secrets come from ------------------------------------------------------------------

# Credential files of common tools, read for any value under a secret-looking key and any
# password inside a URL (`~/.netrc` has its own reader).
_HOME_CREDENTIAL_FILES = (
    ".aws/credentials",
    ".aws/config",
    ".pypirc",
    ".npmrc",
    ".docker/config.json",
    ".git-credentials",
    ".config/git/credentials",
)


def collect_secrets(product: Path, environ: Mapping[str, str], home: Path | None) -> list[str]:
    """Every secret value within reach of this process, for a `Masker`: values of secret-named
    variables and of variables whose value has a credential's shape, passwords inside URL values,
    `.env*` files at the top of `product`, and the person's credential files under `home`.
    Unreadable files are skipped; values shorter than MIN_LENGTH are left out (see there). The
    order is stable, duplicates are dropped."""
    found: dict[str, None] = {}

    def add(value: str) -> None:
        value = value.strip("\r\n")
        if len(value) >= MIN_LENGTH:
            found[value] = None

    for name, value in environ.items():
        # By its shape too: its exact value and every encoded form of it are hidden, not only
        # the shape where it appears whole.
        if is_secret_name(name) or has_secret_shape(value):
            add(value)
        for part in url_credentials(value):
            add(part)
    for text in _dotenv_texts(product):
        for key, value in parse_dotenv(text):
            if is_secret_name(key) or looks_like_credential(value):
                add(value)
            for part in url_credentials(value):
                add(part)
    netrc_files = [environ["NETRC"]] if environ.get("NETRC") else []
    if home is not None:
        netrc_files += [str(home / ".netrc"), str(home / "_netrc")]
    for path in dict.fromkeys(netrc_files):
        for value in netrc_secrets(_read(Path(path))):
            add(value)
    for relative in _HOME_CREDENTIAL_FILES:
        text = _read(home / relative) if home is not None else ""
        for key, value in _assignments(text):
            if is_secret_name(key):
                add(value)
        for part in url_credentials(text):
            add(part)
    return list(found)


def masker_for(product: Path, extra: Iterable[str] = ()) -> Masker:
    """A masker for every secret within reach of this process (see collect_secrets), plus
    `extra` (a provider key read from a variable with an ordinary name), plus every connector's
    token (see connector_secrets), plus the value of every variable her config names (see
    config_variables)."""
    try:
        home: Path | None = Path.home()
    except (RuntimeError, KeyError):  # no HOME and no password entry
        home = None
    named = [os.environ[name] for name in config_variables(product) if os.environ.get(name)]
    return Masker(
        [
            *extra,
            *named,
            *connector_secrets(product, os.environ),
            *collect_secrets(product, os.environ, home),
        ]
    )


# -- variables her config names ---------------------------------------------------------------

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def config_variables(product: Path) -> list[str]:
    """Every variable `.sdd/config.yaml` names as holding a value sdd reads or passes on,
    whatever it is called (`api_key_env: DEPLOY_WORDS`): a key ending in `_env` (the provider's
    `api_key_env`, a connector's `token_env`), the variables `provider.keys` lists, an `env:`
    list, and a `$NAME` value (an MCP server's `env: {DOCS_TOKEN: $DOCS_TOKEN}`). Read leniently
    and never raises: the masker is built even from a broken config."""
    from sdd_git.root import Root
    from sdd_git.yamlio import read_mapping

    try:
        config = Root(product).config
        data: object = read_mapping(config, product) if config.is_file() else {}
    except Exception:  # whatever the file holds, the masker must still be built
        return []
    found: dict[str, None] = {}

    def name(value: object) -> None:
        if isinstance(value, str) and _VARIABLE.fullmatch(value.strip()):
            found[value.strip()] = None

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for inner_key, inner in value.items():
                inner_key = str(inner_key)
                if inner_key.endswith("_env") and isinstance(inner, str):
                    name(inner)
                elif inner_key == "keys" and isinstance(inner, dict):  # {host: VAR or [VAR]}
                    for listed in inner.values():
                        for each in listed if isinstance(listed, list) else [listed]:
                            name(each)
                elif inner_key == "env" and isinstance(inner, list):  # variables passed on
                    for each in inner:
                        name(each)
                walk(inner)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            reference = _REFERENCE.fullmatch(value.strip())
            if reference is not None:
                name(reference.group(1) or reference.group(2))

    walk(data)
    found.pop("none", None)  # api_key_env: none sends no key
    return list(found)


# -- connector tokens -------------------------------------------------------------------------


def connector_secret_names(product: Path) -> list[str]:
    """The variables `.sdd/config.yaml` names as connector tokens (`token_env`), and every other
    variable that holds one of the connectors' tokens (the same token exported again under a
    name that says nothing, `MY_GH=ghp_...`): dropped from every child process of a run,
    whatever they are called (`GH_PAT` does not say secret)."""
    from sdd_git.connectors.config import token_sources
    from sdd_git.root import Root

    named = [variable for _, variable in token_sources(Root(product)) if variable]
    tokens = {token.strip() for token in connector_secrets(product, os.environ) if token.strip()}
    holding = [k for k, v in os.environ.items() if v.strip() in tokens and k not in named]
    return named + holding


def connector_secrets(product: Path, environ: Mapping[str, str]) -> list[str]:
    """Every configured connector's token: the value of its `token_env` variable, and the token
    `sdd connect` keeps for it in the OS keyring (looked up only when connectors are configured;
    no keyring, no value). Never raises: a masker is built even from a broken config."""
    from sdd_git.connectors.config import token_sources
    from sdd_git.root import Root

    found: list[str] = []
    try:
        sources = token_sources(Root(product))
        if not sources:
            return []
        from sdd_git.connectors.signin import keyring_token

        for name, variable in sources:
            if variable and environ.get(variable):
                found.append(environ[variable])
            stored = keyring_token(name)
            if stored:
                found.append(stored)
    except Exception:  # the masker must be built whatever the config or keyring does
        return found
    return found


def secrets_from_environment(names: Iterable[str]) -> list[str]:
    return [os.environ[name] for name in names if os.environ.get(name)]


def child_environment(
    base: Mapping[str, str], run_id: str, extra_secret_names: Iterable[str] = ()
) -> dict[str, str]:
    """The environment of a run's child processes: only the variables sdd_git.childenv allows
    (PATH, HOME, the locale, the terminal, her git identity...), never one of them that holds a
    secret (a URL with a password, a credential's shape) or that `extra_secret_names` names (the
    run's key and token variables), and SDD_RUN_ID, which makes every person command refuse to
    run. Whatever else is set (CI_JOB_JWT, ACTIONS_ID_TOKEN_REQUEST_TOKEN, MY_THING) a child
    never gets, whatever its name says."""
    drop = set(extra_secret_names)
    env = {
        k: v
        for k, v in allowed_environment(base).items()
        if k not in drop and not is_secret_variable(k, v)
    }
    env["SDD_RUN_ID"] = run_id
    return env


def _read(path: Path) -> str:
    try:
        if not path.is_file():  # a venv called .env, a FIFO a role planted: never read
            return ""
        with path.open("rb") as handle:
            return handle.read(_MAX_FILE_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def _dotenv_texts(product: Path) -> Iterator[str]:
    try:
        names = sorted(p.name for p in product.iterdir() if p.name.startswith(".env"))
    except OSError:
        return
    for name in names:
        text = _read(product / name)
        if text:
            yield text


_DOTENV_KEY = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*")
_DOUBLE_QUOTED_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "$": "$"}


def parse_dotenv(text: str) -> list[tuple[str, str]]:
    """`KEY=VALUE` pairs of a `.env` file as dotenv tools read them: `export KEY=VALUE`, single
    quotes (literal), double quotes (with \\n-style escapes, across lines), unquoted values up to
    a ` #` comment, blank and comment lines skipped. A double-quoted value is given both as written
    and unescaped, since either may be what leaks."""
    pairs: list[tuple[str, str]] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        index += 1
        match = _DOTENV_KEY.match(line)
        if not line or line.startswith("#") or match is None:
            continue
        key, rest = match.group(1), line[match.end() :]
        quote_char = rest[:1]
        if quote_char in ("'", '"'):
            body = rest[1:]
            end = _closing_quote(body, quote_char)
            while end < 0 and index < len(lines):  # a quoted value may go on over lines
                body += "\n" + lines[index]
                index += 1
                end = _closing_quote(body, quote_char)
            written = body if end < 0 else body[:end]
            pairs.append((key, written))
            if quote_char == '"':
                unescaped = re.sub(
                    r"\\(.)", lambda m: _DOUBLE_QUOTED_ESCAPES.get(m.group(1), m.group(0)), written
                )
                if unescaped != written:
                    pairs.append((key, unescaped))
        else:
            value = re.split(r"\s+#", rest, maxsplit=1)[0].strip()
            pairs.append((key, value))
    return pairs


def _closing_quote(body: str, quote_char: str) -> int:
    escaped = False
    for position, char in enumerate(body):
        if escaped:
            escaped = False
        elif char == "\\" and quote_char == '"':
            escaped = True
        elif char == quote_char:
            return position
    return -1


def netrc_secrets(text: str) -> list[str]:
    """Passwords and accounts of a `.netrc`, and the login of every entry with a password (also as
    `login:password`, what HTTP Basic authentication encodes). Entries may be on one line or many;
    `macdef` bodies and `#` comments are skipped."""
    tokens = list(_netrc_tokens(text))
    found: list[str] = []
    entry: dict[str, str] = {}

    def close() -> None:
        password = entry.get("password")
        if password:
            found.append(password)
            login = entry.get("login")
            if login:
                found.extend((login, f"{login}:{password}"))
        if entry.get("account"):
            found.append(entry["account"])
        entry.clear()

    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token in ("machine", "default"):
            close()
            index += 2 if token == "machine" else 1
        elif token in ("login", "password", "account", "port") and index + 1 < len(tokens):
            entry[token] = tokens[index + 1]
            index += 2
        else:
            index += 1
    close()
    return found


def _netrc_tokens(text: str) -> Iterator[str]:
    lines = iter(text.splitlines())
    for line in lines:
        words = iter(_netrc_line_tokens(line))
        for word in words:
            if word == "macdef":
                next(words, None)  # the macro's name; its body runs to the next blank line
                for body in lines:
                    if not body.strip():
                        break
                break
            yield word


def _netrc_line_tokens(line: str) -> Iterator[str]:
    position = 0
    while position < len(line):
        if line[position].isspace():
            position += 1
            continue
        if line[position] == "#":
            return  # a comment runs to the end of the line
        if line[position] == '"':
            token = []
            position += 1
            while position < len(line) and line[position] != '"':
                if line[position] == "\\" and position + 1 < len(line):
                    position += 1
                token.append(line[position])
                position += 1
            position += 1
            yield "".join(token)
            continue
        end = position
        while end < len(line) and not line[end].isspace():
            end += 1
        yield line[position:end]
        position = end


def _assignments(text: str) -> Iterator[tuple[str, str]]:
    """`key = value`, `key: value` and `"key": "value"` pairs of INI, rc and JSON credential
    files, loosely: a key that is not secret-named is ignored by the caller anyway."""
    for key, value in re.findall(r'"([^"\n]+)"\s*:\s*"([^"\n]*)"', text):
        yield key, value
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;[{":
            continue
        separator = "=" if "=" in line else ":"
        key, found, value = line.partition(separator)
        if found:
            yield key.strip().strip("\"'"), value.strip().rstrip(",").strip().strip("\"'")
