"""`.sdd/config.yaml`: the settings the code reads, validated with file and key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sdd_git.errors import RecordError
from sdd_git.root import Root


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """The known key closest to a misspelt one (`prodcues` -> `produces`), or None. The one
    spelling check of every file sdd reads keys from: settings, role files, connectors."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


@dataclass(frozen=True)
class RolesConfig:
    default_depth_cutoff: int = 1
    max_grantable_delegation: float | None = None


def roles_config(root: Root | None) -> RolesConfig:
    if root is None:
        return RolesConfig()
    from sdd_git.settings import settings

    found = settings(root)
    section = found.get("roles") or {}
    if not isinstance(section, dict):
        raise RecordError(
            f"{found.where('roles')}: key 'roles' must be a mapping",
            hint="roles: {default_depth_cutoff: 1}",
        )
    cutoff = section.get("default_depth_cutoff", 1)
    if isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 0:
        raise RecordError(
            f"{found.where('roles', 'default_depth_cutoff')}: key "
            "'roles.default_depth_cutoff' must be a whole number >= 0, "
            f"not {cutoff!r}",
            hint="write roles: {default_depth_cutoff: 1}",
        )
    cap = section.get("max_grantable_delegation")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int | float)):
        raise RecordError(
            f"{found.where('roles', 'max_grantable_delegation')}: key "
            f"'roles.max_grantable_delegation' must be a number or null, not {cap!r}",
            hint="write roles: {max_grantable_delegation: 50} (or null for no cap)",
        )
    return RolesConfig(cutoff, None if cap is None else float(cap))


def messaging_on(root: Root | None) -> bool:
    """`messaging: on|off`: whether a role's handoff reaches another role. On by default."""
    if root is None:
        return True
    from sdd_git.settings import settings

    found = settings(root)
    value = found.get("messaging", True)
    if value is None or value is True or value is False:
        return value is not False
    if isinstance(value, str) and value.strip().lower() in ("on", "off", "true", "false"):
        return value.strip().lower() in ("on", "true")
    raise RecordError(
        f"{found.where('messaging')}: key 'messaging' must be on or off, not {value!r}",
        hint="write messaging: on (roles may hand off to each other) or messaging: off",
    )
