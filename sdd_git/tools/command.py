"""`run_command`: one shell command, inside the sandbox (sdd_git.sandbox.execute)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sdd_git.sandbox.choose import NO_SANDBOX_WARNING
from sdd_git.toolnames import ToolClass
from sdd_git.tools.actionwords import command_words, with_purpose
from sdd_git.tools.base import Args, BaseTool, ToolContext, ToolOutcome, root_dir
from sdd_git.tools.schema import PURPOSE, make_schema

COMMAND_TIMEOUT_SECONDS = 600.0


class RunCommand(BaseTool):
    produces = ("code",)
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
            tampered=tuple(done.tampered),
            lost=tuple(done.lost),
        )

    def action(self, args: dict[str, Any], root: Path | None) -> str:
        said = command_words(str(args.get("command", "")))
        if args.get("network") is True:
            said += ", with network access" if not said.endswith("\n") else "With network access"
        return said

    def describe(
        self, args: dict[str, Any], root: Path | None = None, sandbox: str | None = None
    ) -> str:
        said = with_purpose(self.action(args, root), args)
        if sandbox is not None and sandbox.startswith("none"):
            said += f"\n{NO_SANDBOX_WARNING[0].upper()}{NO_SANDBOX_WARNING[1:]} ({sandbox[6:]})."
        elif sandbox is not None:
            said += f"\nSandbox: {sandbox} (the record, git and your home are read-only to it)."
        return said.rstrip("\n")
