"""The connector tools: the team's development tools, read inside the boundary and acted on only
when the person allows it.

`connector_read {connector, operation, args}` runs a READ operation of a connector attached to
the run, and a DRAFT one (a chat message), which only keeps a local draft for the person to send:
nothing leaves the machine. `connector_act {connector, operation, args, purpose}` is
consequential: the dispatch's boundary stops for it, naming the action in plain words. Which
class an operation is comes from the one operation table (`sdd_git.connectors.operations`); the
guard classified the call before it came here, and forbidden ones never do.

A record that is not there is `missing: <source>` (the connector and the record, no field of
it); every other failure is the connector's own words. Nothing is ever made up."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sdd_git.connectors.base import ACT, DRAFT, FORBIDDEN, ConnectorError, Missing
from sdd_git.connectors.config import ConnectorConfig, find_connector
from sdd_git.connectors.operations import classify
from sdd_git.toolnames import ToolClass
from sdd_git.tools.actionwords import connector_act_words
from sdd_git.tools.base import Args, BaseTool, ToolContext, ToolFailed, ToolOutcome
from sdd_git.tools.schema import PURPOSE, bounded, make_schema

ANSWER_HEAD_BYTES = 20 * 1024
ANSWER_TAIL_BYTES = 30 * 1024  # a log's end is where a build says why it failed
_CONNECTOR = bounded(40, "the connector's name, as attached to this run (e.g. github)")
_OPERATION = bounded(100, "the operation, as the service names it (e.g. get_issue)")
_ARGS = {
    "type": "object",
    "description": "the operation's arguments, e.g. {repo: acme/app, number: 12}",
    "properties": {},
    "additionalProperties": True,
}


def call_parts(args: Args) -> tuple[str, str, dict[str, Any]]:
    name = args.text("connector").strip()
    operation = args.text("operation").strip()
    given = args.raw.get("args")
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise ToolFailed(f"{args.tool}: 'args' must be an object of the operation's arguments")
    return name, operation, dict(given)


def missing_words(exc: Missing) -> str:
    return f"missing: {exc.source}" + (f" ({exc.why})" if exc.why else "")


def checked_operation(config: ConnectorConfig, operation: str, given: dict[str, Any]) -> str:
    """The operation's class in the one operation table. A forbidden one is refused here too:
    the guard said so first, so this is never reached, and kept as a wall."""
    verdict = classify(config.table_kind, operation, given, config.reads)
    if verdict.kind == FORBIDDEN:
        raise ToolFailed(f"{operation} on {config.name} is the person's: {verdict.why}")
    return verdict.kind


def head_and_tail(text: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= ANSWER_HEAD_BYTES + ANSWER_TAIL_BYTES:
        return text
    head = data[:ANSWER_HEAD_BYTES].decode("utf-8", errors="ignore")
    tail = data[-ANSWER_TAIL_BYTES:].decode("utf-8", errors="ignore")
    cut = len(data) - ANSWER_HEAD_BYTES - ANSWER_TAIL_BYTES
    return f"{head}\n[... {cut:,} bytes cut from the middle ...]\n{tail}"


class ConnectorTool(BaseTool):
    def _checked(
        self, args: Args, context: ToolContext
    ) -> tuple[str, str, dict[str, Any], str, ConnectorConfig]:
        name, operation, given = call_parts(args)
        if name not in context.connectors:
            raise ToolFailed(
                f"the connector {name} is not attached to this run; the person attaches one by "
                f"naming it in the task (@{name})"
            )
        config = find_connector(context.root, name)
        return name, operation, given, checked_operation(config, operation, given), config

    def _perform(
        self, context: ToolContext, config: ConnectorConfig, operation: str, given: dict[str, Any]
    ) -> ToolOutcome:
        from sdd_git.connectors.calls import call_connector

        name = config.name
        result = call_connector(
            context.root, name, operation, given, mask=context.mask, config=config
        )
        return ToolOutcome(head_and_tail(result.text), {"connector": name, "operation": operation})


class ConnectorRead(ConnectorTool):
    tool_class: ToolClass = "read"
    schema = make_schema(
        "connector_read",
        "Read a record of a connector attached to this run (an issue, a pull request, a build "
        "and its log, a test report, an artifact); a chat message becomes a draft the person "
        "sends herself.",
        {"connector": _CONNECTOR, "operation": _OPERATION, "args": _ARGS},
        ("connector", "operation"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        name, operation, given, kind, config = self._checked(args, context)
        if kind == ACT:
            raise ToolFailed(
                f"{operation} on {name} acts as the person; use connector_act, which asks her"
            )
        if kind == DRAFT:
            return _draft(context, name, operation, given)
        try:
            return self._perform(context, config, operation, given)
        except Missing as exc:
            return ToolOutcome(
                f"{missing_words(exc)}. Report it as missing; never guess what it holds.",
                {"connector": name, "operation": operation, "missing": exc.source},
            )
        except ConnectorError as exc:
            raise ToolFailed(exc.message + (f" ({exc.hint})" if exc.hint else "")) from None


class ConnectorAct(ConnectorTool):
    tool_class: ToolClass = "consequential"
    schema = make_schema(
        "connector_act",
        "Act as the person on a connector attached to this run (comment, open, update, merge, "
        "start a job, promote); it stops for the person, who allows it or not.",
        {
            "connector": _CONNECTOR,
            "operation": _OPERATION,
            "args": _ARGS,
            "purpose": PURPOSE,
        },
        ("connector", "operation", "purpose"),
    )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        args.text("purpose")
        name, operation, given, kind, config = self._checked(args, context)
        if kind == DRAFT:
            raise ToolFailed(
                f"{operation} on {name} makes a draft for the person to send; use connector_read"
            )
        try:
            return self._perform(context, config, operation, given)
        except Missing as exc:
            words = missing_words(exc)
            return ToolOutcome.nothing_done(
                f"{words}. Nothing was done; tell the person, and never report it as done.", words
            )
        except ConnectorError as exc:
            raise ToolFailed(
                "nothing was done: " + exc.message + (f" ({exc.hint})" if exc.hint else "")
            ) from None

    def describe(
        self, args: dict[str, Any], root: Path | None = None, sandbox: str | None = None
    ) -> str:
        return connector_act_words(args, root)


def _draft(context: ToolContext, name: str, operation: str, given: dict[str, Any]) -> ToolOutcome:
    """A chat message a role wrote: kept as a draft, posted only by the person's `sdd send`."""
    from sdd_git.connectors.drafts import keep_draft, shown_channel
    from sdd_git.masking.returned import mask_returned

    channel, text = given.get("channel"), given.get("text")
    if not isinstance(channel, str) or not channel.strip():
        raise ToolFailed(f"{operation} on {name} needs a 'channel'")
    if not isinstance(text, str) or not text.strip():
        raise ToolFailed(f"{operation} on {name} needs the message's 'text'")

    def mask(value: str) -> str:
        return context.mask(mask_returned(value))

    draft = keep_draft(
        context.root,
        connector=name,
        channel=channel.strip(),
        text=text,
        role=context.role,
        run=context.run_id,
        mask=mask,
    )
    return ToolOutcome(
        f"Kept as draft {draft.id} for {shown_channel(draft.channel)} on {name}; it was not "
        f"posted. The person reads it in your conversation and sends it herself "
        f"(sdd send {draft.id}). Do not say it was posted.",
        {"connector": name, "operation": operation, "draft": draft.id},
    )
