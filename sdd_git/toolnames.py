"""Every model-facing tool's name and class, and the paths the guard checks, as plain data.

A layer below `tools/` (roles validating a boundary, the sandbox, the guard on its hot path)
reads these without importing a tool. They are not kept by hand beside the tools: a test
asserts they equal what the tool declarations in `tools/` say, so they cannot drift.
"""

from __future__ import annotations

from typing import Literal

ToolClass = Literal["read", "draft", "loop", "consequential"]

TOOL_CLASSES: dict[str, ToolClass] = {
    "read_file": "read",
    "list_files": "read",
    "search_files": "read",
    "git_status": "read",
    "git_log": "read",
    "git_diff": "read",
    "read_record": "read",
    "use_skill": "read",
    "connector_read": "read",
    "draft_reading": "draft",
    "draft_scenarios": "draft",
    "draft_plan": "draft",
    "propose_qa_result": "draft",
    "remember": "draft",
    "return_artifact": "draft",
    "submit_draft": "loop",
    "report_gaps": "loop",
    "submit_revision": "loop",
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
    "connector_act": "consequential",
}

# Offered only to a run with a connector attached (`@NAME` in its task): a schema that can do
# nothing costs a model context and a wasted turn.
CONNECTOR_TOOLS = ("connector_read", "connector_act")
# The older tools that act on a code host or a deploy target: connector_act under other names.
CODE_HOST_TOOLS = ("open_pull_request", "merge_pull_request", "deploy")
LOOP_TOOLS = tuple(name for name, kind in TOOL_CLASSES.items() if kind == "loop")

# The arguments that name a path a tool writes, and those that name one it reads.
WRITE_PATH_ARGS: dict[str, tuple[str, ...]] = {"write_file": ("path",), "delete_file": ("path",)}
READ_PATH_ARGS: dict[str, tuple[str, ...]] = {
    "read_file": ("path",),
    "list_files": ("path",),
    "search_files": ("path",),
}
# The drafts that write into a change (they take a `change`): only ever the run's own.
CHANGE_DRAFTS = ("draft_reading", "draft_scenarios", "draft_plan")
