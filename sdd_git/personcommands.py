"""The commands only the person runs, as another agent on her machine must be told and refused
(CONTRACT §4, §6, §13, §14): what writes her record, answers sdd's own approvals, or writes what
grants (roles, routines, skills, hooks, trust, tokens, other agents' rules).

A plain table below every layer: the host guard (`sdd guard`), the deny rules and instructions
`sdd agents install` writes, and the Codex rules all read it, so a command added here is refused
everywhere at once. The runner needs none of it: a role may run no `sdd` command at all."""

from __future__ import annotations

# Each entry: the command words after `sdd` (and its global options).
PERSON_COMMANDS: tuple[str, ...] = (
    # her record
    "accept",
    "correct",
    "qa record",
    "decision replace",
    "release generate",
    "next",
    "complete",
    "change new",
    "scenario add",
    "scope add",
    "scope remove",
    # sdd's own approvals: an agent answering them would approve itself
    "allow",
    "deny",
    "role trust",
    "trust accept",
    "trust forget",
    "trust drop",
    # what grants: roles, routines, skills, hooks, tokens, posts, other agents' rules
    "role create",
    "role edit",
    "role delete",
    "role add",
    "role duplicate",
    "routine create",
    "routine edit",
    "routine delete",
    "routine pause",
    "routine resume",
    "skill save",
    "hooks install",
    "hooks uninstall",
    "agents install",
    "connect",
    "disconnect",
    "send",
)
# sdd's global options, which may stand between `sdd` and the command: `-C DIR` takes a value
# (also as `-CDIR`), the flags take none.
GLOBAL_OPTIONS_WITH_VALUE: tuple[str, ...] = ("-C",)
GLOBAL_FLAGS: tuple[str, ...] = ("--no-agent",)
