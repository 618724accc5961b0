"""Every tool the runner can execute, by name, and the schemas it offers a model.

The loop tools (`submit_draft`, `report_gaps`, `submit_revision`) are run by the runner itself:
only their schemas live here.
"""

from __future__ import annotations

from collections.abc import Iterable

from sdd_git.providers.base import ToolSchema
from sdd_git.tools.act import (
    DeleteFile,
    Deploy,
    GitCommit,
    GitPush,
    GitTag,
    MergePullRequest,
    OpenPullRequest,
    WriteFile,
)
from sdd_git.tools.artifact import ReturnArtifact
from sdd_git.tools.base import Tool
from sdd_git.tools.command import RunCommand
from sdd_git.tools.connector import ConnectorAct, ConnectorRead
from sdd_git.tools.draft import (
    DraftPlan,
    DraftReading,
    DraftScenarios,
    ProposeQaResult,
    Remember,
)
from sdd_git.tools.handoff import HANDOFF_SCHEMA as HANDOFF_SCHEMA
from sdd_git.tools.handoff import Handoff
from sdd_git.tools.read import (
    GitDiff,
    GitLog,
    GitStatus,
    ListFiles,
    ReadFile,
    ReadRecord,
    SearchFiles,
    make_schema,
)
from sdd_git.tools.skill import UseSkill

_EXECUTORS: tuple[Tool, ...] = (
    ReadFile(),
    ListFiles(),
    SearchFiles(),
    GitStatus(),
    GitLog(),
    GitDiff(),
    ReadRecord(),
    UseSkill(),
    ConnectorRead(),
    DraftReading(),
    DraftScenarios(),
    DraftPlan(),
    ReturnArtifact(),
    ProposeQaResult(),
    Remember(),
    WriteFile(),
    DeleteFile(),
    RunCommand(),
    GitCommit(),
    GitPush(),
    GitTag(),
    OpenPullRequest(),
    MergePullRequest(),
    Deploy(),
    Handoff(),
    ConnectorAct(),
)

TOOLS: dict[str, Tool] = {tool.name: tool for tool in _EXECUTORS}

LOOP_SCHEMAS: dict[str, ToolSchema] = {
    "submit_draft": make_schema(
        "submit_draft",
        "Submit your draft for critique.",
        {"text": {"type": "string", "description": "the whole draft"}},
        ("text",),
    ),
    "report_gaps": make_schema(
        "report_gaps",
        "Report the draft's gaps against the plan's checks; an empty list means none.",
        {
            "gaps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string", "description": "your id for the gap, e.g. G1"},
                        "cites": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "a plan check id (C1) or a section with its decision "
                            "(SPEC-0001#S1/D-0002)",
                        },
                        "text": {"type": "string", "description": "what is missing or wrong"},
                    },
                    "required": ["id", "cites", "text"],
                    "additionalProperties": False,
                },
            }
        },
        ("gaps",),
    ),
    "submit_revision": make_schema(
        "submit_revision",
        "Submit the revised draft, naming the gaps it addresses.",
        {
            "changed": {
                "type": "array",
                "items": {"type": "string"},
                "description": "the ids of the gaps this revision addresses",
            },
            "text": {"type": "string", "description": "the whole revised draft"},
        },
        ("changed", "text"),
    ),
}

_RUNNER_SCHEMAS: dict[str, ToolSchema] = dict(LOOP_SCHEMAS)


def schemas(names: Iterable[str]) -> list[ToolSchema]:
    """The schemas of the named tools, in the order given (executors and loop tools)."""
    out: list[ToolSchema] = []
    for name in names:
        tool = TOOLS.get(name)
        if tool is not None:
            out.append(tool.schema)
        elif name in _RUNNER_SCHEMAS:
            out.append(_RUNNER_SCHEMAS[name])
        else:
            raise KeyError(f"no tool named {name!r}")
    return out
