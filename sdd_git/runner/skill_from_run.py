"""A skill saved from work: `sdd skill save --from RUN NAME` turns a completed run into a draft
Agent Skill, and `sdd skill save --accept NAME` makes it one of the product's skills.

The draft is the run read back: when to use it (the task), its inputs (the accepted section, the
files it read), its steps (the tool calls that ran, in order, in the words a stop uses), how to
check it (the plan's checks, the commands it ran), what to return (its last answer) and what
needs approval (every consequential call that stopped or ran under a saved rule). It is a draft
for the person to read, correct and accept, never a skill by itself:

- drafts live in `.sdd/local/skill-drafts/NAME/SKILL.md`, which is gitignored and where no run
  looks for skills, so nothing a draft says reaches a model before she accepts it;
- accepting moves the folder to `.sdd/skills/NAME/`, the product's own skill folder (where
  `sdd skill list` and every run find it), and never replaces a skill without `--force`.

The run log is masked when written; the draft is masked again with the secrets within reach now,
so a key that was not set then and is now does not slip through either.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sdd_git import statefolders
from sdd_git.errors import RecordError, SddError, UsageError
from sdd_git.paths import display
from sdd_git.root import Root
from sdd_git.runner import logevents
from sdd_git.runner.runlog import Event, log_path, read_events
from sdd_git.toolnames import LOOP_TOOLS as _LOOP_TOOLS
from sdd_git.toolnames import TOOL_CLASSES

DRAFT_STATUS = "draft"
ACCEPTED_STATUS = "accepted"
MAX_STEPS = 60  # past this, the rest is counted, and `sdd role log RUN` shows them
MAX_STEP_CHARS = 600
MAX_ANSWER_CHARS = 2000
_STATUS_LINE = re.compile(r"^(\s+sdd-status:\s*)[\"']?draft[\"']?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Draft:
    name: str
    path: Path  # the draft's SKILL.md
    run: str
    role: str
    replaces: Path | None = None  # an accepted skill of that name, which accepting would replace


@dataclass
class _Call:
    """One tool call of the run and what became of it."""

    tool: str
    args: dict[str, Any]
    call_id: str | None
    outcome: str = "asked"  # ran, rejected, stopped, failed, rehearsed
    stop: str | None = None
    decision: str | None = None  # allow_once, always_allow, deny, expired, stop_now
    by: str | None = None  # how it ran: allow_once, always_allow, saved_rule
    result: str = ""


@dataclass
class _Run:
    run: str
    role: str
    task: str
    origin: str
    status: str
    routine: str | None = None
    event: str | None = None
    change: str | None = None
    sections: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    answer: str = ""
    passes: int = 0
    critic: str | None = None
    artifacts: list[str] = field(default_factory=list)


def drafts_folder(root: Root) -> Path:
    return root.local / "skill-drafts"


def draft_file(root: Root, name: str) -> Path:
    return drafts_folder(root) / name / "SKILL.md"


def skill_file(root: Root, name: str) -> Path:
    """Where an accepted skill goes: the product's own skill folder, first in discovery."""
    return root.sdd / "skills" / name / "SKILL.md"


def check_name(name: str) -> None:
    from sdd_git.roles.skills import MAX_NAME, valid_name

    if not valid_name(name):
        raise UsageError(
            f"'{name}' is not a skill name",
            hint=f"1-{MAX_NAME} lowercase letters, digits and single hyphens, not first or "
            "last (e.g. fix-failing-test)",
        )


# --- saving a draft -------------------------------------------------------------------------


def save_draft(
    root: Root,
    run_id: str,
    name: str,
    *,
    force: bool = False,
    clock: Callable[[], float] = time.time,
) -> Draft:
    """Write the draft SKILL.md of a completed run. A person command: refused inside a run."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    check_name(name)
    run = read_run(root, run_id)
    target = draft_file(root, name)
    if target.exists() and not force:
        raise SddError(
            f"a draft '{name}' already exists ({display(target)}), perhaps with her edits",
            hint=f"accept it (sdd skill save --accept {name}), pick another name, or replace it "
            "with --force",
        )
    existing = _existing_skill(root, name)
    if existing is not None and not force:
        raise SddError(
            f"the product already has a skill '{name}' ({display(existing)})",
            hint="pick another name; --force saves the draft, and accepting it with --force "
            "would replace that skill",
        )
    text = skill_text(run, name, clock())
    write_text_atomic(target, _mask(root, text))
    return Draft(name, target, run.run, run.role, existing)


def read_run(root: Root, run_id: str) -> _Run:
    """The run, read from its log; refused unless it ended `done`."""
    events = read_events(log_path(root, run_id))
    started = next((e for e in events if e.get("event") == "run_started"), None)
    if started is None:
        raise RecordError(f"the run log of {run_id} has no run_started event: nothing to save")
    status = _final_status(events)
    if status != "done":
        raise SddError(
            f"run {run_id} "
            + ("is still running" if status == "running" else f"ended {status}")
            + ", not done: only a completed run becomes a skill",
            hint=_not_done_hint(status),
        )
    roles = [str(r) for r in started.get("roles") or []]
    run = _Run(
        run=run_id,
        role=roles[0] if roles else "unknown",
        task=str(started.get("task") or ""),
        origin=str(started.get("origin") or "person"),
        status=status,
        routine=_text(started.get("routine")),
        event=_text(started.get("event_id")),
        change=_text(started.get("change")),
        critic=roles[1] if len(roles) > 1 else None,
    )
    _read_calls(run, events)
    return run


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _final_status(events: list[Event]) -> str:
    ends = [e for e in events if e.get("event") in ("run_ended", "run_resumed")]
    if not ends or ends[-1].get("event") == "run_resumed":
        return "running"
    return str(ends[-1].get("status") or "unknown")


def _not_done_hint(status: str) -> str:
    if status == "running":
        return "wait for it to end; `sdd role runs` shows where it is"
    if status == "stopped":
        return "answer its stop (sdd stops, then sdd allow or sdd deny) and let it finish"
    return (
        "save a skill from a run that did the work: `sdd role runs` lists the runs and their ends"
    )


def _read_calls(run: _Run, events: list[Event]) -> None:
    reader = _CallReader(run)
    for event in map(logevents.parse, events):
        read = _READERS.get(type(event))
        if read is not None:
            read(reader, event)


class _CallReader:
    """Reads a run's tool calls, and what became of each, into `run`, event by event."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.by_id: dict[str, _Call] = {}
        self.by_stop: dict[str, _Call] = {}
        self.last: _Call | None = None

    def latest(self, tool: Any, args: Any = None) -> _Call | None:
        """The last call of `tool` (with these arguments, when given): the one an event that
        names no call id is about."""
        for call in reversed(self.run.calls):
            if call.tool == tool and (args is None or call.args == args):
                return call
        return self.latest(tool) if args is not None else None

    def plan(self, e: logevents.Plan) -> None:
        self.run.sections = [str(s) for s in e.sections or []]
        self.run.checks = [str(c) for c in e.checks or []]
        self.run.decisions = [str(d) for d in e.decisions or []]

    def tool_call(self, e: logevents.ToolCall) -> None:
        if e.role not in (self.run.role, None):
            return
        call = _Call(
            str(e.tool), dict(e.args) if isinstance(e.args, dict) else {}, _text(e.call_id)
        )
        self.run.calls.append(call)
        if call.call_id:
            self.by_id[call.call_id] = call
        self.last = call

    def rejected(self, e: logevents.Rejected) -> None:
        if self.last is not None and self.last.tool == e.tool:
            self.last.outcome = "rejected"

    def stop(self, e: logevents.Stop) -> None:
        if not e.stop:
            return
        found = self.by_id.get(str(e.call_id)) or self.latest(e.tool)
        if found is not None:
            found.outcome, found.stop = "stopped", str(e.stop)
            self.by_stop[found.stop] = found

    def decision(self, e: logevents.Decision) -> None:
        if e.stop in self.by_stop:
            self.by_stop[str(e.stop)].decision = str(e.choice)

    def action(self, e: logevents.ActionDone | logevents.ActionFailed) -> None:
        found = self.latest(e.tool, e.args)
        if found is not None:
            found.outcome = "ran" if isinstance(e, logevents.ActionDone) else "failed"
            found.by = _text(e.by)

    def rehearsed(self, e: logevents.Rehearsed) -> None:
        found = self.latest(e.tool, e.args)
        if found is not None:
            found.outcome = "rehearsed"

    def tool_result(self, e: logevents.ToolResult) -> None:
        found = self.by_id.get(str(e.call_id))
        if found is not None:
            found.result = str(e.content or "")
            if found.outcome == "asked":
                failed = found.result.startswith(("Rejected", f"{found.tool} failed"))
                found.outcome = "failed" if failed else "ran"

    def reply(self, e: logevents.Reply) -> None:
        content = e.message.get("content") if isinstance(e.message, dict) else None
        if e.role == self.run.role and isinstance(content, str) and content.strip():
            self.run.answer = content.strip()

    def provider_call(self, e: logevents.ProviderCall) -> None:
        if e.purpose == "critic":
            self.run.passes += 1

    def artifact(self, e: logevents.Artifact) -> None:
        shown = e.fields().items()
        self.run.artifacts.append(
            ", ".join(f"{k}: {v}" for k, v in shown if isinstance(v, str | int | float))
        )


_READERS: dict[type[logevents.LogEvent], Callable[[_CallReader, Any], None]] = {
    logevents.Plan: _CallReader.plan,
    logevents.ToolCall: _CallReader.tool_call,
    logevents.Rejected: _CallReader.rejected,
    logevents.Stop: _CallReader.stop,
    logevents.Decision: _CallReader.decision,
    logevents.ActionDone: _CallReader.action,
    logevents.ActionFailed: _CallReader.action,
    logevents.Rehearsed: _CallReader.rehearsed,
    logevents.ToolResult: _CallReader.tool_result,
    logevents.Reply: _CallReader.reply,
    logevents.ProviderCall: _CallReader.provider_call,
    logevents.Artifact: _CallReader.artifact,
}


# --- the text ---------------------------------------------------------------------------------


def skill_text(run: _Run, name: str, now: float) -> str:
    """The SKILL.md of a draft, frontmatter first, in the standard's block style."""
    import json

    from sdd_git.runner.words import visible

    task = visible(run.task, keep_newlines=False).strip() or "(no task words)"
    description = f"Use when a task asks for work like this: {task}"
    suffix = f" (saved from run {run.run} of the role {run.role})"
    room = 1024 - len(suffix)
    if len(description) > room:
        description = description[: room - 3].rstrip() + "..."
    description += suffix
    front = [
        "---",
        f"name: {name}",
        f"description: {json.dumps(description, ensure_ascii=False)}",
        "metadata:",
        f"  sdd-status: {DRAFT_STATUS}",
        f"  sdd-from-run: {json.dumps(run.run)}",
        f"  sdd-role: {json.dumps(run.role)}",
        f"  sdd-saved: {json.dumps(time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(now)))}",
        "---",
    ]
    body = [
        f"# {name}",
        "",
        f"A draft, saved by `sdd skill save --from {run.run} {name}` from what the role "
        f"{run.role} did in that run. Read it, correct it, then accept it with "
        f"`sdd skill save --accept {name}`. It grants nothing: every action below still passes "
        "the role's boundary.",
        "",
        "## When to use it",
        "",
        "When a task asks for the same kind of work as this one:",
        "",
        *_quote(run.task),
        "",
        "## Inputs",
        "",
        *_inputs(run),
        "",
        "## Steps",
        "",
        *_steps(run),
        "",
        "## How to check it",
        "",
        *_checks(run),
        "",
        "## What to return",
        "",
        *_returns(run),
        "",
        "## What needs approval",
        "",
        *_approvals(run),
    ]
    return "\n".join(front + body).rstrip() + "\n"


def _quote(text: str, limit: int | None = None) -> list[str]:
    from sdd_git.runner.words import visible

    shown = visible(text.strip() or "(nothing)", keep_newlines=True)
    if limit is not None and len(shown) > limit:
        shown = shown[:limit].rstrip() + " [...]"
    return ["> " + line if line else ">" for line in shown.split("\n")]


def _inputs(run: _Run) -> list[str]:
    from sdd_git.runner.words import visible

    lines = ["- The task, in the person's words (above)."]
    if run.origin == "routine" and run.routine:
        lines.append(
            f"- The event that fires the routine {run.routine} (its kind and ref): this run "
            f"answered the event {run.event or 'named in its log'}."
        )
    if run.sections:
        decided = f" (decisions {', '.join(run.decisions)})" if run.decisions else ""
        lines.append(f"- The accepted spec section(s) {', '.join(run.sections)}{decided}.")
    if run.change:
        lines.append(f"- The change it served: {run.change} (`sdd change show {run.change}`).")
    reads: dict[str, None] = {}
    for call in run.calls:
        if call.outcome == "rejected":
            continue
        if call.tool == "read_file" and call.args.get("path"):
            reads[f"`{visible(str(call.args['path']), keep_newlines=False)}`"] = None
        elif call.tool == "read_record":
            shown = ", ".join(f"{k}={v}" for k, v in call.args.items() if k != "purpose")
            reads[f"the record ({visible(shown, keep_newlines=False)})"] = None
        elif call.tool == "use_skill" and call.args.get("name"):
            reads[f"the skill {visible(str(call.args['name']), keep_newlines=False)}"] = None
    if reads:
        lines.append("- What it read: " + ", ".join(reads) + ".")
    return lines


def _step_words(call: _Call) -> str:
    from sdd_git.runner.words import describe, visible

    args = {k: v for k, v in call.args.items() if k != "purpose"}
    said = describe(call.tool, args)
    if call.tool == "write_file":  # the content is this run's output, not a step to repeat
        said = said.split(", starting:", 1)[0] + "."
    purpose = call.args.get("purpose")
    if purpose:
        said = said.rstrip(".\n") + f', because "{visible(str(purpose), keep_newlines=False)}".'
    if len(said) > MAX_STEP_CHARS:
        said = said[:MAX_STEP_CHARS].rstrip() + " [...]"
    return said


def _indented(number: int, text: str) -> str:
    lines = text.split("\n")
    pad = " " * (len(str(number)) + 2)
    return "\n".join([f"{number}. {lines[0]}", *(pad + line if line else "" for line in lines[1:])])


def _steps(run: _Run) -> list[str]:
    kept = [
        c
        for c in run.calls
        if c.outcome in ("ran", "stopped", "rehearsed")
        and c.decision not in ("deny", "expired", "stop_now")
        and c.tool not in _LOOP_TOOLS
    ]
    words: list[str] = []
    for call in kept:
        said = _step_words(call)
        if not words or words[-1] != said:
            words.append(said)
    lines = [_indented(n, said) for n, said in enumerate(words[:MAX_STEPS], start=1)]
    if len(words) > MAX_STEPS:
        lines.append(
            f"{MAX_STEPS + 1}. ... and {len(words) - MAX_STEPS} more: `sdd role log {run.run}`."
        )
    if run.critic:
        lines.append(
            f"{len(lines) + 1}. Have {run.critic} critique the draft "
            f"(`--with {run.critic}`); this run took {run.passes} pass(es)."
        )
    if not lines:
        lines = ["1. Answer from what the task and the inputs say: this run called no tool."]
    skipped = [c for c in run.calls if c.outcome in ("rejected", "failed") or c.decision == "deny"]
    if skipped:
        lines += [
            "",
            f"Left out: {len(skipped)} call(s) that were rejected, failed or denied in the run.",
        ]
    return lines


def _exit_line(result: str) -> str:
    first = result.strip().split("\n", 1)[0]
    return first if first.startswith("exit code") else ""


def _checks(run: _Run) -> list[str]:
    lines: list[str] = []
    if run.checks:
        lines.append(
            f"- The checks of the accepted section: {', '.join(run.checks)}"
            + (f" (`sdd change show {run.change}`)." if run.change else ".")
        )
    for call in run.calls:
        if call.tool == "run_command" and call.outcome == "ran":
            command = str(call.args.get("command", "")).strip()
            from sdd_git.runner.words import visible

            shown = visible(command, keep_newlines=False)
            if len(shown) > MAX_STEP_CHARS:
                shown = shown[:MAX_STEP_CHARS] + " [...]"
            last = _exit_line(call.result)
            lines.append(f"- Run `{shown}`" + (f" (in this run: {last})." if last else "."))
    if not lines:
        lines.append("- Compare the result with what the task asked, word by word.")
    return lines


def _returns(run: _Run) -> list[str]:
    lines = ["The answer this run ended with:", "", *_quote(run.answer, MAX_ANSWER_CHARS)]
    if run.artifacts:
        lines += ["", "And what it returned: " + "; ".join(run.artifacts) + "."]
    drafts = sorted(
        {
            c.tool
            for c in run.calls
            if c.outcome == "ran" and c.tool.startswith(("draft_", "propose_"))
        }
    )
    if drafts:
        lines += ["", "Drafts for the person to accept, never accepted by the role: "
                  + ", ".join(drafts) + "."]  # fmt: skip
    return lines


_DECIDED = {
    "allow_once": "the person allowed it once",
    "allow_for_run": "the person allowed it for the rest of the run",
    "always_allow": "the person allowed it and saved the rule",
    "deny": "the person denied it",
    "expired": "nobody answered in time: it expired and never ran",
    "stop_now": "the person stopped the run",
}


def _approvals(run: _Run) -> list[str]:
    lines: list[str] = []
    for call in run.calls:
        if TOOL_CLASSES.get(call.tool) != "consequential" or call.outcome == "rejected":
            continue
        said = _step_words(call).split("\n", 1)[0].rstrip(":")
        if call.stop is not None:
            how = _DECIDED.get(call.decision or "", "it waited for the person")
            lines.append(f"- {said} It stopped for approval: {how}.")
        elif call.by == "saved_rule":
            failed = ", and failed" if call.outcome == "failed" else ""
            lines.append(f"- {said} It ran under a rule the person saved (always allow){failed}.")
        elif call.outcome == "rehearsed":
            lines.append(f"- {said} In a test of a routine: not run.")
    if not lines:
        lines.append("- Nothing in this run needed approval: it read and drafted only.")
    lines += [
        "",
        "Writing, deleting, running a command, committing, pushing, tagging, pull requests, "
        "deploying and handing off always pass the role's boundary: they stop for the person "
        "unless she saved a rule for exactly that action.",
    ]
    return lines


def _mask(root: Root, text: str) -> str:
    from sdd_git.connectors.tokens import masker_for

    return masker_for(root.path)(text)


# --- accepting --------------------------------------------------------------------------------


def _existing_skill(root: Root, name: str) -> Path | None:
    from sdd_git.roles.skills import discover

    found = discover(root.path).get(name)
    if found is not None:
        return found.path
    own = skill_file(root, name)
    return own if own.parent.exists() else None


def accept_draft(root: Root, name: str, *, force: bool = False) -> Path:
    """Move the draft NAME into `.sdd/skills/NAME/`; its SKILL.md must pass the standard."""
    from sdd_git.roles.skills import SkillFileError, check_text
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    check_name(name)
    source = draft_file(root, name)
    if not source.is_file():
        known = sorted(p.parent.name for p in drafts_folder(root).glob("*/SKILL.md"))
        raise RecordError(
            f"no draft skill '{name}' ({display(source)})",
            hint="save one with: sdd skill save --from RUN NAME"
            + (f"; the drafts: {', '.join(known)}" if known else ""),
        )
    text = statefolders.read_text(source)  # a draft in .sdd/local: no link is followed
    checked = check_text(text, display(source), name)
    if not checked.ok:
        raise SkillFileError(p for p in checked.problems if p.severity == "error")
    existing = _existing_skill(root, name)
    if existing is not None and not force:
        raise SddError(
            f"the product already has a skill '{name}' ({display(existing)})",
            hint=f"accept it under another name (rename the draft's folder and its name:), or "
            f"replace that skill with: sdd skill save --accept {name} --force",
        )
    target = skill_file(root, name)
    _replace_folder(source.parent, target.parent, _STATUS_LINE.sub(
        rf"\g<1>{ACCEPTED_STATUS}", text, count=1))  # fmt: skip
    from sdd_git.roles.skills import front_matter
    from sdd_git.trust import ledger

    # She accepted it, as she read it: its front matter is hers (CONTRACT §13).
    key = target.relative_to(root.path).as_posix()
    ledger.record(root, [(key, front_matter(target, root.path))], "sdd skill save --accept")
    return target


def _replace_folder(draft: Path, target: Path, text: str) -> None:
    """The draft's folder, with its SKILL.md accepted, becomes `target`; a folder there (with
    --force) is swapped out in one rename and only then removed."""
    from sdd_git.atomicfile import write_text_atomic

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.accepting-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    shutil.copytree(draft, staging, symlinks=True)
    write_text_atomic(staging / "SKILL.md", text)
    old = target.parent / f".{target.name}.replaced-{os.getpid()}"
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    if old.exists():
        shutil.rmtree(old)
    shutil.rmtree(draft)
