"""What a tool is, is given and gives back, and the facts it declares about itself.

Tools never decide whether they may run: the runner's guard and boundary did that before `run`
is called. What the runner needs to know of a tool (its class, the paths it writes and reads,
which `produces` offer it, how a stop describes it) is declared on its class here, and every
table elsewhere is derived from those declarations (`tools/toolbox.py` is the one registry).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sdd_git.errors import SddError
from sdd_git.providers.base import ToolSchema
from sdd_git.root import Root
from sdd_git.toolnames import ToolClass
from sdd_git.valuekind import json_kind as _kind


class ToolFailed(Exception):
    """The tool ran and could not do it; the message goes back to the model as the result."""


@dataclass(frozen=True)
class ToolContext:
    root: Root
    role: str  # the role that called the tool
    run_id: str
    change: str | None  # the change this run works on, if any
    child_env: Mapping[str, str]  # environment for child processes: the allowlist, SDD_RUN_ID set
    mask: Callable[[str], str]  # hides secret values in any text that leaves the tool
    connectors: tuple[str, ...] = ()  # the connectors attached to the run (`@NAME` in its task)

    @property
    def local(self) -> Path:
        """The role's own gitignored folder: conversation, memory, attachments."""
        return self.root.local / "roles" / self.role


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool gives back. The runner reads only the typed fields; `data` is detail for
    whoever called the tool directly, never read by dispatch."""

    text: str  # what the model reads back
    data: dict[str, Any] | None = None
    not_done: str | None = None  # it ran and did nothing (no connector, say): why, in words
    tampered: tuple[str, ...] = ()  # protected files a command changed, put back since
    lost: tuple[str, ...] = ()  # of those, the ones that could not be put back
    artifact: dict[str, Any] | None = None  # a network node's result, for the run log
    handoff: dict[str, Any] | None = None  # a handoff sent (or not), for the run log

    @classmethod
    def nothing_done(cls, text: str, reason: str) -> ToolOutcome:
        """It ran and did nothing (no connector, no such target): never logged as done."""
        return cls(text, {"done": False, "reason": reason}, not_done=reason or "nothing was done")


class Tool(Protocol):
    tool_class: ToolClass
    schema: ToolSchema

    @property
    def name(self) -> str: ...

    @property
    def writes(self) -> tuple[str, ...]: ...

    @property
    def reads(self) -> tuple[str, ...]: ...

    @property
    def produces(self) -> tuple[str, ...]: ...

    def run(self, args: dict[str, Any], context: ToolContext) -> ToolOutcome: ...

    def describe(
        self, args: dict[str, Any], root: Path | None = None, sandbox: str | None = None
    ) -> str: ...


def _check_length(tool: str, key: str, value: Any, schema: dict[str, Any]) -> None:
    """A text longer than its schema's maxLength, or a list item longer than its items' one."""
    limit = schema.get("maxLength")
    if isinstance(value, str) and limit is not None and len(value) > limit:
        raise ToolFailed(
            f"{tool}: '{key}' is {len(value):,} characters; it takes at most {limit:,}"
        )
    limit = (schema.get("items") or {}).get("maxLength")
    if isinstance(value, list) and limit is not None:
        for index, item in enumerate(value, 1):
            if isinstance(item, str) and len(item) > limit:
                raise ToolFailed(
                    f"{tool}: item {index} of '{key}' is {len(item):,} characters; "
                    f"it takes at most {limit:,}"
                )


class Args:
    """A tool call's arguments, checked against the tool's schema; each getter checks a type."""

    def __init__(self, tool: str, raw: Any, schema: ToolSchema) -> None:
        self.tool = tool
        if not isinstance(raw, Mapping):
            raise ToolFailed(f"{tool}: the arguments must be an object, not {_kind(raw)}")
        properties: dict[str, Any] = schema.parameters.get("properties", {})
        unknown = sorted(str(k) for k in raw if k not in properties)
        if unknown:
            takes = ", ".join(properties) or "no arguments"
            raise ToolFailed(f"{tool}: unknown argument {', '.join(unknown)}; it takes {takes}")
        for key, value in raw.items():
            _check_length(tool, str(key), value, properties[key])
        missing = [k for k in schema.parameters.get("required", []) if raw.get(k) is None]
        if missing:
            raise ToolFailed(f"{tool}: missing argument {', '.join(missing)}")
        self.raw: dict[str, Any] = dict(raw)

    def _fail(self, key: str, wanted: str) -> ToolFailed:
        return ToolFailed(f"{self.tool}: '{key}' must be {wanted}, not {_kind(self.raw.get(key))}")

    def text(self, key: str, *, blank_ok: bool = False) -> str:
        value = self.raw.get(key)
        if not isinstance(value, str):
            raise self._fail(key, "text")
        if not blank_ok and not value.strip():
            raise ToolFailed(f"{self.tool}: '{key}' is empty")
        return value

    def opt_text(self, key: str) -> str | None:
        if self.raw.get(key) is None:
            return None
        return self.text(key)

    def integer(self, key: str, default: int | None = None, minimum: int = 1) -> int:
        value = self.raw.get(key)
        if value is None and default is not None:
            return default
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(key, "a whole number")
        if value < minimum:
            raise ToolFailed(f"{self.tool}: '{key}' must be at least {minimum}, not {value}")
        return value

    def text_list(self, key: str, *, empty_ok: bool = False) -> list[str]:
        value = self.raw.get(key)
        if not isinstance(value, list):
            raise self._fail(key, "a list of text")
        for index, item in enumerate(value, 1):
            if not isinstance(item, str) or not item.strip():
                raise ToolFailed(
                    f"{self.tool}: item {index} of '{key}' must be non-empty text, "
                    f"not {_kind(item)}"
                )
        if not value and not empty_ok:
            raise ToolFailed(f"{self.tool}: '{key}' is an empty list")
        return list(value)

    def objects(self, key: str) -> list[dict[str, Any]]:
        value = self.raw.get(key)
        if not isinstance(value, list) or not value:
            raise self._fail(key, "a non-empty list of objects")
        for index, item in enumerate(value, 1):
            if not isinstance(item, dict):
                raise ToolFailed(
                    f"{self.tool}: item {index} of '{key}' must be an object, not {_kind(item)}"
                )
        return list(value)


def _mask_data(value: Any, mask: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: _mask_data(v, mask) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_mask_data(v, mask) for v in value]
    return value


def root_dir(context: ToolContext) -> Path:
    return context.root.path.resolve()


class BaseTool:
    """One tool: `execute` does the work; `run` checks the arguments and masks what leaves.

    The facts a subclass declares: `tool_class`; `writes` and `reads`, the arguments that name
    a path it writes or reads (the guard checks them); `produces`, the roles' `produces` that
    are offered it beyond the read tools; and `action`, the stop's words for a call."""

    tool_class: ToolClass
    schema: ToolSchema
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    produces: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.schema.name

    def run(self, args: dict[str, Any], context: ToolContext) -> ToolOutcome:
        try:
            if self.tool_class == "draft":
                # Drafts land in sdd's own files and the record (memory, readings, scenarios,
                # QA proposals): masked like a log, so no secret is kept there in any form.
                args = _mask_data(args, context.mask)
            outcome = self.execute(Args(self.name, args, self.schema), context)
        except ToolFailed as exc:
            raise ToolFailed(context.mask(str(exc))) from None
        except SddError as exc:
            raise ToolFailed(context.mask(exc.message)) from None
        except UnicodeDecodeError as exc:
            raise ToolFailed(
                f"{self.name}: a file it needs is not UTF-8 text ({exc.reason})"
            ) from None
        except OSError as exc:
            raise ToolFailed(context.mask(f"{self.name}: {exc}")) from None
        mask = context.mask
        return dataclasses.replace(
            outcome,
            text=mask(outcome.text),
            data=_mask_data(outcome.data, mask),
            not_done=None if outcome.not_done is None else mask(outcome.not_done),
            tampered=tuple(mask(t) for t in outcome.tampered),
            lost=tuple(mask(t) for t in outcome.lost),
            artifact=_mask_data(outcome.artifact, mask),
            handoff=_mask_data(outcome.handoff, mask),
        )

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raise NotImplementedError

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        """The call in words, without its purpose: "Delete the file src/old.py"."""
        from sdd_git.tools.actionwords import any_action

        return any_action(self.name, args)

    def describe(
        self, args: dict[str, Any], root: Path | None = None, sandbox: str | None = None
    ) -> str:
        """What a stop says for this call: the action, the purpose, every input it runs with.
        `root`: the product, to look at what the action would meet there."""
        from sdd_git.tools.actionwords import with_purpose

        return with_purpose(self.action(args, root), args).rstrip("\n")
