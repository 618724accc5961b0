"""Stages of a change and the gates between them: `sdd next` and `sdd complete`.

reading -> build needs an accepted section of the change's spec; -> release (and so -> done)
needs every accepted required scenario to have passed, or its failure accepted. No stage calls a
model: these are the person's own moves, which is why `sdd --no-agent` can complete a pack.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdd_git.errors import GateError
from sdd_git.records import changes, decisions
from sdd_git.records.changes import STAGES, ChangePack
from sdd_git.records.scenarios import statuses
from sdd_git.records.spec import read_spec
from sdd_git.root import Root
from sdd_git.sink import person_write


@dataclass(frozen=True)
class Move:
    change: ChangePack
    before: str
    after: str


def gate_problem(root: Root, pack: ChangePack, target: str) -> str | None:
    """Why `pack` may not enter `target`, or None when the gate holds. Gates add up: a stage
    needs every gate before it too, whatever stage `change.yaml` says the change is at now (a
    stage that arrived by git, or was typed in, skips nothing)."""
    log = decisions.load(root)
    if target != "reading":
        spec = read_spec(root.spec_file(pack.spec))
        if not any(log.section_acceptance(s.full_id, s.hash) for s in spec.sections):
            return (
                f"{pack.id} has no accepted section in {pack.spec}: accept the reading first "
                f"(sdd accept reading {pack.id})"
            )
    if target in ("release", "done"):
        for status in statuses(pack.id, pack.folder, log):
            reason = status.blocks_release
            if reason is not None:
                return f"{pack.id}: {reason}"
    return None


def _resolve(root: Root, change_id: str | None) -> ChangePack:
    return changes.load(root, change_id) if change_id else changes.only_open(root)


def advance(root: Root, change_id: str | None) -> Move:
    with person_write(root):
        pack = _resolve(root, change_id)
        if pack.stage == "done":
            raise GateError(f"{pack.id} is already done")
        target = STAGES[STAGES.index(pack.stage) + 1]
        problem = gate_problem(root, pack, target)
        if problem is not None:
            raise GateError(f"cannot move {pack.id} to {target}: {problem}", hint=None)
        return Move(changes.set_stage(pack, target), pack.stage, target)


def complete(root: Root, change_id: str | None) -> Move:
    with person_write(root):
        pack = _resolve(root, change_id)
        if pack.stage == "done":
            raise GateError(f"{pack.id} is already done")
        for target in STAGES[1:]:  # every gate, not only those after the stage it says
            problem = gate_problem(root, pack, target)
            if problem is not None:
                raise GateError(
                    f"cannot complete {pack.id} (stage {pack.stage}); the gate to {target} "
                    f"does not hold: {problem}"
                )
        return Move(changes.set_stage(pack, "done"), pack.stage, "done")
