"""The person's acts on the record: accept, correct, record a result, replace a decision."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError, UsageError
from sdd_git.records import changes, decisions
from sdd_git.records.decisions import Decision
from sdd_git.records.ids import SECTION_ID
from sdd_git.records.scenarios import (
    QaResult,
    Scenario,
    find_scenario,
    latest_result,
    load_results,
    load_scenarios,
    next_scenario_id,
    parse_scenario_ref,
    qa_path,
    scenarios_path,
)
from sdd_git.records.spec import Spec, parse_spec, read_spec, with_section_body
from sdd_git.root import Root
from sdd_git.sink import person_write
from sdd_git.yamlio import display, dump_yaml, refuse_surrogates

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
READING_SECTION = "S1"


class ChangedWhileRead(RecordError):
    """What she read is not what the file holds now (a run redrafted it, a merge rewrote it):
    nothing is accepted, and she reads it again."""


@dataclass(frozen=True)
class Acceptance:
    decision: Decision
    already: bool  # the same thing was already accepted by this decision; nothing was appended
    text: str | None = None  # what was accepted (a section with its heading, a plan): said to her


def _words(words: str | None, default: str) -> str:
    if words is not None and not words.strip():
        raise UsageError(
            "the decision's words are empty", hint="say it in your own words, or leave --words out"
        )
    return words if words is not None else default


def spec_of(root: Root, pack: changes.ChangePack) -> Spec:
    return read_spec(root.spec_file(pack.spec))


def same_as_read(what: str, shown: str | None, current: str, again: str) -> None:
    """Refuse unless the text she read (its sha256, `shown`) is the text about to be accepted.
    None: the caller showed nothing to compare with (the text is then said after). `again`
    says where she reads it again."""
    if shown is None:
        return
    given = shown.strip().lower()
    if not _SHA256.match(given):
        raise UsageError(
            f"{shown!r} is not a sha256 (64 hex digits)",
            hint="give the sha256 of the text you read, as sdd change show prints it",
        )
    if given != current:
        raise ChangedWhileRead(
            f"{what}: it changed while you read it (you read the text with sha256 {given}; it"
            f" now has {current}); nothing was accepted",
            hint=f"read it again {again}, and accept the text it shows",
        )


def _again(change_id: str | None, path: Path | None = None) -> str:
    shown = f"sdd change show {change_id}" if change_id else ""
    if path is None:
        return f"with {shown}"
    return f"in {display(path)}" + (f" ({shown} prints its sha256)" if shown else "")


def _accept_section(
    root: Root, spec: Spec, section_id: str, words: str, shown: str | None = None
) -> Acceptance:
    section = spec.section(section_id)
    change = spec.meta.get("change") if isinstance(spec.meta.get("change"), str) else None
    again = _again(change) if change else _again(None, spec.path)
    same_as_read(f"section {section.full_id}", shown, section.hash, again)
    if not section.body:
        raise RecordError(
            f"{display(spec.path)}:{section.line}: section {section.full_id} is empty; "
            "there is nothing to accept",
            hint="write or draft the section's text first",
        )
    log = decisions.load(root)
    existing = log.section_acceptance(section.full_id, section.hash)
    if existing is not None:
        return Acceptance(existing, already=True, text=section.text)
    decision = decisions.append(
        root,
        "accept-section",
        words,
        section=section.full_id,
        hash=section.hash,
        change=change,
    )
    return Acceptance(decision, already=False, text=section.text)


def accept_reading(
    root: Root, change_id: str, words: str | None = None, shown: str | None = None
) -> Acceptance:
    """Accepting the reading is the decision; it keeps her own sentence verbatim. `shown`, the
    sha256 of the text she read, refuses a reading that changed since."""
    with person_write(root):
        pack = changes.load(root, change_id)
        return _accept_section(
            root, spec_of(root, pack), READING_SECTION, _words(words, pack.words), shown
        )


def correct_reading(root: Root, change_id: str, words: str) -> Spec:
    """Replace the reading's draft with the person's correction; it stays unaccepted, and no
    role's draft replaces it (records/proposals.py)."""
    if not words.strip():
        raise UsageError(
            "the correction is empty", hint='sdd correct reading CH-0001 "what you mean"'
        )
    refuse_surrogates(words)
    if re.search(r"^## S\d+", words, re.MULTILINE):
        raise UsageError(
            "the correction holds a section heading ('## S<n>'); a reading is one section",
            hint="write the reading's text only; other sections are edited in the spec file",
        )
    with person_write(root):
        pack = changes.load(root, change_id)
        spec = spec_of(root, pack)
        text = with_section_body(spec, READING_SECTION, words)
        parse_spec(spec.path, text)  # never write a spec that would not read back
        write_text_atomic(spec.path, text)
        if not pack.corrected:  # from now on a role's draft is a proposal beside her words
            changes.set_corrected(pack, True)
        return read_spec(spec.path)


def parse_section_ref(text: str) -> tuple[str, str]:
    match = SECTION_ID.match(text)
    if not match:
        raise UsageError(
            f"{text!r} is not a section reference", hint="name a section as SPEC-0001#S2"
        )
    return match.group(1), match.group(2)


def accept_section(
    root: Root, ref: str, words: str | None = None, shown: str | None = None
) -> Acceptance:
    spec_id, section_id = parse_section_ref(ref)
    with person_write(root):
        path = root.spec_file(spec_id)
        if not path.exists():
            raise RecordError(f"no spec {spec_id} (no {display(path)})")
        spec = read_spec(path)
        default = spec.meta.get("words")
        if words is None and not (isinstance(default, str) and default.strip()):
            raise UsageError(
                f"{spec_id} has no 'words' of the person to keep with the decision",
                hint='give them: --words "..."',
            )
        return _accept_section(root, spec, section_id, _words(words, str(default)), shown)


def add_scenario(
    root: Root, change_id: str, title: str, steps: str, expected: str, optional: bool = False
) -> Scenario:
    for name, value in (("title", title), ("steps", steps), ("expected", expected)):
        if not value.strip():
            raise UsageError(f"the scenario's {name} is empty", hint=f"give --{name} some text")
    with person_write(root):
        pack = changes.load(root, change_id)
        existing = load_scenarios(pack.folder)
        scenario = Scenario(next_scenario_id(existing), title, steps, expected, not optional)
        path = scenarios_path(pack.folder)
        write_text_atomic(path, dump_yaml([s.as_dict() for s in [*existing, scenario]]))
        return scenario


def accept_scenario(
    root: Root,
    ref: str,
    optional: bool = False,
    words: str | None = None,
    shown: str | None = None,
) -> Acceptance:
    change_id, scenario_id = parse_scenario_ref(ref)
    with person_write(root):
        pack = changes.load(root, change_id)
        scenario = find_scenario(pack.folder, scenario_id)
        same_as_read(f"scenario {ref}", shown, scenario.hash, _again(change_id))
        text = scenario_text(scenario)
        required = not optional
        log = decisions.load(root)
        for entry in reversed(log.active("accept-scenario")):
            if (
                entry.get("change") == change_id
                and entry.get("scenario") == scenario_id
                and entry.get("hash") == scenario.hash
                and bool(entry.get("required")) == required
            ):
                return Acceptance(entry, already=True, text=text)
        decision = decisions.append(
            root,
            "accept-scenario",
            _words(words, pack.words),  # her sentence, not the drafter's title
            change=change_id,
            scenario=scenario_id,
            hash=scenario.hash,
            required=required,
        )
        return Acceptance(decision, already=False, text=text)


def scenario_text(scenario: Scenario) -> str:
    """The words of a scenario that its acceptance's hash covers, as said to her (as `sdd
    change show` says them: a field's further lines indented under it)."""
    lines = []
    for key in ("title", "steps", "expected"):
        first, *more = str(getattr(scenario, key)).splitlines() or [""]
        lines += [f"{key}: {first}", *(f"  {line}" for line in more)]
    return "\n".join(lines)


def accept_plan(
    root: Root, change_id: str, words: str | None = None, shown: str | None = None
) -> Acceptance:
    import hashlib

    from sdd_git.records.plan import acceptance_of, plan_bytes, plan_path, read_plan

    with person_write(root):
        pack = changes.load(root, change_id)
        path = plan_path(root, pack.id)
        if not path.exists():
            raise RecordError(
                f"{change_id} has no plan to accept (no {display(path)})",
                hint="a lead role drafts the plan; there is nothing to accept yet",
            )
        log = decisions.load(root)
        # A plan the network could not run (broken YAML, a bad node, a cycle of needs, a
        # decision that does not exist) is reported, never accepted. The hash is of the very
        # bytes that were checked (plan.plan_hash's sha256).
        _plan, digest = read_plan(path, decision_ids={e.id for e in log.entries})
        again = _again(change_id, path)
        same_as_read(f"the plan of {change_id}", shown, digest, again)
        # What she is told she accepted is those very bytes: read once more, and only if they
        # are still the ones checked and hashed (a hand edit can land between the two reads).
        data = plan_bytes(path)
        same_as_read(f"the plan of {change_id}", digest, hashlib.sha256(data).hexdigest(), again)
        text = data.decode("utf-8").rstrip("\n")
        existing = acceptance_of(log, pack.id, digest)
        if existing is not None:
            return Acceptance(existing, already=True, text=text)
        decision = decisions.append(
            root, "accept-plan", _words(words, pack.words), change=change_id, hash=digest
        )
        return Acceptance(decision, already=False, text=text)


def accept_failure(root: Root, ref: str, words: str) -> Decision:
    """Accept a required scenario's failure; the reading and other decisions stay as they are."""
    change_id, scenario_id = parse_scenario_ref(ref)
    if not words.strip():
        raise UsageError("say in your words why the failure is acceptable")
    with person_write(root):
        pack = changes.load(root, change_id)
        find_scenario(pack.folder, scenario_id)
        results = load_results(pack.folder)
        latest = latest_result(results, scenario_id)
        if latest is None or latest.result != "fail":
            state = "has no result" if latest is None else "last passed"
            raise RecordError(
                f"{change_id}/{scenario_id} {state}; there is no failure to accept",
                hint=f'record it first: sdd qa record {change_id}/{scenario_id} fail "WORDS"',
            )
        # The decision names the very result it accepts (its place in qa.yaml, which only
        # grows): a later failure of the same scenario is a new failure, not accepted.
        return decisions.append(
            root,
            "accept-failure",
            words,
            change=change_id,
            scenario=scenario_id,
            result=results.index(latest) + 1,
            result_at=latest.at,
        )


def record_qa(root: Root, ref: str, result: str, words: str) -> QaResult:
    change_id, scenario_id = parse_scenario_ref(ref)
    if result not in ("pass", "fail"):
        raise UsageError(f"a result is pass or fail, not {result!r}")
    if not words.strip():
        raise UsageError(
            "say what you saw, in your words", hint=f'sdd qa record {ref} {result} "..."'
        )
    with person_write(root):
        pack = changes.load(root, change_id)
        find_scenario(pack.folder, scenario_id)
        results = load_results(pack.folder)
        entry = QaResult(scenario_id, result, words, decisions.now_iso())
        from sdd_git.records.scenarios import qa_key
        from sdd_git.trust import ledger

        # Hers in the same step (CONTRACT §13): a result that arrives by git counts for nothing.
        key = qa_key(change_id, len(results) + 1)
        ledger.record(root, [(key, entry.as_dict())], "sdd qa record")
        write_text_atomic(qa_path(pack.folder), dump_yaml([r.as_dict() for r in [*results, entry]]))
        return entry


def replace_decision(root: Root, decision_id: str, words: str) -> Decision:
    if not words.strip():
        raise UsageError("the new decision's words are empty")
    with person_write(root):
        log = decisions.load(root)
        old = log.by_id(decision_id)
        if not log.counts(old):
            # What a replacement carries is the old decision's subject: from an entry she never
            # confirmed (or an id given twice), that subject is anyone's.
            raise RecordError(
                f"{decision_id} is not a decision you confirmed (it arrived or changed without "
                "you, or its id appears twice): replacing it would carry its subject over",
                hint="read it first: sdd trust review",
            )
        newer = log.replaced_by(decision_id)
        if newer is not None:
            raise RecordError(
                f"{decision_id} was already replaced by {newer}",
                hint=f'replace the current one instead: sdd decision replace {newer} "..."',
            )
        subject = {k: old.get(k) for k in decisions.SUBJECT_KEYS}
        return decisions.append(root, "replace", words, replaces=decision_id, **subject)
