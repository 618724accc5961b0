"""One role as plain data for `sdd role show`: profile, whom it may spawn, routines, recent runs."""

from __future__ import annotations

import json
from typing import Any

from sdd_git import statefolders
from sdd_git.errors import RecordError
from sdd_git.roles.lattice import spawnable
from sdd_git.roles.registry import find_role, load_registry
from sdd_git.root import Root

RECENT_RUNS = 5


def describe_role(root: Root, name: str) -> tuple[dict[str, Any], list[str]]:
    profile, warnings = find_role(root, name)
    if profile.delegation == "deny":
        may_spawn: list[str] = []  # no need to read 1,000 roles to know the answer is none
    else:
        registry = load_registry(root)
        may_spawn = spawnable(profile, registry.roles)
    view = profile.as_dict()
    if profile.path is not None:
        try:
            view["path"] = str(profile.path.relative_to(root.path))
        except ValueError:
            view["path"] = str(profile.path)
    view["spawnable"] = may_spawn
    routines = root.sdd / "roles" / name / "routines"
    view["routines"] = sorted(p.stem for p in routines.glob("*.yaml")) if routines.is_dir() else []
    view["recent_runs"] = _recent_runs(root, name)
    return view, warnings


def _recent_runs(root: Root, name: str) -> list[str]:
    folder = root.sdd / "role-runs"
    if not folder.is_dir():
        return []
    runs = []
    logs = [p for p in folder.glob("*.jsonl") if not p.is_symlink()]
    for log in sorted(logs, key=lambda p: p.stat().st_mtime, reverse=True):
        try:
            head = statefolders.read_bytes(log, 1 << 16).split(b"\n", 1)[0]
            first = json.loads(head or b"{}")
        except (OSError, ValueError, RecordError):
            continue
        roles = first.get("roles") or []
        if isinstance(roles, list) and name in roles:
            runs.append(log.stem)
        if len(runs) >= RECENT_RUNS:
            break
    return runs
