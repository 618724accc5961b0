"""The accuracy loop's tools: `submit_draft`, `report_gaps`, `submit_revision`.

The runner's accuracy loop reads these calls itself (`runner/loop.py`); they are declared here so
their class and schema live with every other tool's. Nothing executes them through dispatch.
"""

from __future__ import annotations

from sdd_git.toolnames import ToolClass
from sdd_git.tools.base import Args, BaseTool, ToolContext, ToolFailed, ToolOutcome
from sdd_git.tools.schema import make_schema


class LoopTool(BaseTool):
    tool_class: ToolClass = "loop"

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        raise ToolFailed(f"{self.name} is the accuracy loop's, read by the runner itself")


class SubmitDraft(LoopTool):
    schema = make_schema(
        "submit_draft",
        "Submit your draft for critique.",
        {"text": {"type": "string", "description": "the whole draft"}},
        ("text",),
    )


class ReportGaps(LoopTool):
    schema = make_schema(
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
    )


class SubmitRevision(LoopTool):
    schema = make_schema(
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
    )
