"""Every secret within reach of this process, and what a run's child processes get.

`collect_secrets` gathers variables whose name says secret or whose value has a credential's
shape, passwords inside URL-shaped values, `.env*` files at the top of the product folder, and
the usual credential files in the home folder (`~/.netrc`, `~/.aws/credentials`, ...);
`config_variables` names the variables her config names (a key, a token)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from sdd_git.childenv import allowed_environment
from sdd_git.masking.files import (
    HOME_CREDENTIAL_FILES,
    assignments,
    dotenv_texts,
    netrc_secrets,
    parse_dotenv,
    read_small,
)
from sdd_git.masking.masker import (
    MIN_LENGTH,
    has_secret_shape,
    looks_like_credential,
    url_credentials,
)
from sdd_git.masking.names import is_secret_name, is_secret_variable


def collect_secrets(product: Path, environ: Mapping[str, str], home: Path | None) -> list[str]:
    """Every secret value within reach of this process, for a `Masker`: values of secret-named
    variables and of variables whose value has a credential's shape, passwords inside URL values,
    `.env*` files at the top of `product`, and the person's credential files under `home`.
    Unreadable files are skipped; values shorter than MIN_LENGTH are left out (see there). The
    order is stable, duplicates are dropped."""
    found: dict[str, None] = {}
    for value in _candidates(product, environ, home):
        value = value.strip("\r\n")
        if len(value) >= MIN_LENGTH:
            found[value] = None
    return list(found)


def _candidates(product: Path, environ: Mapping[str, str], home: Path | None) -> Iterator[str]:
    for name, value in environ.items():
        # By its shape too: its exact value and every encoded form of it are hidden, not only
        # the shape where it appears whole.
        if is_secret_name(name) or has_secret_shape(value):
            yield value
        yield from url_credentials(value)
    for text in dotenv_texts(product):
        for key, value in parse_dotenv(text):
            if is_secret_name(key) or looks_like_credential(value):
                yield value
            yield from url_credentials(value)
    netrc_files = [environ["NETRC"]] if environ.get("NETRC") else []
    if home is not None:
        netrc_files += [str(home / ".netrc"), str(home / "_netrc")]
    for path in dict.fromkeys(netrc_files):
        yield from netrc_secrets(read_small(Path(path)))
    for relative in HOME_CREDENTIAL_FILES:
        text = read_small(home / relative) if home is not None else ""
        yield from (value for key, value in assignments(text) if is_secret_name(key))
        yield from url_credentials(text)


# -- variables her config names ---------------------------------------------------------------

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def config_variables(product: Path) -> list[str]:
    """Every variable her settings name as holding a value sdd reads or passes on, whatever it
    is called (`api_key_env: DEPLOY_WORDS`), in every layer (her user file, `.sdd/config.yaml`,
    `.sdd/config.local.yaml`): a key ending in `_env` (the provider's `api_key_env`, a
    connector's `token_env`), the variables `provider.keys` lists, an `env:` list, and a `$NAME`
    value (an MCP server's `env: {DOCS_TOKEN: $DOCS_TOKEN}`, a provider header's
    `api-key: $AZURE_KEY`). Read leniently and never raises: the masker is built even from a
    broken config (a layer that does not load is skipped, the others still count)."""
    from sdd_git.root import Root
    from sdd_git.settings import layer_files, read_layer

    found: dict[str, None] = {}
    for name, path, within in layer_files(Root(product)):
        try:
            data: object = read_layer(name, path, within) if path.is_file() else {}
        except Exception:  # whatever the file holds, the masker must still be built
            continue
        _walk(data, found)
    found.pop("none", None)  # api_key_env: none sends no key
    return list(found)


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


def _name(value: object, found: dict[str, None]) -> None:
    if isinstance(value, str) and _VARIABLE.fullmatch(value.strip()):
        found[value.strip()] = None


def _walk(value: object, found: dict[str, None]) -> None:
    """Every variable named anywhere in `value` into `found`, in order."""
    if isinstance(value, dict):
        for inner_key, inner in value.items():
            _named_by_key(str(inner_key), inner, found)
            _walk(inner, found)
    elif isinstance(value, list):
        for item in value:
            _walk(item, found)
    elif isinstance(value, str):
        reference = _REFERENCE.fullmatch(value.strip())
        if reference is not None:
            _name(reference.group(1) or reference.group(2), found)


def _named_by_key(key: str, value: object, found: dict[str, None]) -> None:
    if key.endswith("_env") and isinstance(value, str):
        _name(value, found)
    elif key == "keys" and isinstance(value, dict):  # {host: VAR or [VAR]}
        for listed in value.values():
            for each in listed if isinstance(listed, list) else [listed]:
                _name(each, found)
    elif key == "env" and isinstance(value, list):  # variables passed on
        for each in value:
            _name(each, found)
    elif key == "headers" and isinstance(value, dict):  # `Authorization: Bearer ${TOKEN}`
        for text in value.values():
            for reference in _REFERENCE.finditer(str(text)):
                _name(reference.group(1) or reference.group(2), found)
