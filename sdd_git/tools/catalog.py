"""Every model-facing tool by name, with its class. The runner's only list of what exists.

A boundary rule may name only a tool in this table; a tool call naming anything else is rejected.
"""

from __future__ import annotations

from typing import Literal

ToolClass = Literal["read", "draft", "loop", "consequential"]

TOOL_CLASSES: dict[str, ToolClass] = {
    # Read: run without a stop.
    "read_file": "read",
    "list_files": "read",
    "search_files": "read",
    "git_status": "read",
    "git_log": "read",
    "git_diff": "read",
    "read_record": "read",
    "use_skill": "read",
    # A connector's reads (and its chat drafts, kept locally for the person to send).
    "connector_read": "read",
    # Draft: write drafts only, never a decision.
    "draft_reading": "draft",
    "draft_scenarios": "draft",
    "draft_plan": "draft",  # leads only: a plan binds nobody until the person accepts it
    "propose_qa_result": "draft",
    "remember": "draft",
    "return_artifact": "draft",  # a network node's result, by reference; offered only there
    # The accuracy loop.
    "submit_draft": "loop",
    "report_gaps": "loop",
    "submit_revision": "loop",
    # Consequential: stop unless the person allowed exactly this call.
    "write_file": "consequential",
    "delete_file": "consequential",
    "run_command": "consequential",
    "git_commit": "consequential",
    "git_push": "consequential",
    "git_tag": "consequential",
    "open_pull_request": "consequential",
    "merge_pull_request": "consequential",
    "deploy": "consequential",
    "handoff": "consequential",
    "connector_act": "consequential",  # act as the person on a connector: every call stops
}

# Offered only to a run with a connector attached (`@NAME` in its task): a schema that can do
# nothing costs a model context and a wasted turn.
CONNECTOR_TOOLS = ("connector_read", "connector_act")


def tool_class(name: str) -> ToolClass | None:
    return TOOL_CLASSES.get(name)
