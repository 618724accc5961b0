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
    }
