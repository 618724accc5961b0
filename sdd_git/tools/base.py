"""What a tool is given and gives back. Tools never decide whether they may run: the runner's
guard and boundary did that before `run` is called."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sdd_git.providers.base import ToolSchema
from sdd_git.root import Root
from sdd_git.tools.catalog import ToolClass


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
    text: str  # what the model reads back
    data: dict[str, Any] | None = None  # structured detail for the run log


class Tool(Protocol):
    name: str
    tool_class: ToolClass
    schema: ToolSchema

    def run(self, args: dict[str, Any], context: ToolContext) -> ToolOutcome: ...
