"""Draft tools: write drafts the person then accepts or corrects, never a decision.

A drafted reading, scenario or plan is only a proposal: acceptance lives in `memory/decisions.yaml`,
which no tool here reads for writing. A proposed QA result goes to the gitignored
`.sdd/local/qa-proposals/`, never to `qa.yaml`.

These are the only tools that write inside `memory/`, `changes/` and `.sdd/local/`; like every
file tool they write through `beneath`, so no symlink on the way is ever followed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sdd_git import lockfile
from sdd_git.errors import RecordError
from sdd_git.records import decisions
from sdd_git.records.plan import MAX_DEPTH, RETURNS, parse_plan, write_plan
from sdd_git.records.proposals import proposal_path
from sdd_git.records.scenarios import (
    RESULTS,
    SCENARIO_ID,
    load_scenarios,
    next_scenario_id,
    scenarios_path,
)
from sdd_git.records.spec import parse_spec, read_spec, with_section_body
from sdd_git.toolnames import ToolClass
from sdd_git.tools import beneath
from sdd_git.tools.base import Args, BaseTool, ToolContext, ToolFailed, ToolOutcome
from sdd_git.tools.read import change_exists
from sdd_git.tools.schema import ID_CHARS, bounded, make_schema
from sdd_git.yamlio import dump_yaml, parse_yaml, read_list

READING_SECTION = "S1"
_HEADING_LINE = re.compile(r"^## S\d+(?:[ \t]|$)", re.MULTILINE)
_CHECK_LINE = re.compile(r"^[ \t]*- C\d+:", re.MULTILINE)
_CHECK_PREFIX = re.compile(r"^\s*(?:-\s*)?C\d+:\s*")
_SCENARIO_KEYS = ("title", "steps", "expected")
RECORD_READ_LIMIT = 64 * 1024 * 1024  # far above any record file; a bound, not a cut


def _write(context: ToolContext, path: Path, text: str) -> None:
    beneath.write_atomic(context.root.path, path, text.encode("utf-8"))


def _old_text(context: ToolContext, path: Path) -> str:
    """The file's text as it is, read without following a symlink out; "" when missing."""
    with beneath.folder(context.root.path) as top:
        found = top.resolve(path)
        if found.status is None:
            return ""
        return top.read(found, RECORD_READ_LIMIT).data.decode("utf-8")


def appended_list_text(
    context: ToolContext, path: Path, existing: list[Any], new_items: list[Any]
) -> str:
    """The file's text with `new_items` appended to its YAML list, every earlier byte kept.

    When the file's shape does not allow a plain append (a flow list, say), the whole list is
    written again with the same values.
    """
    expected = [*existing, *new_items]
    old = _old_text(context, path)
    if old.strip():
        if not old.endswith("\n"):
            old += "\n"
        candidate = old + dump_yaml(new_items)
        try:
            if parse_yaml(candidate, path) == expected:
                return candidate
        except RecordError:
            pass
    return dump_yaml(expected)


CHANGE = bounded(ID_CHARS, "the change id, e.g. CH-0001")  # the run's own: the guard holds it


class DraftTool(BaseTool):
    tool_class: ToolClass = "draft"


class DraftReading(DraftTool):
    produces = ("reading",)
    schema = make_schema(
        "draft_reading",
        "Draft the reading (section S1 of the change's spec): a short statement of what the "
        "person asked for, and its checks. The person accepts or corrects it.",
        {
            "change": CHANGE,
            "text": {
                "type": "string",
                "description": "the reading in plain words, without headings or check lines",
            },
            "checks": {
                "type": "array",
                "items": {"type": "string"},
                "description": "one line each: something to try that shows the reading holds; "
                "numbered C1, C2, ... in this order",
            },
        },
        ("change", "text", "checks"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        change_id = args.text("change").strip()
        text = args.text("text").strip()
        checks = [_CHECK_PREFIX.sub("", c).strip() for c in args.text_list("checks", empty_ok=True)]
        for index, check in enumerate(checks, 1):
            if not check:
                raise ToolFailed(f"draft_reading: check {index} has no text")
            if "\n" in check:
                raise ToolFailed(f"draft_reading: check {index} spans lines; a check is one line")
        if _HEADING_LINE.search(text):
            raise ToolFailed("draft_reading: the text may not hold a section heading ('## S2 ...')")
        if _CHECK_LINE.search(text):
            raise ToolFailed(
                "draft_reading: the text holds check lines ('- C1: ...'); "
                "give the checks in 'checks' instead"
            )
        check_ids = [f"C{n}" for n in range(1, len(checks) + 1)]
        body = text
        if checks:
            body += "\n\n" + "\n".join(
                f"- {cid}: {c}" for cid, c in zip(check_ids, checks, strict=True)
            )
        root = context.root
        with lockfile.hold(root.record_lock):
            pack = change_exists(context, change_id)
            spec_path = root.spec_file(pack.spec)
            if not spec_path.is_file():
                raise ToolFailed(f"{change_id} names the spec {pack.spec}, which is not there")
            spec = read_spec(spec_path)
            section = next((s for s in spec.sections if s.id == READING_SECTION), None)
            if section is None:
                raise ToolFailed(f"{pack.spec} has no section {READING_SECTION} (the reading)")
            if decisions.load(root).section_acceptance(section.full_id, section.hash):
                raise ToolFailed(
                    f"the reading of {change_id} is accepted; "
                    "an accepted section is never redrafted"
                )
            new_text = with_section_body(spec, READING_SECTION, body)
            drafted = parse_spec(spec_path, new_text).section(READING_SECTION)
            if [c.id for c in drafted.checks] != check_ids:
                raise ToolFailed("draft_reading: the drafted checks would not read back as given")
            if pack.corrected:
                where = proposal_path(pack)
                _write(context, where, body + "\n")
                shown = where.relative_to(root.path).as_posix()
                return ToolOutcome(
                    f"The reading of {change_id} holds the person's own correction, which no "
                    f"draft replaces. Your reading is kept beside it as a proposal ({shown}); "
                    "she may take it.",
                    {"proposal": shown, "checks": check_ids},
                )
            _write(context, spec_path, new_text)
        listed = ", ".join(check_ids) if check_ids else "no checks"
        return ToolOutcome(
            f"Drafted {drafted.full_id} (the reading of {change_id}) with {listed}. "
            "It is a draft: only the person accepts it.",
            {"section": drafted.full_id, "checks": check_ids},
        )


class DraftScenarios(DraftTool):
    produces = ("scenario",)
    schema = make_schema(
        "draft_scenarios",
        "Add draft scenarios (things the person can try) to a change; "
        "the person accepts them, as required or optional.",
        {
            "change": CHANGE,
            "scenarios": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {"type": "string", "description": "a short name"},
                        "steps": {
                            "type": ["string", "array"],
                            "items": {"type": "string"},
                            "description": "what to do: a text, or a list of steps",
                        },
                        "expected": {"type": "string", "description": "what should happen"},
                    },
                    "required": list(_SCENARIO_KEYS),
                    "additionalProperties": False,
                },
            },
        },
        ("change", "scenarios"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        change_id = args.text("change").strip()
        drafts: list[dict[str, str]] = []
        for index, item in enumerate(args.objects("scenarios"), 1):
            unknown = sorted(str(k) for k in item if k not in _SCENARIO_KEYS)
            if unknown:
                raise ToolFailed(
                    f"draft_scenarios: scenario {index} has unknown key {', '.join(unknown)}; "
                    "a scenario has title, steps and expected"
                )
            draft: dict[str, str] = {}
            for key in _SCENARIO_KEYS:
                value = item.get(key)
                if key == "steps" and isinstance(value, list):
                    # What models send: a list of steps. Kept as her text would be, a line each.
                    if not value or not all(isinstance(v, str) and v.strip() for v in value):
                        raise ToolFailed(
                            f"draft_scenarios: scenario {index} has an empty step or a step "
                            "that is not text"
                        )
                    value = "\n".join(v.strip() for v in value)
                if not isinstance(value, str) or not value.strip():
                    raise ToolFailed(f"draft_scenarios: scenario {index} needs text for '{key}'")
                draft[key] = value.strip()
            drafts.append(draft)
        root = context.root
        with lockfile.hold(root.record_lock):
            pack = change_exists(context, change_id)
            path = scenarios_path(pack.folder)
            existing = load_scenarios(pack.folder)  # a broken file is reported, never rewritten
            raw = read_list(path, root.path)
            new_items: list[dict[str, Any]] = []
            ids: list[str] = []
            for draft in drafts:
                scenario_id = next_scenario_id(existing) if not ids else _after(ids[-1])
                ids.append(scenario_id)
                new_items.append({"id": scenario_id, **draft, "required": True})
            _write(context, path, appended_list_text(context, path, raw, new_items))
        refs = [f"{change_id}/{i}" for i in ids]
        return ToolOutcome(
            f"Drafted {', '.join(refs)}. They are drafts: only the person accepts a scenario, "
            "as required or optional.",
            {"scenarios": refs},
        )


def _after(scenario_id: str) -> str:
    match = SCENARIO_ID.match(scenario_id)
    assert match is not None
    return f"SC-{int(match.group(1)) + 1}"


_PLAN_RULE = {
    "type": "object",
    "properties": {
        "tool": {"type": "string"},
        "inputs": {"type": "object", "properties": {}, "additionalProperties": True},
    },
    "required": ["tool"],
    "additionalProperties": False,
}


def _plan_node_schema(depth: int) -> dict[str, Any]:
    """A plan node, its children spelled out level by level rather than by a recursive $ref:
    grammar-decoding servers handle plain nesting, and the depth limit is then in the schema
    itself. Only the root level carries descriptions; each one costs context on every call."""

    def said(schema: dict[str, Any], description: str) -> dict[str, Any]:
        return {**schema, "description": description} if depth == 0 else schema

    rule_list = {"type": "array", "items": _PLAN_RULE}
    properties: dict[str, Any] = {
        "id": said({"type": "string", "maxLength": ID_CHARS}, "N1, N2, ...: unique in the plan"),
        "scope": said(
            {"type": "string", "maxLength": ID_CHARS}, "the service or module, by its bare name"
        ),
        "owner": said({"type": "string", "maxLength": ID_CHARS}, "the role that owns that scope"),
        "task": said({"type": "string"}, "what the owner does, in plain words"),
        "needs": said(
            {"type": "array", "items": {"type": "string", "maxLength": ID_CHARS}},
            "node ids, or decision ids (D-0001), whose results must exist first",
        ),
        "returns": said({"type": "string", "enum": list(RETURNS)}, "what the owner hands back"),
        "boundary": said(
            {
                "type": "object",
                "properties": {"always_allow": rule_list, "ask_first": rule_list},
                "additionalProperties": False,
            },
            "the owner's approvals for this task, e.g. {ask_first: [{tool: git_push}]}",
        ),
    }
    if depth < MAX_DEPTH:
        properties["children"] = said(
            {"type": "array", "items": _plan_node_schema(depth + 1)},
            f"sub-tasks that this node's owner starts (at most {MAX_DEPTH} levels down)",
        )
    return {
        "type": "object",
        "properties": properties,
        "required": ["id", "scope", "owner", "task", "returns"],
        "additionalProperties": False,
    }


def _require_lead(context: ToolContext) -> None:
    """Only a lead (a role whose `produces` is plan) drafts a plan, whatever it is offered."""
    from sdd_git.roles.registry import find_role

    role, _ = find_role(context.root, context.role, use_cache=False)
    if role.produces != "plan":
        raise ToolFailed(
            f"draft_plan: {context.role} produces {role.produces}; only a lead drafts a plan"
        )


class DraftPlan(DraftTool):
    """A lead's plan for work that crosses scopes. Only leads are offered it (`produces: plan`);
    the plan binds nobody until the person accepts it by its hash."""

    produces = ("plan",)
    schema = make_schema(
        "draft_plan",
        "Draft the plan of a change that crosses scopes: a tree of tasks, each for the owner "
        "role of one scope. The person accepts it before anyone works on it.",
        {
            "change": CHANGE,
            "nodes": {
                "type": "array",
                "minItems": 1,
                "items": _plan_node_schema(0),
                "description": "the root tasks, each with its children",
            },
        },
        ("change", "nodes"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        change_id = args.text("change").strip()
        nodes = args.objects("nodes")
        root = context.root
        _require_lead(context)
        change_exists(context, change_id)
        known = {entry.id for entry in decisions.load(root).entries}
        try:
            plan = parse_plan({"nodes": nodes}, "draft_plan", decision_ids=known)
        except RecordError as exc:
            # The hint is how to fix it; the model needs it as much as the person would.
            raise ToolFailed(f"{exc.message}; {exc.hint}" if exc.hint else exc.message) from None
        digest = write_plan(
            root, change_id, plan.nodes, write=lambda path, text: _write(context, path, text)
        )
        where = f"changes/{change_id}/plan.yaml"
        ids = list(plan.ids)
        return ToolOutcome(
            f"Drafted the plan of {change_id} ({where}) with nodes {', '.join(ids)}. "
            "It waits for the person's acceptance: no node runs until she accepts it. "
            "Drafting it again replaces this draft.",
            {"plan": where, "nodes": ids, "hash": digest},
        )


class ProposeQaResult(DraftTool):
    schema = make_schema(
        "propose_qa_result",
        "Propose a QA result (pass or fail) for a scenario; the person reviews it and records "
        "the result herself.",
        {
            "scenario": bounded(ID_CHARS, "the scenario, e.g. CH-0001/SC-1"),
            "result": {"type": "string", "enum": list(RESULTS)},
            "words": {"type": "string", "description": "what was tried and seen, in plain words"},
        },
        ("scenario", "result", "words"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        ref = args.text("scenario").strip()
        change_id, _, scenario_id = ref.partition("/")
        if not SCENARIO_ID.match(scenario_id):
            raise ToolFailed(
                f"propose_qa_result: {ref!r} is not a scenario; name one as CH-0001/SC-1"
            )
        result = args.text("result").strip()
        if result not in RESULTS:
            raise ToolFailed(f"propose_qa_result: 'result' must be pass or fail, not {result!r}")
        words = args.text("words")
        pack = change_exists(context, change_id)
        if not any(s.id == scenario_id for s in load_scenarios(pack.folder)):
            raise ToolFailed(f"no scenario {scenario_id} in {change_id}")
        entry = {
            "role": context.role,
            "run": context.run_id,
            "scenario": f"{change_id}/{scenario_id}",
            "result": result,
            "words": words,
            "at": decisions.now_iso(),
        }
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        proposals = context.root.local / "qa-proposals" / f"{change_id}.jsonl"
        beneath.append(context.root.path, proposals, line.encode("utf-8"))
        return ToolOutcome(
            f"Proposed {result} for {change_id}/{scenario_id}. This is only a proposal: "
            "the person records the QA result; nothing is recorded until she does.",
            {"proposal": entry},
        )


class Remember(DraftTool):
    schema = make_schema(
        "remember",
        "Keep a short note in your own memory for later runs.",
        {"note": {"type": "string", "description": "the note, in plain words"}},
        ("note",),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        note = args.text("note")
        path = context.local / "memory.yaml"
        existing = read_list(path, context.root.path)
        entry = {"note": note, "at": decisions.now_iso(), "run": context.run_id}
        _write(context, path, appended_list_text(context, path, existing, [entry]))
        return ToolOutcome(
            f"Remembered (note {len(existing) + 1} in your memory).", {"notes": len(existing) + 1}
        )
