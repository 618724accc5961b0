"""Where a configured MCP stdio server runs, and the plain words that say so when it runs with
all the person's rights.

A server started by a `command` runs in the strongest sandbox the machine allows
(`sdd_git.sandbox.server`). Only her confirmed config takes it out (`connectors.NAME.sandbox:
off`); a machine with no sandbox runs it as her too. Either way every listing, stop and result
that involves the connector says so, in the words `Placement.warning` gives. A server reached by
`url` is not a program on her machine: no sandbox concerns it, and nothing is said."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sdd_git.connectors.base import ConnectorError
from sdd_git.sandbox.server import OFF

OFF_VALUES = (False, "off", "false", "no")  # YAML 1.1 reads a bare `off` as False
ON_VALUES = (None, True, "on", "true", "yes", "auto")


@dataclass(frozen=True)
class Placement:
    """Where one server runs: `sandbox` is the sandbox's label ("bwrap", "landlock",
    "seatbelt"), "off" (her settings), "none: <why>" (the machine), or "" (not a program of
    hers: a url); `warning` says, when it is not inside one, that it runs with all her rights."""

    sandbox: str
    warning: str = ""

    @property
    def outside(self) -> bool:
        return bool(self.warning)


NOT_A_PROGRAM = Placement("")  # a server reached by url


def sandbox_off(name: str, settings: Mapping[str, Any]) -> bool:
    """Whether her settings keep the server out of the sandbox (`sandbox: off`)."""
    value = settings.get("sandbox")
    folded = value.strip().lower() if isinstance(value, str) else value
    if folded in OFF_VALUES:
        return True
    if folded in ON_VALUES:
        return False
    raise ConnectorError(
        f"connectors.{name}.sandbox must be off, or left out (the server then runs in the "
        f"sandbox), not {value!r}",
        hint=f"connectors.{name}.sandbox: off, only for a server you trust with all your rights",
    )


def placement(name: str, settings: Mapping[str, Any]) -> Placement:
    """Where the server `name` runs on this machine, from its settings."""
    if settings.get("command") is None:
        return NOT_A_PROGRAM
    server = f"the MCP server {name}"
    if sandbox_off(name, settings):
        return Placement(
            OFF,
            f"{server} runs outside the sandbox, with all your rights (sandbox: off in your "
            "settings)",
        )
    from sdd_git.sandbox.choose import current

    box = current()
    if not box.working:
        return Placement(
            box.label,
            f"no sandbox on this machine: {server} runs with all your rights ({box.why})",
        )
    return Placement(box.name)
