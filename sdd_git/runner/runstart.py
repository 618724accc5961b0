"""What a run starts with and keeps when it resumes: the provider and the routine its
`run_started` records, the stops a routine or a network node adds, and whether the gate is open.
"""

from __future__ import annotations

from typing import Any

from sdd_git.errors import RecordError
from sdd_git.roles.profile import Rule
from sdd_git.root import Root
from sdd_git.runner import gate


def provider_fields(provider: object) -> dict[str, Any]:
    """What `run_started` keeps of the provider, so that a resumed run goes on with the same
    one: its kind, model, and where it is (a script's file, a server's address without any
    user or query part, which could carry a secret). Never a key or a key's name."""
    from urllib.parse import urlsplit

    fields: dict[str, Any] = {
        "provider": getattr(provider, "name", ""),
        "model": getattr(provider, "model", ""),
    }
    script = getattr(provider, "path", None)
    if fields["provider"] == "script" and script is not None:
        fields["script"] = str(script)
    base_url = getattr(provider, "base_url", None)
    if isinstance(base_url, str) and base_url:
        parts = urlsplit(base_url)
        fields["base_url"] = (
            f"{parts.scheme}://{parts.hostname or ''}"
            + (f":{parts.port}" if parts.port else "")
            + parts.path
        )
    return fields


def routine_fields(routine: dict[str, Any] | None) -> dict[str, Any]:
    """What `run_started` keeps of a routine: its name and event for the history, and its rules
    so that a resumed run keeps the same stops and the same rehearsal."""
    if routine is None:
        return {}
    return {
        "routine": routine["name"],
        # Not `event`: every line's `event` is its own kind (here `run_started`).
        "event_id": routine.get("event"),
        "routine_rules": {
            "ask_first": list(routine.get("ask_first") or ()),
            "rehearsal": bool(routine.get("rehearsal")),
            "unattended": bool(routine.get("unattended")),
        },
    }


def routine_ask_first(routine: dict[str, Any] | None) -> tuple[Rule, ...]:
    """A routine's own `ask_first` rules add stops to its role's boundary, never widen it."""
    if not routine:
        return ()
    return tuple(
        Rule(str(r["tool"]), r.get("inputs"))
        for r in routine.get("ask_first") or ()
        if isinstance(r, dict) and isinstance(r.get("tool"), str)
    )


def node_ask_first(
    root: Root, change: str | None, route: dict[str, Any] | None
) -> tuple[Rule, ...]:
    """A network node's own `ask_first` rules, from the accepted plan: they add stops to the
    owner's boundary. A plan's `always_allow` is never applied: a plan cannot widen a role.
    The rules are those of the plan the node was started on (its `route` names its sha256):
    a plan edited since, by anyone, is not accepted, so every action of the node then stops."""
    if route is None or not route.get("node") or not change:
        return ()
    from sdd_git.records.plan import plan_path, read_plan
    from sdd_git.tools.catalog import TOOL_CLASSES

    try:
        plan, digest = read_plan(plan_path(root, change))
    except RecordError:
        plan, digest = None, None
    if plan is None or digest != route.get("plan"):
        return tuple(Rule(t, None) for t, kind in TOOL_CLASSES.items() if kind == "consequential")
    node = plan.node(str(route["node"]))
    return node.rules.ask_first if node is not None else ()


def for_node(offered: tuple[str, ...], route: dict[str, Any] | None) -> tuple[str, ...]:
    """A network node's owner also returns its result: `return_artifact` (and only there, so a
    small model elsewhere is not offered one more schema)."""
    if route is not None and route.get("node") and "return_artifact" not in offered:
        return (*offered, "return_artifact")
    return offered


def accepted_now(root: Root, change: str | None) -> bool:
    """Whether the change has an accepted section as the record stands now (a run resumed after
    she edited accepted text meets the gate again)."""
    if not change:
        return False
    from sdd_git.records import changes

    try:
        return bool(gate.plan_for(root, changes.load(root, change)).sections)
    except RecordError:
        return False
