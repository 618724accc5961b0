from __future__ import annotations

import dataclasses

import pytest

from sdd_git.roles.lattice import (
    RoleSpawnDenied,
    can_spawn,
    check_spawn,
    default_role_for_depth,
    disposition,
    spawnable,
)
from sdd_git.roles.profile import RoleProfile
from sdd_git.roles.registry import EXECUTOR, SUPERVISOR


def role(
    name: str, level: float, delegation: str = "allow", allow: tuple[str, ...] | None = None
) -> RoleProfile:
    return RoleProfile(
        name=name, label=name, job="j", level=level, delegation=delegation,
        description=f"{name} rules.", spawnable_roles=allow,
    )  # fmt: skip


def test_supervisor_may_spawn_executor_and_supervisor() -> None:
    assert can_spawn(SUPERVISOR, EXECUTOR)
    assert can_spawn(SUPERVISOR, SUPERVISOR)
    assert spawnable(SUPERVISOR, [EXECUTOR, SUPERVISOR]) == ["executor", "supervisor"]


def test_executor_may_spawn_nothing_not_even_a_peer() -> None:
    peer = role("peer", 0)
    assert not can_spawn(EXECUTOR, EXECUTOR)
    assert not can_spawn(EXECUTOR, peer)
    assert spawnable(EXECUTOR, [EXECUTOR, SUPERVISOR, peer]) == []


def test_an_allowlist_narrows_and_never_escalates() -> None:
    lead = role("lead", 50, allow=("builder",))
    assert can_spawn(lead, role("builder", 10))
    assert not can_spawn(lead, role("qa-author", 10))  # lower level, but not listed
    odd = role("odd", 5, allow=("boss",))
    assert not can_spawn(odd, role("boss", 90))  # listed, but above it: refused (issue 12)
    with pytest.raises(RoleSpawnDenied, match=r"boss \(level 90\) is above odd \(level 5\)"):
        check_spawn(odd, role("boss", 90))


def test_non_escalation_allows_peers_and_subordinates_only() -> None:
    lead = role("lead", 50)
    assert can_spawn(lead, role("same", 50))
    assert can_spawn(lead, role("below", 49.5))
    assert not can_spawn(lead, role("above", 50.5))


def test_a_denied_spawn_carries_names_levels_and_the_allowed_set() -> None:
    lead = role("lead", 50, allow=("builder", "qa-author"))
    with pytest.raises(RoleSpawnDenied) as caught:
        check_spawn(lead, role("product-lead", 80))
    error = caught.value
    assert error.code == "role_spawn_denied"
    assert (error.parent, error.child, error.parent_level, error.child_level) == (
        "lead", "product-lead", 50, 80,
    )  # fmt: skip
    assert error.allowed == ("builder", "qa-author")
    assert (
        "role_spawn_denied: lead (level 50) may not spawn product-lead (level 80)" in error.message
    )
    with pytest.raises(RoleSpawnDenied) as by_level:
        check_spawn(role("lead", 50), role("boss", 80))
    assert by_level.value.allowed is None


def test_the_disposition_of_a_delegating_role_names_whom_it_may_spawn() -> None:
    roles = [EXECUTOR, SUPERVISOR]
    assert disposition(SUPERVISOR, roles).endswith("\n\nRoles you may spawn: executor, supervisor.")
    assert "Roles you may spawn" not in disposition(EXECUTOR, roles)
    lonely = dataclasses.replace(role("lonely", 5), spawnable_roles=())
    assert disposition(lonely, roles) == "lonely rules."


@pytest.mark.parametrize(
    ("depth", "cutoff", "expected"),
    [
        (0, 1, "supervisor"),
        (1, 1, "executor"),
        (5, 1, "executor"),
        (1, 2, "supervisor"),
        (0, 0, "executor"),
    ],
)
def test_the_depth_derived_default_role(depth: int, cutoff: int, expected: str) -> None:
    assert default_role_for_depth(depth, cutoff) == expected
