"""Which class a connector's kind names, and a connector ready to call with its session.

Built-in kinds are named here as "module:Class" and imported only when used. A package adds a
kind through the entry-point group `sdd_git.connectors` (NAME = "pkg.module:Class", a class or
factory called with no argument, giving an object of the `Connector` Protocol); entry points are
read only for a kind that is not built in, so a built-in connector never pays for them:

    [project.entry-points."sdd_git.connectors"]
    youtrack = "sdd_youtrack:YouTrackConnector"
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from sdd_git.connectors.base import Connector, Session
from sdd_git.connectors.config import ConnectorConfig, find_connector, require_base_url
from sdd_git.connectors.kinds import BUILTIN
from sdd_git.connectors.signin import Token, find_token
from sdd_git.errors import RecordError
from sdd_git.masking.returned import session_mask
from sdd_git.root import Root

ENTRY_POINT_GROUP = "sdd_git.connectors"


def make_connector(kind: str) -> Connector:
    """A new connector of `kind`: built in, else from an installed package's entry point."""
    target = BUILTIN.get(kind)
    if target is not None:
        factory = _load(target, f"the built-in connector {kind}")
    else:
        factory = _entry_point(kind)
    try:
        made = factory()
    except Exception as exc:
        raise RecordError(
            f"the connector {kind} could not start: {type(exc).__name__}: {exc}"
        ) from None
    return made  # type: ignore[no-any-return]


def _load(target: str, what: str) -> Callable[[], Any]:
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or module_name
        extra = " (pip install 'sdd-git[mcp]')" if missing == "mcp" else ""
        raise RecordError(
            f"{what} is not available in this installation: {missing} is missing{extra}"
        ) from None
    found = getattr(module, attribute, None)
    if not callable(found):
        raise RecordError(f"{what}: {target} is not a class")
    return found  # type: ignore[no-any-return]


def _entry_point(kind: str) -> Callable[[], Any]:
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if entry.name == kind:
            try:
                loaded = entry.load()
            except Exception as exc:  # a broken package is named, never a traceback
                raise RecordError(
                    f"the connector {kind} ({entry.value}) failed to load: "
                    f"{type(exc).__name__}: {exc}"
                ) from None
            if not callable(loaded):
                raise RecordError(f"the connector {kind} ({entry.value}) is not a class")
            return loaded  # type: ignore[no-any-return]
    raise RecordError(
        f"no connector of kind '{kind}': it is not built in, and no installed package adds it",
        hint="built in: " + ", ".join(BUILTIN) + f"; packages add one through the entry-point "
        f"group {ENTRY_POINT_GROUP}",
    )


def session_for(
    root: Root,
    config: ConnectorConfig,
    mask: Callable[[str], str] | None = None,
    token: Token | None = None,
) -> Session:
    """The session a call is given: where the service is, the person's token, and a mask
    that hides that token (and, through `mask`, every other secret the run knows)."""
    from sdd_git.trust.pending import require_settings

    # Her token goes only to the address she confirmed for it, and an MCP server's command runs
    # only once she confirmed it: both come from settings her ledger must hold (§13).
    require_settings(root, f"the connector {config.name}")
    require_base_url(root, config)
    found = token if token is not None else find_token(config)
    settings = {**dict(config.settings), "kind": config.kind, "reads": list(config.reads),
                "acts": list(config.acts), "root": str(root.path)}  # fmt: skip
    return Session(
        name=config.name,
        base_url=config.base_url,
        token=found.value,
        settings=settings,
        masked=session_mask([found.value], mask),
    )


def load_connector(
    root: Root, name: str, mask: Callable[[str], str] | None = None
) -> tuple[Connector, Session]:
    """The configured connector `name`, ready to call: its object and its session."""
    config = find_connector(root, name)
    return make_connector(config.kind), session_for(root, config, mask)
