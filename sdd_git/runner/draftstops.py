"""The stops a run ends at when its author drafted a record for the person (a plan, a
reading): she answers them with her own commands (accept, correct, or not yet), never with allow
or deny, and nobody acts on the draft before she accepts it."""

from __future__ import annotations

from typing import Any

from sdd_git.runner import logevents, stops
from sdd_git.runner.notify import start_waiting
from sdd_git.runner.state import RunState


def plan_stop(state: RunState) -> stops.Stop | None:
    """A lead's drafted plan ends in the person's choice: accept, correct, or not yet. Nobody
    writes for the plan before she accepts it."""
    from sdd_git.records import changes
    from sdd_git.records.plan import plan_accepted, plan_hash

    pack = changes.load(state.root, state.change or "")
    path = pack.folder / "plan.yaml"
    if not path.exists() or plan_accepted(state.root, pack.id) is not None:
        return None
    return _choice_stop(
        state,
        "plan",
        f"Read the drafted plan of {pack.id} (changes/{pack.id}/plan.yaml) and accept it (sdd "
        f"accept plan {pack.id}), correct it (edit the file, then accept it), or leave it for now.",
        stops.PLAN_CHOICES,
        {"hash": plan_hash(path)},
        pack.id,
    )


def _choice_stop(
    state: RunState,
    kind: str,
    action: str,
    choices: tuple[str, ...],
    args: dict[str, Any],
    change: str,
) -> stops.Stop:
    """A stop the person answers with her own commands (accept, correct), never allow/deny."""
    stop = stops.Stop(
        id=stops.new_stop_id(),
        run=state.run_id,
        role=state.role.name,
        kind=kind,
        action=action,
        choices=choices,
        origin=state.origin,
        created_at=state.clock(),
        expires_at=None,
        args=args,
        change=change,
    )
    start_waiting(state.root, stop)
    state.log.append(logevents.Stop(stop.id, kind, stop.action, choices=list(choices)))
    return stop


def reading_stop(state: RunState) -> stops.Stop | None:
    """A drafted reading ends in the person's choice: accept, correct, or not yet. Never allow."""
    from sdd_git.records import changes, decisions
    from sdd_git.records.spec import read_spec

    pack = changes.load(state.root, state.change or "")
    section = read_spec(state.root.spec_file(pack.spec)).section("S1")
    if not section.body or decisions.load(state.root).section_acceptance(
        section.full_id, section.hash
    ):
        return None
    return _choice_stop(
        state,
        "reading",
        f"Read the drafted reading of {pack.id} ({section.full_id}) and accept it (sdd accept "
        f'reading {pack.id}), correct it (sdd correct reading {pack.id} "..."), or leave it '
        "for now.",
        stops.READING_CHOICES,
        {"hash": section.hash},
        pack.id,
    )
