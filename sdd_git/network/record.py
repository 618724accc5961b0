"""The lead's record of its network (CONTRACT §9): each node's returned artifact (`node`, `kind`,
`ref`, `summary`) as an `artifact` event in the lead's run log and a line in its conversation.

Only the artifact crosses over, never the specialist's own messages: the lead learns what was
made and where it is, as a reviewer reads a pull request's title rather than its author's
scratch notes. Writing is idempotent, keyed by the node's run that returned the artifact, so a
driver killed between a result and its record, or a result that arrived through `sdd allow`,
is recorded by the next `sdd work`, once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sdd_git.root import Root
from sdd_git.runner import logevents
from sdd_git.runner.runlog import read_events, runs_folder

FIELDS = ("kind", "ref", "summary", "sha256")


def lead_run(root: Root, change: str, lead: str) -> str | None:
    """The lead's latest ended run on this change's plan (the one that drafted it), or None
    when the lead never ran for it (a plan she wrote by hand). A run still under way is left
    to its own writer; its results reach its log once it has ended."""
    folder = runs_folder(root)
    if not folder.is_dir():
        return None
    found: list[tuple[str, str]] = []
    for path in folder.glob("run-*.jsonl"):
        events = read_events(path)
        started = events[0] if events else {}
        route = next((e for e in events[:4] if e.get("event") == "route"), {})
        if (
            started.get("event") == "run_started"
            and started.get("change") == change
            and (started.get("roles") or [None])[0] == lead
            and route.get("route") == "plan"
            and _ended(events)
        ):
            found.append((str(started.get("ts")), path.stem))
    return max(found)[1] if found else None


def record_results(
    root: Root, change: str, lead: str, results: Iterable[tuple[str, str, str, dict[str, Any]]]
) -> None:
    """Write each result (node id, its owner, the node's run that returned it, the artifact)
    that the lead's record does not hold yet."""
    from sdd_git.roles.conversation import add_message, messages

    results = list(results)
    if not results:
        return
    run = lead_run(root, change, lead)
    logged = _logged(root, run) if run is not None else None  # no run: no log to write
    said = {str(m.get("from_run")) for m in messages(root, lead) if m.get("from") == "network"}
    results = [
        r for r in results if r[2] not in said or (logged is not None and r[2] not in logged)
    ]
    if not results:
        return
    from sdd_git.connectors.tokens import masker_for
    from sdd_git.runner.clock import system_clock
    from sdd_git.runner.logwriter import RunLog

    mask = masker_for(root.path)
    log = RunLog.open(root, run, mask, system_clock) if run is not None else None
    for node_id, owner, from_run, artifact in results:
        fields = {k: artifact[k] for k in FIELDS if k in artifact}
        if log is not None and logged is not None and from_run not in logged:
            came = {"node": node_id, "owner": owner, "from_run": from_run}
            log.append(logevents.Artifact.from_fields({**came, **fields}))
        if from_run not in said:
            kind, ref = fields.get("kind"), fields.get("ref")
            what = "a summary" if kind == "summary" else f"{kind} {ref}"
            what += f": {fields.get('summary')}"
            line = {"from": "network", "run": run, "node": node_id, "from_run": from_run, **fields}
            add_message(root, lead, mask, **line, text=f"{node_id} ({owner}) returned {what}")


def _ended(events: list[dict[str, Any]]) -> bool:
    lifecycle = [e for e in events if e.get("event") in ("run_started", "run_resumed", "run_ended")]
    return bool(lifecycle) and lifecycle[-1].get("event") == "run_ended"


def _logged(root: Root, run: str) -> set[str]:
    from sdd_git.runner.runlog import log_path

    events = read_events(log_path(root, run))
    return {str(e.get("from_run")) for e in events if e.get("event") == "artifact"}
