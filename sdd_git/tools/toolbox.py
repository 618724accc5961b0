"""The registry: every model-facing tool, one line each, in the order a model is offered them.

Adding a tool is one module with its class (its facts declared on it) and one line here. Every
table of tools elsewhere (`catalog`, the offer by `produces`, the stop words, the guard's paths)
is derived from these declarations. The loop tools are declared here too; the runner's accuracy
loop reads their calls itself, so they have no executor in `TOOLS`.
"""

from __future__ import annotations

from collections.abc import Iterable

from sdd_git.providers.base import ToolSchema
from sdd_git.tools import (
    accuracy,
    act,
    artifact,
    codehost,
    command,
    connector,
    draft,
    handoff,
    read,
    skill,
)
from sdd_git.tools.base import Tool
from sdd_git.tools.handoff import HANDOFF_SCHEMA as HANDOFF_SCHEMA

DECLARED: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        read.ReadFile(),
        read.ListFiles(),
        read.SearchFiles(),
        read.GitStatus(),
        read.GitLog(),
        read.GitDiff(),
        read.ReadRecord(),
        skill.UseSkill(),
        connector.ConnectorRead(),
        draft.DraftReading(),
        draft.DraftScenarios(),
        draft.DraftPlan(),
        draft.ProposeQaResult(),
        draft.Remember(),
        artifact.ReturnArtifact(),
        accuracy.SubmitDraft(),
        accuracy.ReportGaps(),
        accuracy.SubmitRevision(),
        act.WriteFile(),
        act.DeleteFile(),
        command.RunCommand(),
        act.GitCommit(),
        act.GitPush(),
        act.GitTag(),
        codehost.OpenPullRequest(),
        codehost.MergePullRequest(),
        codehost.Deploy(),
        handoff.Handoff(),
        connector.ConnectorAct(),
    )
}

# What dispatch executes: every tool but the loop's.
TOOLS: dict[str, Tool] = {n: t for n, t in DECLARED.items() if t.tool_class != "loop"}
LOOP_SCHEMAS: dict[str, ToolSchema] = {
    n: t.schema for n, t in DECLARED.items() if t.tool_class == "loop"
}


def schemas(names: Iterable[str]) -> list[ToolSchema]:
    """The schemas of the named tools, in the order given (executors and loop tools)."""
    out: list[ToolSchema] = []
    for name in names:
        tool = DECLARED.get(name)
        if tool is None:
            raise KeyError(f"no tool named {name!r}")
        out.append(tool.schema)
    return out
