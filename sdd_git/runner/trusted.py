"""No run starts on what she has not confirmed (CONTRACT §13).

A run acts on the settings (its provider's address and key), its roles' files (level, rules,
model) and their skills. `require` is called by `run.start` and by a resume, for every origin:
her terminal, her page, a routine, a handoff's wake, a network node. In her terminal the CLI
asks her first (`pending` says what to ask); everywhere else the run waits, and nothing of it is
written."""

from __future__ import annotations

from collections.abc import Iterable

from sdd_git.roles.profile import RoleProfile
from sdd_git.roles.trust import role_item, skill_items
from sdd_git.root import Root
from sdd_git.trust.pending import Unconfirmed, WaitsForHer, ledger_for, settings_items


def pending(
    root: Root, roles: Iterable[RoleProfile | None], extra: Iterable[Unconfirmed] = ()
) -> list[Unconfirmed]:
    """What a run of `roles` would act on that she has not confirmed; empty on a CI engine."""
    ledger = ledger_for(root)
    if ledger is None:
        return []
    found: list[Unconfirmed] = [*extra]
    found += settings_items(root, ledger)
    for role in roles:
        if role is None:
            continue
        own = role_item(role, ledger)
        if own is not None:
            found.append(own)
        found += skill_items(root, role.skills, ledger)
    unique: dict[str, Unconfirmed] = {}
    for each in found:
        unique.setdefault(each.key, each)
    return list(unique.values())


def require(
    root: Root,
    roles: Iterable[RoleProfile | None],
    extra: Iterable[Unconfirmed] = (),
    doing: str = "this run",
) -> None:
    items = pending(root, roles, extra)
    if items:
        raise WaitsForHer(items, doing)
