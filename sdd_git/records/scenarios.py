"""Scenarios (`scenarios.yaml`, drafted by a role or the person) and QA results (`qa.yaml`).

Whether a scenario is accepted, and whether it is required, lives only in the decisions: a role
may write `scenarios.yaml`, so nothing there can make a scenario accepted or optional.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError, UsageError
from sdd_git.records.decisions import DecisionLog
from sdd_git.yamlio import display, read_list

SCENARIO_ID = re.compile(r"^SC-(\d+)$")
RESULTS = ("pass", "fail")


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    steps: str
    expected: str
    proposed_required: bool

    @property
    def hash(self) -> str:
        content = {"title": self.title, "steps": self.steps, "expected": self.expected}
        return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()

    def as_dict(self) -> dict[str, Any]:
        shown = {key: getattr(self, key) for key in ("id", "title", "steps", "expected")}
        return {**shown, "required": self.proposed_required}


@dataclass(frozen=True)
class QaResult:
    scenario: str
    result: str
    words: str
    at: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def scenarios_path(change_folder: Path) -> Path:
    return change_folder / "scenarios.yaml"


def qa_path(change_folder: Path) -> Path:
    return change_folder / "qa.yaml"


def _text(item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if isinstance(value, list):
        value = "\n".join(str(v) for v in value)
    if not isinstance(value, str):
        raise RecordError(f"{where}: key '{key}' is missing or not text")
    return value


def _mappings(path: Path, change_folder: Path, what: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The file's entries, each with the words that point at it; one that is not a mapping
    stops the read."""
    for index, item in enumerate(read_list(path, change_folder.parents[1])):
        where = f"{display(path)}: {what} #{index + 1}"
        if not isinstance(item, dict):
            raise RecordError(f"{where} is not a mapping of keys to values")
        yield where, item


def load_scenarios(change_folder: Path) -> list[Scenario]:
    path = scenarios_path(change_folder)
    scenarios: list[Scenario] = []
    for where, item in _mappings(path, change_folder, "scenario"):
        scenario_id = item.get("id")
        if not isinstance(scenario_id, str) or not SCENARIO_ID.match(scenario_id):
            raise RecordError(f"{where}: key 'id' must look like SC-1, found {scenario_id!r}")
        if any(s.id == scenario_id for s in scenarios):
            raise RecordError(f"{where}: id {scenario_id} appears twice")
        scenarios.append(
            Scenario(
                id=scenario_id,
                title=_text(item, "title", where),
                steps=_text(item, "steps", where),
                expected=_text(item, "expected", where),
                proposed_required=item.get("required", True) is not False,
            )
        )
    return scenarios


def find_scenario(change_folder: Path, scenario_id: str) -> Scenario:
    for scenario in load_scenarios(change_folder):
        if scenario.id == scenario_id:
            return scenario
    raise RecordError(
        f"no scenario {scenario_id} in {display(scenarios_path(change_folder))}",
        hint="`sdd change show CH` lists the scenarios of a change",
    )


def next_scenario_id(scenarios: list[Scenario]) -> str:
    numbers = [int(m.group(1)) for s in scenarios if (m := SCENARIO_ID.match(s.id))]
    return f"SC-{max(numbers, default=0) + 1}"


def load_results(change_folder: Path) -> list[QaResult]:
    path = qa_path(change_folder)
    results: list[QaResult] = []
    for where, item in _mappings(path, change_folder, "result"):
        result = item.get("result")
        if result not in RESULTS:
            raise RecordError(f"{where}: key 'result' must be pass or fail, found {result!r}")
        results.append(
            QaResult(
                scenario=_text(item, "scenario", where),
                result=str(result),
                words=_text(item, "words", where),
                at=_text(item, "at", where),
            )
        )
    return results


def qa_key(change_id: str, number: int) -> str:
    """Her ledger's key for the `number`th result (1-based) of a change's qa.yaml."""
    return f"changes/{change_id}/qa.yaml#{number}"


def unconfirmed_results(change_id: str, change_folder: Path, results: list[QaResult]) -> set[int]:
    """The numbers (1-based) of the results her ledger does not hold: they count for nothing."""
    from sdd_git.root import Root
    from sdd_git.trust.pending import ledger_for

    ledger = ledger_for(Root(change_folder.parent.parent))
    if ledger is None:
        return set()
    return {
        n
        for n, r in enumerate(results, 1)
        if not ledger.confirmed(qa_key(change_id, n), r.as_dict())
    }


def latest_result(results: list[QaResult], scenario_id: str) -> QaResult | None:
    matching = [r for r in results if r.scenario == scenario_id]
    return matching[-1] if matching else None


@dataclass(frozen=True)
class ScenarioStatus:
    scenario: Scenario
    accepted_by: str | None  # decision id
    required: bool
    changed_since_accepted: bool
    result: QaResult | None
    failure_accepted_by: str | None

    @property
    def blocks_release(self) -> str | None:
        """Why this scenario blocks a release, or None."""
        if self.accepted_by is None or not self.required:
            return None
        if self.result is None:
            return f"required scenario {self.scenario.id} has no QA result yet"
        if self.result.result == "fail" and self.failure_accepted_by is None:
            return f"required scenario {self.scenario.id} failed and its failure is not accepted"
        return None


def statuses(change_id: str, change_folder: Path, log: DecisionLog) -> list[ScenarioStatus]:
    results = load_results(change_folder)
    ignored = unconfirmed_results(change_id, change_folder, results)
    counted = [r for n, r in enumerate(results, 1) if n not in ignored]
    acceptances = [d for d in log.active("accept-scenario") if d.get("change") == change_id]
    failures = [d for d in log.active("accept-failure") if d.get("change") == change_id]
    out = []
    for scenario in load_scenarios(change_folder):
        accepted = next(
            (d for d in reversed(acceptances) if d.get("scenario") == scenario.id), None
        )
        latest = latest_result(counted, scenario.id)
        latest_number = _number_of(results, latest) if latest is not None else None
        failure = next(
            (
                d
                for d in reversed(failures)
                if d.get("scenario") == scenario.id and d.get("result") == latest_number
            ),
            None,
        )
        out.append(
            ScenarioStatus(
                scenario=scenario,
                accepted_by=accepted.id if accepted else None,
                required=bool(accepted.get("required")) if accepted else False,
                changed_since_accepted=accepted is not None
                and accepted.get("hash") != scenario.hash,
                result=latest,
                failure_accepted_by=failure.id if failure else None,
            )
        )
    return out


def parse_scenario_ref(text: str) -> tuple[str, str]:
    """`CH-0001/SC-1` -> ("CH-0001", "SC-1")."""
    change_id, _, scenario_id = text.partition("/")
    if not re.match(r"^CH-\d{4,}$", change_id) or not SCENARIO_ID.match(scenario_id):
        raise UsageError(
            f"{text!r} is not a scenario reference", hint="name a scenario as CH-0001/SC-1"
        )
    return change_id, scenario_id


def _number_of(results: list[QaResult], result: QaResult) -> int:
    """The 1-based number of this very result in the file (the same result may repeat)."""
    return next(n for n, r in enumerate(results, 1) if r is result)
