"""A run's progress as sentences, for her live view: "The builder is reading src/search.py", "The
builder wants to create src/search.py (2 lines): waiting for you". What a sentence leaves out (a
provider call, a tool's raw result, the arguments of a call) stays in the run's log, one click
away (`sdd role log` and the page's /runs/RUN read it whole, with runner.control.event_text)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdd_git.page.herwords import capital, for_her, role_words
from sdd_git.runner import logevents

Event = dict[str, Any]

# A route (network.route) in her words; `{who}` is the role it names.
_ROUTES = {
    "reading": "Nothing is accepted yet, so {who} drafts a short reading of your words.",
    "plan": "This change crosses parts of your product, so {who} drafts a plan for you to "
    "accept before anyone writes.",
    "service": "{who} works on it, as the reading you accepted says.",
    "connection": "{who} works on the connection between two parts of your product.",
    "node": "{who} does its step of the plan you accepted.",
}
_DECISIONS = {
    "allow_once": "You allowed it, this once.",
    "allow_for_run": "You allowed it, for the rest of this run.",
    "always_allow": "You allowed it, from now on too.",
    "deny": "You said no: nothing was done.",
    "expired": "Nobody answered in time, so it was not done.",
    "stop_now": "You asked it to stop.",
}
_ENDED = {
    "done": "{who} is done.",
    "failed": "{who} could not finish.",
    "interrupted": "{who} was interrupted.",
    "stopped-now": "{who} stopped, as you asked. What is done stays done.",
    "expired": "{who} stopped: nobody answered in time.",
    "no-draft": "{who} ended without drafting anything.",
    "missing": "{who} could not start.",
}
_READING = {  # what a read tool is doing, with the main input it names
    "read_file": ("is reading {path}", "path"),
    "list_files": ("looks at the files in {path}", "path"),
    "search_files": ("searches the files for “{pattern}”", "pattern"),
    "git_status": ("looks at what changed in the product", ""),
    "git_log": ("reads the product's history", ""),
    "git_diff": ("reads what changed in the product", ""),
    "read_record": ("reads your record", ""),
    "use_skill": ("follows the skill {name}", "name"),
    "connector_read": ("reads from {connector}", "connector"),
    "draft_reading": ("drafts the reading", ""),
    "draft_scenarios": ("drafts scenarios to try", ""),
    "draft_plan": ("drafts the plan", ""),
    "propose_qa_result": ("proposes a result for you to record", ""),
    "remember": ("makes a note to remember", ""),
}


class Sentences:
    """Turns a run's events into sentences; `labels` names each role as she knows it."""

    def __init__(self, root: Path | None, labels: Callable[[str], str | None]) -> None:
        self.root = root
        self.labels = labels
        self.role = ""  # the run's author, once its start is seen

    def who(self, name: object = None) -> str:
        """The role, as a sentence starts with it: "The builder" ("It" before one is named)."""
        return capital(self.whom(name))

    def whom(self, name: object = None) -> str:
        """The role inside a sentence: "the builder"."""
        named = str(name or self.role or "")
        return role_words(named, self.labels(named)) if named else "it"

    def __call__(self, record: Event) -> str | None:
        """The sentence for an event, or None when it is not hers to read (it stays in the log)."""
        event = logevents.parse(record)
        if isinstance(event, _BY_A_ROLE) and event.role and not self.role:
            self.role = str(event.role)  # a run that did not start here
        says = _SAYS.get(type(event))
        said = says(self, event) if says is not None else None
        return for_her(said) if said else None

    def _run_started(self, e: logevents.RunStarted) -> str:
        roles = e.roles or []
        self.role = str(roles[0]) if roles else ""
        checked = f", checked by {role_words(roles[1], self.labels(roles[1]))}" if roles[1:] else ""
        return f"{self.who()} starts{checked}: “{' '.join(str(e.task or '').split())}”"

    def _route(self, e: logevents.Route) -> str | None:
        roles = e.extra.get("roles") or [self.role]
        said = _ROUTES.get(str(e.route))
        return capital(said.format(who=self.whom(roles[0]))) if said else None

    def _plan(self, e: logevents.Plan) -> str | None:
        checks = [str(c).rsplit("/", 1)[-1] for c in e.checks or []]
        if not checks:
            return None
        listed = checks[0] if len(checks) == 1 else f"{', '.join(checks[:-1])} and {checks[-1]}"
        return f"It keeps to the checks you accepted: {listed}."

    def _provider_call(self, e: logevents.ProviderCall) -> str | None:
        if e.purpose == "critic":
            return f"{self.who(e.role)} checks the draft against your reading."
        if e.purpose == "revision":
            return f"{self.who(e.role)} revises its draft."
        return None

    def _reply(self, e: logevents.Reply) -> str | None:
        text = " ".join(str((e.message or {}).get("content") or "").split())
        if not text:
            return None
        short = text if len(text) <= 240 else text[:237] + "..."
        return f"{self.who(e.role)} says: “{short}”"

    def _tool_call(self, e: logevents.ToolCall) -> str | None:
        reading = _READING.get(str(e.tool))
        if reading is None:  # an action: its stop, or what was done, says it
            return None
        words, key = reading
        args = e.args if isinstance(e.args, dict) else {}
        value = " ".join(str(args.get(key) or "").split()) if key else ""
        if key and not value:
            value = "the product" if key == "path" else "something"
        return f"{self.who(e.role)} {words.format(**{key: value} if key else {})}."

    def _draft(self, e: logevents.Draft) -> str:
        return f"{self.who()} drafted: “{_short(e.text)}”"

    def _revision(self, e: logevents.Revision) -> str:
        return f"{self.who()} revised its draft: “{_short(e.text)}”"

    def _critique(self, e: logevents.Critique) -> str:
        who = self.who(e.role)
        gaps = [g for g in e.gaps or [] if isinstance(g, dict)]
        if not gaps:
            return f"{who} found nothing missing."
        said = "; ".join(_short(g.get("text")) for g in gaps)
        return f"{who} found {'a gap' if len(gaps) == 1 else f'{len(gaps)} gaps'}: {said}"

    def _stop(self, e: logevents.Stop) -> str | None:
        from sdd_git.runner.words import heading

        kind = e.kind_
        if kind == "approval":
            args = e.args if isinstance(e.args, dict) else {}
            action = heading(str(e.tool or ""), args, self.root)
            return f"{self.who()} wants to {action[:1].lower()}{action[1:]}: waiting for you."
        if kind == "draft":
            return f"{self.who()} waits for you: go on with its draft, or not."
        if kind in ("reading", "plan"):
            return f"The {kind} is drafted: it waits for you to read it."
        if kind == "no-spec":
            return "Nothing can be done for this change yet: accept its reading first."
        return "It waits for you."

    def _decision(self, e: logevents.Decision) -> str | None:
        return _DECISIONS.get(str(e.choice))

    def _action_done(self, e: logevents.ActionDone) -> str:
        by = {
            "saved_rule": " (a rule you saved allows it)",
            "for_run": " (you allowed it for this run)",
        }.get(str(e.by), "")
        return f"{self.who()} {_done_words(e)}{by}."

    def _action_failed(self, e: logevents.ActionFailed) -> str:
        return f"{self.who()} tried, and could not do it: {e.reason}."

    def _rejected(self, e: logevents.Rejected) -> str:
        return f"Refused: {e.message or 'that is not allowed'}."

    def _rehearsed(self, e: logevents.Rehearsed) -> str:
        from sdd_git.runner.words import heading

        args = e.args if isinstance(e.args, dict) else {}
        action = heading(str(e.tool or ""), args, self.root)
        would = str(e.would or "").replace("the person", "you")
        return f"This is a test, so nothing runs. In a real run, “{action}” would {would}."

    def _artifact(self, e: logevents.Artifact) -> str:
        return f"{self.who(e.owner)} handed back {e.ref}: {_short(e.summary)}"

    def _handoff(self, e: logevents.Handoff) -> str:
        to = role_words(str(e.to or ""), self.labels(str(e.to or "")))
        if e.sent is False:
            return f"{self.who()} could not hand the task to {to}: messages between roles are off."
        return f"{self.who()} handed the task to {to}."

    def _say(self, e: logevents.Say) -> str:
        return str(e.text or "")

    def _error(self, e: logevents.RunError) -> str:
        return f"It could not go on: {e.message}"

    def _warning(self, e: logevents.RunWarning) -> str:
        return str(e.message or "").removeprefix("warning: ")

    def _run_ended(self, e: logevents.RunEnded) -> str | None:
        said = _ENDED.get(str(e.status))
        return said.format(who=self.who()) if said else None


_BY_A_ROLE = (logevents.ProviderCall, logevents.ToolCall, logevents.Reply)
_SAYS: dict[type[logevents.LogEvent], Callable[[Sentences, Any], str | None]] = {
    logevents.RunStarted: Sentences._run_started,
    logevents.Route: Sentences._route,
    logevents.Plan: Sentences._plan,
    logevents.ProviderCall: Sentences._provider_call,
    logevents.Reply: Sentences._reply,
    logevents.ToolCall: Sentences._tool_call,
    logevents.Draft: Sentences._draft,
    logevents.Revision: Sentences._revision,
    logevents.Critique: Sentences._critique,
    logevents.Stop: Sentences._stop,
    logevents.Decision: Sentences._decision,
    logevents.ActionDone: Sentences._action_done,
    logevents.ActionFailed: Sentences._action_failed,
    logevents.Rejected: Sentences._rejected,
    logevents.Rehearsed: Sentences._rehearsed,
    logevents.Artifact: Sentences._artifact,
    logevents.Handoff: Sentences._handoff,
    logevents.Say: Sentences._say,
    logevents.RunError: Sentences._error,
    logevents.RunWarning: Sentences._warning,
    logevents.RunEnded: Sentences._run_ended,
}


def _done_words(e: logevents.ActionDone) -> str:
    args = e.args if isinstance(e.args, dict) else {}
    tool = str(e.tool or "")
    if tool == "write_file":
        return f"wrote {args.get('path')}"
    if tool == "delete_file":
        return f"deleted {args.get('path')}"
    if tool == "run_command":
        return "ran the command"
    if tool == "git_commit":
        return f"committed {', '.join(str(p) for p in args.get('paths') or [])}"
    if tool == "git_push":
        return "pushed"
    if tool == "git_tag":
        return f"wrote the tag {args.get('name')}"
    return tool.replace("_", " ")


def _short(text: object) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= 200 else flat[:197] + "..."


def sentences_for(root: Path | None) -> Sentences:
    """Sentences for one job, naming roles by their labels (the registry read once, on the
    first role named)."""
    found: dict[str, str] = {}
    loaded: list[bool] = []

    def label(name: str) -> str | None:
        if not loaded and root is not None:
            loaded.append(True)
            from sdd_git.errors import SddError
            from sdd_git.roles.registry import load_registry
            from sdd_git.root import Root

            # Roles that cannot be read now are named by their names.
            with contextlib.suppress(SddError, OSError):
                found.update({r.name: r.label for r in load_registry(Root(root)).roles})
        return found.get(name)

    return Sentences(root, label)
