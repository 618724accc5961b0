"""`memory/decisions.yaml`: the append-only list of the person's decisions.

An entry is never edited or removed. Replacing a decision appends a `replace` entry that names
it; the replaced entry then no longer counts, and the replacement stands for the same subject
with the person's new words.

A decision counts only once her trust ledger holds it (CONTRACT §13): `append` records each one
it writes. An entry that arrives by a merge, or one of hers rewritten by a merge (another
`hash`, other words), opens no gate and replaces nothing until she confirms it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError
from sdd_git.records.ids import DECISION_ID
from sdd_git.root import DECISIONS_HEADER, Root
from sdd_git.yamlio import display, dump_yaml, exists, parse_yaml, read_list, read_text

KINDS = (
    "accept-section",
    "accept-plan",
    "accept-scenario",
    "accept-failure",
    "replace",
    "release",
)
SUBJECT_KEYS = (
    "section", "hash", "change", "scenario", "required", "release", "changes", "result",
    "result_at",
)  # fmt: skip


@dataclass(frozen=True)
class Decision:
    id: str
    kind: str
    words: str
    at: str
    fields: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.fields.get(key)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "words": self.words, "at": self.at, **self.fields}


@dataclass(frozen=True)
class DecisionLog:
    """All decisions, with which ones still count."""

    entries: tuple[Decision, ...]
    # Entries her ledger does not hold: shown, but they decide nothing.
    unconfirmed: frozenset[str] = frozenset()

    def counts(self, decision: Decision) -> bool:
        return decision.id not in self.unconfirmed

    def by_id(self, decision_id: str) -> Decision:
        for entry in self.entries:
            if entry.id == decision_id:
                return entry
        raise RecordError(
            f"no decision {decision_id} in memory/decisions.yaml",
            hint="`sdd change show CH` lists the decisions of a change",
        )

    def replaced_by(self, decision_id: str) -> str | None:
        for entry in self.entries:
            if entry.kind == "replace" and entry.get("replaces") == decision_id:
                return entry.id
        return None

    def effective_kind(self, decision: Decision) -> str:
        """What a decision decides: a replacement decides what the decision it replaced did."""
        seen: set[str] = set()
        current = decision
        while current.kind == "replace" and current.id not in seen:
            seen.add(current.id)
            target = current.get("replaces")
            # Only through decisions that count: a merged entry under her id decides nothing.
            found = next((e for e in self.entries if e.id == target and self.counts(e)), None)
            if found is None:
                return "replace"
            current = found
        return current.kind

    def active(self, kind: str) -> list[Decision]:
        """Decisions of `kind` (directly or by replacement) that no later decision replaced."""
        mine = [e for e in self.entries if self.counts(e)]
        replaced = {e.get("replaces") for e in mine if e.kind == "replace"}
        return [e for e in mine if e.id not in replaced and self.effective_kind(e) == kind]

    def section_acceptance(self, full_section_id: str, current_hash: str) -> Decision | None:
        for entry in reversed(self.active("accept-section")):
            if entry.get("section") == full_section_id and entry.get("hash") == current_hash:
                return entry
        return None

    def for_change(self, change_id: str, spec_id: str) -> list[Decision]:
        return [
            e
            for e in self.entries
            if e.get("change") == change_id
            or change_id in (e.get("changes") or [])
            or str(e.get("section") or "").startswith(f"{spec_id}#")
        ]


def ledger_key(decision_id: str) -> str:
    return f"memory/decisions.yaml#{decision_id}"


def load(root: Root) -> DecisionLog:
    from sdd_git.trust.pending import ledger_for

    path = root.decisions
    raw = read_list(path, root.path)
    entries = tuple(_entry(path, index, item) for index, item in enumerate(raw))
    ledger = ledger_for(root)
    if ledger is None:  # a CI engine: the default branch's record is the engine's to trust
        return DecisionLog(entries)
    unconfirmed = frozenset(
        e.id for e in entries if not ledger.confirmed(ledger_key(e.id), e.as_dict())
    )
    # An id given twice (a merge's copy of one of hers) decides nothing until she sorts it out.
    counted = Counter(e.id for e in entries)
    twice = {i for i, n in counted.items() if n > 1}
    return DecisionLog(entries, unconfirmed | twice)


def _entry(path: Path, index: int, item: Any) -> Decision:
    where = f"{display(path)}:{_entry_line(path, index)}"
    if not isinstance(item, dict):
        raise RecordError(f"{where}: decision #{index + 1} is not a mapping of keys to values")
    for key in ("id", "kind", "words", "at"):
        if not isinstance(item.get(key), str):
            raise RecordError(
                f"{where}: decision #{index + 1} has no text for key '{key}'",
                hint="decisions are written by person commands; restore the file from git",
            )
    if not DECISION_ID.match(item["id"]):
        raise RecordError(f"{where}: key 'id' must look like D-0001, found {item['id']!r}")
    if item["kind"] not in KINDS:
        raise RecordError(
            f"{where}: key 'kind' is {item['kind']!r}; it must be one of {', '.join(KINDS)}"
        )
    rest = {k: v for k, v in item.items() if k not in ("id", "kind", "words", "at")}
    return Decision(item["id"], item["kind"], item["words"], item["at"], rest)


def _entry_line(path: Path, index: int) -> int:
    # Only on the error path: compose the nodes again to find where entry `index` starts.
    try:
        text = read_text(path, path.parents[1])  # ROOT/memory/decisions.yaml
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecordError):
        return 1
    if isinstance(node, yaml.SequenceNode) and index < len(node.value):
        return int(node.value[index].start_mark.line) + 1
    return 1


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def next_id(entries: Iterable[Decision]) -> str:
    numbers = [int(m.group(1)) for e in entries if (m := DECISION_ID.match(e.id))]
    return f"D-{max(numbers, default=0) + 1:04d}"


def append(root: Root, kind: str, words: str, **fields: Any) -> Decision:
    """Append one decision. The caller holds the record lock."""
    if kind not in KINDS:
        raise ValueError(f"unknown decision kind {kind}")
    log = load(root)
    decision = Decision(
        id=next_id(log.entries),
        kind=kind,
        words=words,
        at=now_iso(),
        fields={k: v for k, v in fields.items() if v is not None},
    )
    path = root.decisions
    old_text = read_text(path, root.path) if exists(path, root.path) else DECISIONS_HEADER
    expected = [e.as_dict() for e in log.entries] + [decision.as_dict()]
    if old_text and not old_text.endswith("\n"):
        old_text += "\n"
    new_text = old_text + dump_yaml([decision.as_dict()])
    # Appending keeps every byte the person already has; if the file's shape does not allow a
    # plain append (a flow list, say), the whole list is written again instead.
    try:
        appended_cleanly = parse_yaml(new_text, path) == expected
    except RecordError:
        appended_cleanly = False
    if not appended_cleanly:
        new_text = DECISIONS_HEADER + dump_yaml(expected)
    from sdd_git.trust.ledger import record

    # Hers in the same step: the ledger first, so a crash between the two leaves a confirmation
    # of a decision that is not written (harmless), never a written one she did not confirm.
    record(root, [(ledger_key(decision.id), decision.as_dict())], f"decision {kind}")
    write_text_atomic(path, new_text)
    return decision
