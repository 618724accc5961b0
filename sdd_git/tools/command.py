"""`run_command`: one shell command, inside the sandbox (sdd_git.sandbox.execute)."""

from __future__ import annotations

from sdd_git.tools.base import ToolContext, ToolOutcome
from sdd_git.tools.catalog import ToolClass
from sdd_git.tools.read import Args, BaseTool, make_schema, root_dir, text_property

COMMAND_TIMEOUT_SECONDS = 600.0
PURPOSE = text_property("in plain words, why: shown to the person")


class RunCommand(BaseTool):
    name = "run_command"
    tool_class: ToolClass = "consequential"
    schema = make_schema(
        "run_command",
        "Run a shell command (bash -c) in the product folder; answers its exit code and output "
        "(at most 50 KB; stopped after 10 minutes).",
        {
            "command": {"type": "string", "description": "the command line, e.g. 'pytest -q'"},
            "purpose": PURPOSE,
            "network": {
                "type": "boolean",
                "description": "true if the command needs the network (off by default; the "
                "person sees it on the stop)",
            },
        },
        ("command", "purpose"),
    )

    def __init__(self, timeout_seconds: float = COMMAND_TIMEOUT_SECONDS) -> None:
        self.timeout_seconds = timeout_seconds

    def execute(self, args: Args, context: ToolContext) -> ToolOutcome:
        from sdd_git.sandbox.execute import run

        command = args.text("command")
        args.text("purpose")
        network = args.raw.get("network") is True
        done = run(
            root_dir(context),
            command,
            context.child_env,
            network=network,
            timeout=self.timeout_seconds,
        )
        if done.timed_out:
            head = (
                f"timed out after {self.timeout_seconds:g} s: the command was stopped "
                "and has no exit code"
            )
        else:
            head = f"exit code {done.code}"
        if done.lingering and not done.timed_out:
            head += " (processes it left running were stopped)"
        if done.tampered:
            head += (
                "\nRejected: it changed the person's record or sdd's own files, which roles "
                f"never write; put back as they were: {', '.join(done.tampered)}"
            )
        if done.lost:
            head += (
                "\nThese could not be put back (too large to keep a copy of); tell the person: "
                + ", ".join(done.lost)
            )
        body = done.output if done.output else "(no output)\n"
        return ToolOutcome(
            f"{head}\n--- output ---\n{body}",
            {
                "exit_code": done.code,
                "timed_out": done.timed_out,
                "output_bytes": done.output_bytes,
                "tampered": list(done.tampered),
                "lost": list(done.lost),
                "sandbox": done.sandbox,
            },
        )
