"""The role lattice: who may spawn whom. `can_spawn` is the non-escalation rule, made a wall."""

from __future__ import annotations

from collections.abc import Iterable

from sdd_git.errors import SddError
from sdd_git.roles.profile import RoleProfile


class RoleSpawnDenied(SddError):
    code = "role_spawn_denied"

    def __init__(self, parent: RoleProfile, child: RoleProfile) -> None:
        self.parent = parent.name
        self.child = child.name
        self.parent_level = parent.level
        self.child_level = child.level
        self.allowed = parent.spawnable_roles
        if parent.delegation == "deny":
            why = f"{parent.name} may not delegate at all"
        elif parent.spawnable_roles is not None and child.name not in parent.spawnable_roles:
            allowed = ", ".join(parent.spawnable_roles) or "empty"
            why = f"{child.name} is not in its allowlist ({allowed})"
        else:
            why = (
                f"{child.name} (level {child.level_text}) is above "
                f"{parent.name} (level {parent.level_text})"
            )
        super().__init__(
            f"role_spawn_denied: {parent.name} (level {parent.level_text}) may not spawn "
            f"{child.name} (level {child.level_text}): {why}",
            hint="a role may spawn only a peer or a subordinate it is allowed to",
        )


def can_spawn(parent: RoleProfile, child: RoleProfile) -> bool:
    if parent.delegation == "deny":
        return False
    if parent.spawnable_roles is not None and child.name not in parent.spawnable_roles:
        return False
    # An allowlist narrows, never escalates: a listed child above the parent is refused too.
    return child.level <= parent.level


def check_spawn(parent: RoleProfile, child: RoleProfile) -> None:
    if not can_spawn(parent, child):
        raise RoleSpawnDenied(parent, child)


def spawnable(parent: RoleProfile, roles: Iterable[RoleProfile]) -> list[str]:
    if parent.delegation == "deny":
        return []  # listing 1,000 roles must not cost a million checks
    return sorted(role.name for role in roles if can_spawn(parent, role))


def disposition(role: RoleProfile, roles: Iterable[RoleProfile]) -> str:
    """The description sent before each task; a delegating role learns whom it may spawn."""
    names = spawnable(role, roles)
    text = role.description.strip()
    if names:
        text += f"\n\nRoles you may spawn: {', '.join(names)}."
    return text


def default_role_for_depth(depth: int, cutoff: int = 1) -> str:
    """A spawn with no role named: supervisor above the cutoff depth, executor at or below it."""
    return "supervisor" if depth < cutoff else "executor"
