"""Every model-facing tool by name with its class, and the other tables of tools, all derived
from the tools' own declarations (`tools/toolbox.py`).

A boundary rule may name only a tool in `TOOL_CLASSES`; a tool call naming anything else is
rejected. A layer below tools (roles, the sandbox) or a hot path (the guard) reads the same
facts from `sdd_git.toolnames`, which a test holds equal to these.
"""

from __future__ import annotations

from sdd_git.toolnames import ToolClass as ToolClass
from sdd_git.tools.codehost import ConnectorAlias
from sdd_git.tools.connector import ConnectorTool
from sdd_git.tools.toolbox import DECLARED

TOOL_CLASSES: dict[str, ToolClass] = {name: tool.tool_class for name, tool in DECLARED.items()}
WRITE_PATH_ARGS: dict[str, tuple[str, ...]] = {n: t.writes for n, t in DECLARED.items() if t.writes}
READ_PATH_ARGS: dict[str, tuple[str, ...]] = {n: t.reads for n, t in DECLARED.items() if t.reads}
# Offered only to a run with a connector attached (`@NAME` in its task): a schema that can do
# nothing costs a model context and a wasted turn.
CONNECTOR_TOOLS = tuple(n for n, t in DECLARED.items() if isinstance(t, ConnectorTool))
CODE_HOST_TOOLS = tuple(n for n, t in DECLARED.items() if isinstance(t, ConnectorAlias))
CHANGE_DRAFTS = tuple(
    n
    for n, t in DECLARED.items()
    if t.tool_class == "draft" and "change" in t.schema.parameters.get("properties", {})
)
LOOP_TOOLS = tuple(name for name, kind in TOOL_CLASSES.items() if kind == "loop")


def offered_by_produces(produces: str) -> tuple[str, ...]:
    """The tools a role's `produces` is offered beyond the read tools (and those every role has)."""
    return tuple(name for name, tool in DECLARED.items() if produces in tool.produces)
