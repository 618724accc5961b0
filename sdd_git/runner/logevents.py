"""The run log's vocabulary: one frozen record per kind of event a run log holds.

A record serialises to the fields written on its line (after `ts`, `run`, `seq` and `event`), in
the order they have always been written, and parses back from the JSON a reader gets. A kind this
version does not know (a log from another version) parses as `Unknown`, never as an error. A
reader tolerates a line that lacks a field (written by an older version): the field reads None.

A kind's `optional` fields are left off its line when they are None; every other field is
written even when it is None (a `stop` with no stop id says `"stop": null`). `extra` carries what
a writer adds beyond the named fields (a routine's fields on `run_started`, a sha256 on an
`artifact`), written last, in its own order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

HEADER = ("ts", "run", "seq", "event")
KINDS: dict[str, type[LogEvent]] = {}  # filled as each kind below is defined
_E = TypeVar("_E", bound="LogEvent")


@dataclass(frozen=True)
class LogEvent:
    KIND: ClassVar[str] = ""
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()

    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)

    def __init_subclass__(cls, kind: str = "", optional: tuple[str, ...] = (), **rest: Any) -> None:
        super().__init_subclass__(**rest)
        cls.KIND, cls.OPTIONAL = kind, frozenset(optional)
        if kind:
            KINDS[kind] = cls

    @property
    def kind(self) -> str:
        return self.KIND

    @property
    def thread(self) -> str | None:
        """The thread the event belongs to ("author", "critic"), for the kinds that carry one."""
        value = self.__dict__.get("thread") or self.extra.get("thread")
        return value if isinstance(value, str) else None

    def fields(self) -> dict[str, Any]:
        """The fields of its line, but the header, in the order they are written."""
        out: dict[str, Any] = {}
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if item.name == "extra" or (value is None and item.name in self.OPTIONAL):
                continue
            out[_key(item.name)] = value
        out.update(self.extra)
        return out

    @classmethod
    def from_fields(cls: type[_E], record: Mapping[str, Any]) -> _E:
        named = {_key(f.name): f for f in dataclasses.fields(cls) if f.name != "extra"}
        given = {f.name: record[key] for key, f in named.items() if key in record}
        # A field the line lacks reads None, or its default (a stop's choices: none).
        missing = {f.name: None for key, f in named.items() if key not in record and _needed(f)}
        extra = {k: v for k, v in record.items() if k not in named and k not in HEADER}
        return cls(**given, **missing, extra=extra)


def _needed(item: dataclasses.Field[Any]) -> bool:
    return item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING


def _key(name: str) -> str:
    return name.rstrip("_")  # `pass_` is written `pass`


@dataclass(frozen=True)
class Unknown(LogEvent):
    """A kind this version does not write: kept whole, so an old log still reads."""

    name: str = ""

    @property
    def kind(self) -> str:
        return self.name

    def fields(self) -> dict[str, Any]:
        return dict(self.extra)


# --- the run's frame --------------------------------------------------------------------------


@dataclass(frozen=True)
class RunStarted(LogEvent, kind="run_started"):
    """`extra`: the provider (provider, model, script, base_url), process, sandbox, via, a
    routine's name, event and rules, saved_rules, connectors; as the writer put them."""

    roles: list[str]
    task: str | None
    change: str | None
    origin: str | None


@dataclass(frozen=True)
class Route(LogEvent, kind="route", optional=("route",)):
    """The network's route of the run: its kind (reading, plan, service, connection, node);
    `extra` has the rest as the network wrote it (roles, scope, node, plan, why)."""

    route: str | None = None


@dataclass(frozen=True)
class Plan(LogEvent, kind="plan"):
    change: str | None
    sections: list[str]
    checks: list[str]
    decisions: list[str]


@dataclass(frozen=True)
class RunWarning(LogEvent, kind="warning", optional=("switched",)):
    message: str
    switched: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunError(LogEvent, kind="error"):
    message: str


@dataclass(frozen=True)
class RunResumed(LogEvent, kind="run_resumed"):
    stop: str
    process: dict[str, Any]


@dataclass(frozen=True)
class RunEnded(LogEvent, kind="run_ended", optional=("waiting_for", "reason")):
    status: str
    waiting_for: str | None = None
    reason: str | None = None


# --- the conversation -------------------------------------------------------------------------


@dataclass(frozen=True)
class Message(LogEvent, kind="message", optional=("conversation_id", "thread")):
    role: str
    content: Any
    conversation_id: str | None = None
    thread: str | None = None


@dataclass(frozen=True)
class Say(LogEvent, kind="say"):
    """What the person said into the run (`sdd role say`)."""

    text: str


@dataclass(frozen=True)
class ProviderCall(LogEvent, kind="provider_call"):
    role: str
    purpose: str
    call: int
    pass_: int | None  # numbered 1 to 3 inside the accuracy loop, else None (written null)


@dataclass(frozen=True)
class Reply(LogEvent, kind="reply", optional=("thread",)):
    role: str
    message: dict[str, Any]
    usage: Any
    thread: str | None = None


@dataclass(frozen=True)
class ContextTrimmed(LogEvent, kind="context_trimmed"):
    role: str
    results: int
    tokens: int


# --- tool calls and what became of them -------------------------------------------------------


@dataclass(frozen=True)
class ToolCall(LogEvent, kind="tool_call", optional=("thread",)):
    role: str | None
    tool: str
    args: Any
    call_id: str | None
    thread: str | None = None


@dataclass(frozen=True)
class ToolResult(LogEvent, kind="tool_result", optional=("thread",)):
    call_id: str | None
    tool: str
    content: str
    thread: str | None = None


@dataclass(frozen=True)
class Rejected(LogEvent, kind="rejected", optional=("thread", "pass_")):
    tool: str
    reason: str
    message: str
    thread: str | None = None
    pass_: int | None = None


@dataclass(frozen=True)
class Rehearsed(LogEvent, kind="rehearsed"):
    """A routine's test run: the action it would have run."""

    tool: str
    args: Any
    would: str


@dataclass(frozen=True)
class Stop(LogEvent, kind="stop", optional=("tool", "args", "call_id", "because", "sandbox")):
    """A stop raised: an approval (with its call), a draft, or none (no-spec, `stop` null)."""

    stop: str | None
    kind_: str  # `kind` on the line; the record's `kind` is its event kind
    action: str
    tool: str | None = None
    args: Any = None
    choices: list[str] = field(default_factory=list)
    call_id: str | None = None
    because: str | None = None
    sandbox: str | None = None
    expires_at: str | None = None

    def fields(self) -> dict[str, Any]:
        out = super().fields()
        if self.tool is None and self.expires_at is None:
            del out["expires_at"]  # only an approval says when it expires (null: never)
        return out


@dataclass(frozen=True)
class Decision(LogEvent, kind="decision", optional=("origin",)):
    stop: str | None
    choice: str
    origin: str | None = None


@dataclass(frozen=True)
class ActionDone(LogEvent, kind="action_done"):
    tool: str
    args: Any
    by: str | None


@dataclass(frozen=True)
class ActionFailed(LogEvent, kind="action_failed"):
    tool: str
    args: Any
    by: str | None
    reason: str | None


@dataclass(frozen=True)
class Artifact(
    LogEvent, kind="artifact", optional=("node", "owner", "from_run", "kind_", "ref", "summary")
):
    """What a node returned: from its tool (kind, ref, summary, ...) or, in the lead's log,
    recorded for the network with the node, owner and run it came from."""

    node: str | None = None
    owner: str | None = None
    from_run: str | None = None
    kind_: str | None = None
    ref: str | None = None
    summary: str | None = None


@dataclass(frozen=True)
class Handoff(LogEvent, kind="handoff", optional=("message", "output")):
    to: str
    cites: list[str]
    sent: bool
    message: str | None = None
    output: str | None = None


# --- the accuracy loop ------------------------------------------------------------------------


@dataclass(frozen=True)
class Draft(LogEvent, kind="draft"):
    pass_: int
    text: str


@dataclass(frozen=True)
class Revision(LogEvent, kind="revision"):
    pass_: int
    changed: list[str]
    text: str


@dataclass(frozen=True)
class Critique(LogEvent, kind="critique"):
    pass_: int
    role: str
    gaps: list[dict[str, Any]]


# --- a routine's run that never reached the runner --------------------------------------------


@dataclass(frozen=True)
class CouldNotRun(LogEvent, kind="could_not_run"):
    reason: str
    fix: str
    event_kind: str


@dataclass(frozen=True)
class Missing(LogEvent, kind="missing"):
    source: str | None
    why: str
    event_kind: str


@dataclass(frozen=True)
class Dismissed(LogEvent, kind="dismissed"):
    by: str


def parse(record: Mapping[str, Any]) -> LogEvent:
    """The event of one line of a log, as a reader got it from JSON."""
    name = str(record.get("event") or "")
    known = KINDS.get(name)
    if known is None:
        extra = {k: v for k, v in record.items() if k not in HEADER}
        return Unknown(name=name, extra=extra)
    return known.from_fields(record)
