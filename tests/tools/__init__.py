"""Tests of the model-facing tools; `make_context` builds what the runner would hand a tool."""

from __future__ import annotations

import os
from typing import Any

import pytest

from sdd_git.root import Root
from sdd_git.tools.base import ToolContext, ToolFailed, ToolOutcome
from sdd_git.tools.toolbox import TOOLS

SECRET = "SECRET-VALUE-123"


def make_context(root: Root, role: str = "builder", change: str | None = None) -> ToolContext:
    return ToolContext(
        root=root,
        role=role,
        run_id="run-test",
        change=change,
        child_env={**os.environ, "SDD_RUN_ID": "run-test"},
        mask=lambda s: s.replace(SECRET, "[secret]"),
    )


def run(ctx: ToolContext, tool: str, **args: Any) -> ToolOutcome:
    return TOOLS[tool].run(args, ctx)


def fails(ctx: ToolContext, tool: str, **args: Any) -> str:
    with pytest.raises(ToolFailed) as caught:
        TOOLS[tool].run(args, ctx)
    return str(caught.value)
