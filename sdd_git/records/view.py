"""One change pack as plain data: what `sdd change show` prints, as text or JSON."""

from __future__ import annotations

from typing import Any

from sdd_git.records import changes, decisions
from sdd_git.records.scenarios import statuses
from sdd_git.records.spec import read_spec
from sdd_git.root import Root


def describe_change(root: Root, change_id: str) -> dict[str, Any]:
    pack = changes.load(root, change_id)
    log = decisions.load(root)
    spec = read_spec(root.spec_file(pack.spec))
    sections = []
    for section in spec.sections:
        accepted = log.section_acceptance(section.full_id, section.hash)
        stale = None
        if accepted is None:
            stale = next(
                (
                    d.id
                    for d in reversed(log.active("accept-section"))
                    if d.get("section") == section.full_id
                ),
                None,
            )
        sections.append(
            {
                "id": section.full_id,
                "title": section.title,
                "state": "accepted"
                if accepted
                else ("changed since accepted" if stale else "draft"),
                "accepted_by": accepted.id if accepted else None,
                "checks": [{"id": c.id, "text": c.text} for c in section.checks],
                "text": section.body,
                "hash": section.hash,  # what `sdd accept ... --hash` and her page compare
            }
        )
    scenario_rows = []
    for status in statuses(pack.id, pack.folder, log):
        scenario_rows.append(
            {
                **status.scenario.as_dict(),
                "accepted_by": status.accepted_by,
                "required": status.required,
                "changed_since_accepted": status.changed_since_accepted,
                "result": status.result.as_dict() if status.result else None,
                "failure_accepted_by": status.failure_accepted_by,
                "blocks_release": status.blocks_release,
                "hash": status.scenario.hash,
            }
        )
    decision_rows = []
    for entry in log.for_change(pack.id, pack.spec):
        row = entry.as_dict()
        row["replaced_by"] = log.replaced_by(entry.id)
        decision_rows.append(row)
    return {
        **pack.as_dict(),
        "spec_file": str(spec.path.relative_to(root.path)),
        "sections": sections,
        "scenarios": scenario_rows,
        "decisions": decision_rows,
        "plan": _plan_row(root, pack.id, log),
        "proposal": _proposal_row(pack),
    }


def _proposal_row(pack: changes.ChangePack) -> dict[str, Any] | None:
    """A role's reading kept beside her own correction, which it never replaced."""
    from sdd_git.records.proposals import proposal_hash, read_proposal

    text = read_proposal(pack)
    if text is None:
        return None
    return {"text": text.strip(), "hash": proposal_hash(text)}


def _plan_row(root: Root, change_id: str, log: decisions.DecisionLog) -> dict[str, Any] | None:
    """The plan file as she would accept it: its sha256, and whether that is accepted."""
    from sdd_git.records.plan import acceptance_of, plan_hash, plan_path

    path = plan_path(root, change_id)
    if not path.is_file():
        return None
    digest = plan_hash(path)
    accepted = acceptance_of(log, change_id, digest)
    return {
        "file": str(path.relative_to(root.path)),
        "hash": digest,
        "accepted_by": accepted.id if accepted else None,
    }
