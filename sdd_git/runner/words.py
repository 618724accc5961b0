"""An action in the person's words: what will happen and with which inputs. Never a diff."""

from __future__ import annotations

from typing import Any

_SHORT = 160


def _quote(value: Any) -> str:
    text = " ".join(str(value).split())
    return f'"{text if len(text) <= _SHORT else text[: _SHORT - 3] + "..."}"'


def describe(tool: str, args: dict[str, Any]) -> str:
    """One plain sentence naming exactly the action a stop would run."""
    a = args
    if tool == "write_file":
        size = len(str(a.get("content", "")).encode())
        said = f"Write the file {a.get('path')} ({size:,} bytes)"
    elif tool == "delete_file":
        said = f"Delete the file {a.get('path')}"
    elif tool == "run_command":
        said = f"Run the command {_quote(a.get('command'))} in the product folder"
        if a.get("network") is True:
            said += ", with network access"
    elif tool == "git_commit":
        paths = ", ".join(str(p) for p in a.get("paths") or []) or "(no paths)"
        said = f"Commit {paths} with the message {_quote(a.get('message'))}"
    elif tool == "git_push":
        said = f"Push the branch {a.get('branch') or '(current)'} to {a.get('remote') or 'origin'}"
    elif tool == "git_tag":
        said = f"Write the git tag {a.get('name')}"
    elif tool == "open_pull_request":
        said = f"Open a pull request titled {_quote(a.get('title'))}"
    elif tool == "merge_pull_request":
        said = f"Merge pull request #{a.get('number')}"
    elif tool == "deploy":
        said = f"Deploy to {a.get('target')}"
    elif tool == "handoff":
        said = f"Hand the task {_quote(a.get('task'))} to the role {a.get('to')}"
    else:
        shown = ", ".join(f"{k}={_quote(v)}" for k, v in args.items() if k != "purpose")
        said = f"Use {tool} with {shown or 'no inputs'}"
    purpose = a.get("purpose")
    if purpose:
        said += f", because {_quote(purpose)}"
    return said + "."
