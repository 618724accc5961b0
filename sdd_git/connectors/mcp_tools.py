"""An MCP server's tools as sdd offers them: only those her confirmed config lists, each as she
listed it, and none that is hers alone.

    connectors:
      docs: {kind: mcp, command: [docs-mcp], reads: [search_docs, get_page], acts: [rename_page]}

A tool is offered only when the connector's `reads:` or `acts:` names it: a read runs inside the
boundary, an act stops for her. A tool in neither is not offered, whatever the server lists or
claims (`readOnlyHint` and `destructiveHint` are only shown as what the server says; the MCP
specification itself says clients must not decide on them), and a call that names it is refused
as an unknown operation. A listed tool whose name or own description says it makes a release,
records a QA result, accepts or approves, or moves a stage is forbidden, as the built-ins'
operation table forbids github's `create_release` (`operations.forbidden_tool`): its name is
read before anything starts, its description from the server's listing, in the same session as
the call, before the call is sent."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sdd_git.connectors.base import ACT, FORBIDDEN, READ, Operation
from sdd_git.connectors.operations import forbidden_tool

_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class McpTool:
    """One tool as the server lists it: its name, its words and what it claims of itself."""

    name: str
    description: str = ""
    read_only_hint: bool | None = None  # annotations: hints the server gives, never rules
    destructive_hint: bool | None = None
    required: tuple[str, ...] = ()
    optional: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, wire: Mapping[str, Any]) -> McpTool:
        """From the tool's JSON as the protocol carries it (camelCase keys)."""
        hints = wire.get("annotations") or {}
        schema = wire.get("inputSchema") or {}
        properties = schema.get("properties") or {}
        required = tuple(str(name) for name in schema.get("required") or ())
        return cls(
            name=str(wire.get("name", "")),
            description=str(wire.get("description") or ""),
            read_only_hint=_flag(hints.get("readOnlyHint")),
            destructive_hint=_flag(hints.get("destructiveHint")),
            required=required,
            optional=tuple(str(name) for name in properties if name not in required),
        )

    def claims(self) -> str:
        """What the server says the tool does, in words (shown, never obeyed)."""
        if self.read_only_hint:
            return "the server says it only reads"
        if self.destructive_hint:
            return "the server says it may delete or overwrite"
        if self.destructive_hint is False:
            return "the server says it only adds"
        if self.read_only_hint is False:
            return "the server says it changes things"
        return "the server gives no hints"


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def listed(settings: Mapping[str, Any], part: str) -> tuple[str, ...]:
    """`reads` or `acts` of a connector's settings (a list, or one comma-joined text)."""
    names = settings.get(part) or ()
    if isinstance(names, str):
        names = [name.strip() for name in names.split(",")]
    return tuple(str(name) for name in names if name)


def not_offered(server: str, operation: str, reads: Iterable[str], acts: Iterable[str]) -> str:
    """Why a tool her config does not list is not offered, in plain words."""
    offered = ", ".join(dict.fromkeys((*reads, *acts))) or "none"
    return (
        f"the MCP server {server} offers only the tools .sdd/config.yaml lists under "
        f"connectors.{server}.reads or .acts ({offered}); '{operation}' is not one of them, "
        "so no role may call it (she adds it there to offer it)"
    )


def operation_of(
    tool: McpTool, server: str, reads: Iterable[str] = (), acts: Iterable[str] = ()
) -> Operation | None:
    """The operation a tool is under her config: forbidden when its name or description says
    it is hers, a read where `reads` lists it, an act that stops where `acts` does, and None
    (not offered) where neither does."""
    where = f"{_literal(tool.name)} of MCP server {_literal(server)}"
    fields = [name for name in tool.required if _VARIABLE.match(name)]
    with_args = (" with " + ", ".join(f"{name}={{{name}}}" for name in fields)) if fields else ""
    in_reads, in_acts = tool.name in set(reads), tool.name in set(acts)
    if not in_reads and not in_acts:
        return None
    reason = forbidden_tool(tool.name, tool.description)
    if reason is not None:
        return Operation(
            tool.name, FORBIDDEN, f"run {where}", tool.required, tool.optional, why=reason
        )
    if in_reads:
        return Operation(
            tool.name,
            READ,
            f"read with {where}{with_args} (a read by the config; {tool.claims()})",
            tool.required,
            tool.optional,
            record=f"what {where}{with_args} returns",
        )
    return Operation(
        tool.name,
        ACT,
        f"run {where}{with_args} as you ({tool.claims()}; an act in the config)",
        tool.required,
        tool.optional,
    )


def refusal(tools: Iterable[McpTool], operation: str, server: str) -> str | None:
    """Why the server's own listing makes `operation` one no role may call, or None: the server
    lists no such tool, or the tool's name or description says it is the person's."""
    found = next((tool for tool in tools if tool.name == operation), None)
    if found is None:
        return f"the MCP server {server} lists no tool '{operation}'"
    return forbidden_tool(found.name, found.description)


def _literal(text: str) -> str:
    """`text` safe inside an Operation's words, which are filled in with str.format."""
    return text.replace("{", "{{").replace("}", "}}")
