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

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, cast, dataclass_transform

HEADER = ("ts", "run", "seq", "event")
KINDS: dict[str, type[LogEvent]] = {}  # filled as each kind below is defined
_E = TypeVar("_E", bound="_Record")
_NEEDED = object()  # a field with no default


class _Factory:
    def __init__(self, make: Callable[[], Any], kw_only: bool) -> None:
        self.make, self.kw_only = make, kw_only


def field(*, default_factory: Callable[[], Any], kw_only: bool = False) -> Any:
    """A field whose default is made anew for each event (a list, a mapping)."""
    return _Factory(default_factory, kw_only)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class _Record:
    """A frozen record of named fields, like a frozen dataclass. Made by hand, not with
    `dataclasses`: thirty kinds built by `@dataclass` cost every run 23 ms at import, and this
    costs under 1 (the type checker reads the fields as a dataclass's, through the transform)."""

    KIND: ClassVar[str] = ""
    OPTIONAL: ClassVar[frozenset[str]] = frozenset()
    # (name, default): the default is _NEEDED, a value, or a _Factory; in the order declared.
    FIELDS: ClassVar[tuple[tuple[str, Any], ...]] = ()
    POSITIONAL: ClassVar[tuple[str, ...]] = ()
    extra: Mapping[str, Any]

    def __init_subclass__(cls, kind: str = "", optional: tuple[str, ...] = (), **rest: Any) -> None:
        super().__init_subclass__(**rest)
        cls.KIND, cls.OPTIONAL = kind, frozenset(optional)
        own = tuple(
            (name, cls.__dict__.get(name, _NEEDED))
            for name in cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (inspect is slow to import)
            if name not in ("KIND", "OPTIONAL", "FIELDS", "POSITIONAL")
        )
        cls.FIELDS = cls.FIELDS + own
        cls.POSITIONAL = tuple(
            name
            for name, default in cls.FIELDS
            if not (isinstance(default, _Factory) and default.kw_only)
        )
        if kind:
            KINDS[kind] = cast("type[LogEvent]", cls)

    def __init__(self, *args: Any, **given: Any) -> None:
        named = {name for name, _ in self.FIELDS}
        if len(args) > len(self.POSITIONAL):
            raise TypeError(f"{type(self).__name__} takes {len(self.POSITIONAL)} fields by place")
        values = dict(zip(self.POSITIONAL, args, strict=False))
        for key, value in given.items():
            if key not in named:
                raise TypeError(f"{type(self).__name__} has no field {key!r}")
            if key in values:
                raise TypeError(f"{type(self).__name__} got {key!r} twice")
            values[key] = value
        for name, default in self.FIELDS:
            if name not in values:
                if default is _NEEDED:
                    raise TypeError(f"{type(self).__name__} needs the field {name!r}")
                values[name] = default.make() if isinstance(default, _Factory) else default
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a {type(self).__name__} event cannot be changed")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a {type(self).__name__} event cannot be changed")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name, _ in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Record)
            and type(other) is type(self)
            and other._values() == self._values()
        )

    __hash__ = None  # type: ignore[assignment]  # fields hold lists, as a frozen dataclass's would fail

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name, _ in self.FIELDS)
        return f"{type(self).__name__}({shown})"

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
        for name, _ in self.FIELDS:
            value = getattr(self, name)
            if name == "extra" or (value is None and name in self.OPTIONAL):
                continue
            out[_key(name)] = value
        out.update(self.extra)
        return out

    @classmethod
    def from_fields(cls: type[_E], record: Mapping[str, Any]) -> _E:
        named = {_key(name): (name, default) for name, default in cls.FIELDS if name != "extra"}
        given = {name: record[key] for key, (name, _) in named.items() if key in record}
        # A field the line lacks reads None, or its default (a stop's choices: none).
        missing = {
            name: None
            for key, (name, default) in named.items()
            if key not in record and default is _NEEDED
        }
        extra = {k: v for k, v in record.items() if k not in named and k not in HEADER}
        return cls(**given, **missing, extra=extra)


class LogEvent(_Record):
    """One event of a run log; `extra` holds what a writer adds beyond the named fields."""

    extra: Mapping[str, Any] = field(default_factory=dict, kw_only=True)


def _key(name: str) -> str:
    return name.rstrip("_")  # `pass_` is written `pass`


class Unknown(LogEvent):
    """A kind this version does not write: kept whole, so an old log still reads."""

    name: str = ""

    @property
    def kind(self) -> str:
        return self.name

    def fields(self) -> dict[str, Any]:
        return dict(self.extra)


# --- the run's frame --------------------------------------------------------------------------


class RunStarted(LogEvent, kind="run_started"):
    """`extra`: the provider (provider, model, script, base_url), process, sandbox, via, a
    routine's name, event and rules, saved_rules, connectors; as the writer put them."""

    roles: list[str]
    task: str | None
    change: str | None
    origin: str | None


class Route(LogEvent, kind="route", optional=("route",)):
    """The network's route of the run: its kind (reading, plan, service, connection, node);
    `extra` has the rest as the network wrote it (roles, scope, node, plan, why)."""

    route: str | None = None


class Plan(LogEvent, kind="plan"):
    change: str | None
    sections: list[str]
    checks: list[str]
    decisions: list[str]


class RunWarning(LogEvent, kind="warning", optional=("switched",)):
    message: str
    switched: dict[str, Any] | None = None


class RunError(LogEvent, kind="error"):
    message: str


class RunResumed(LogEvent, kind="run_resumed"):
    stop: str
    process: dict[str, Any]


class RunEnded(LogEvent, kind="run_ended", optional=("waiting_for", "reason")):
    status: str
    waiting_for: str | None = None
    reason: str | None = None


# --- the conversation -------------------------------------------------------------------------


class Message(LogEvent, kind="message", optional=("conversation_id", "thread")):
    role: str
    content: Any
    conversation_id: str | None = None
    thread: str | None = None


class Say(LogEvent, kind="say"):
    """What the person said into the run (`sdd role say`)."""

    text: str


class ProviderCall(LogEvent, kind="provider_call"):
    role: str
    purpose: str
    call: int
    pass_: int | None  # numbered 1 to 3 inside the accuracy loop, else None (written null)


class Reply(LogEvent, kind="reply", optional=("thread",)):
    role: str
    message: dict[str, Any]
    usage: Any
    thread: str | None = None


class ContextTrimmed(LogEvent, kind="context_trimmed"):
    role: str
    results: int
    tokens: int


# --- tool calls and what became of them -------------------------------------------------------


class ToolCall(LogEvent, kind="tool_call", optional=("thread",)):
    role: str | None
    tool: str
    args: Any
    call_id: str | None
    thread: str | None = None


class ToolResult(LogEvent, kind="tool_result", optional=("thread",)):
    call_id: str | None
    tool: str
    content: str
    thread: str | None = None


class Rejected(LogEvent, kind="rejected", optional=("thread", "pass_")):
    tool: str
    reason: str
    message: str
    thread: str | None = None
    pass_: int | None = None


class Rehearsed(LogEvent, kind="rehearsed"):
    """A routine's test run: the action it would have run."""

    tool: str
    args: Any
    would: str


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


class Decision(LogEvent, kind="decision", optional=("origin",)):
    stop: str | None
    choice: str
    origin: str | None = None


class ActionDone(LogEvent, kind="action_done"):
    tool: str
    args: Any
    by: str | None


class ActionFailed(LogEvent, kind="action_failed"):
    tool: str
    args: Any
    by: str | None
    reason: str | None


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


class Handoff(LogEvent, kind="handoff", optional=("message", "output")):
    to: str
    cites: list[str]
    sent: bool
    message: str | None = None
    output: str | None = None


# --- the accuracy loop ------------------------------------------------------------------------


class Draft(LogEvent, kind="draft"):
    pass_: int
    text: str


class Revision(LogEvent, kind="revision"):
    pass_: int
    changed: list[str]
    text: str


class Critique(LogEvent, kind="critique"):
    pass_: int
    role: str
    gaps: list[dict[str, Any]]


# --- a routine's run that never reached the runner --------------------------------------------


class CouldNotRun(LogEvent, kind="could_not_run"):
    reason: str
    fix: str
    event_kind: str


class Missing(LogEvent, kind="missing"):
    source: str | None
    why: str
    event_kind: str


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
