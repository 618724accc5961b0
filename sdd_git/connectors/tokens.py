"""Every connector's token, and the masker for everything within reach of a run with them.

Above the connectors' configuration (which says where each token comes from), so the masking
package below stays foundation code."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from sdd_git.masking.masker import Masker
from sdd_git.masking.reach import collect_secrets, config_variables


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
