"""The commands only the person runs, as another agent on her machine must be told and refused
(CONTRACT §4, §6, §13, §14): what writes her record, answers sdd's own approvals, or writes what
grants (roles, routines, skills, hooks, trust, tokens, other agents' rules).

A plain table below every layer: the host guard (`sdd guard`), the deny rules and instructions
`sdd agents install` writes, and the Codex rules all read it, so a command added here is refused
everywhere at once. The runner needs none of it: a role may run no `sdd` command at all."""

from __future__ import annotations

from collections.abc import Sequence

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
    "role hide",  # these four rewrite ROLE.md (`hidden:`, `pinned:`)
    "role unhide",
    "role pin",
    "role unpin",
    "role rules",  # `--revoke N` rewrites ROLE.md; listing is refused to agents as well
    "role share",  # writes templates/, which gives other products their roles and rules
    "routine create",
    "routine edit",
    "routine delete",
    "routine pause",
    "routine resume",
    "routine export",  # writes a CI file (`--out`) that runs her routines on the engine
    "skill save",
    "hooks install",
    "hooks uninstall",
    "agents install",
    "connect",
    "disconnect",
    "keys",  # model keys: a role must never store, list or remove one
    "send",
    # her page hands its one-time sign-in to whoever starts it (`--no-browser` prints it), and
    # the page runs her commands as hers
    "page",
)
# sdd's global options, which may stand between `sdd` and the command: `-C DIR` takes a value
# (also as `-CDIR`), the flags take none.
GLOBAL_OPTIONS_WITH_VALUE: tuple[str, ...] = ("-C",)
GLOBAL_FLAGS: tuple[str, ...] = ("--no-agent",)
# Options every sdd command takes, which print and exit: after them nothing runs.
_EAGER = ("-h", "--help", "--version")
UNKNOWN_OPTION = "an option before the command that sdd's guard does not know"


def command_words(words: Sequence[str]) -> list[str] | None:
    """The words of the command sdd runs, its global options (`-C DIR`, `-CDIR`, `--no-agent`,
    `--help`, `--version`) and every `--` taken off; None when a word before the command is an
    option sdd does not have, so that nobody can say which command would run."""
    out: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            continue  # click reads the command name after it as before it
        if out or not word.startswith("-") or word == "-":
            out.append(word)
        elif word in GLOBAL_OPTIONS_WITH_VALUE:
            index += 1
        elif word[:2] in GLOBAL_OPTIONS_WITH_VALUE and len(word) > 2:
            continue  # -CDIR (and -C=DIR, which click reads as the folder "=DIR")
        elif word not in GLOBAL_FLAGS and word not in _EAGER:
            return None
    return out


def person_command(words: Sequence[str]) -> str | None:
    """The person command `sdd WORDS...` would run, whatever global options and `--` stand
    before or between its words, or None. The words are those after `sdd` (or after
    `python -m sdd_git`). A word before the command that is an option sdd does not have gives
    UNKNOWN_OPTION: such a call is refused like a person command, since none can tell."""
    found = command_words(words)
    if found is None:
        return UNKNOWN_OPTION
    # A group's own options may stand between its words (`sdd role --x create`): only the
    # words that are not options are compared.
    plain = [word for word in found if not word.startswith("-") or word == "-"]
    for command in PERSON_COMMANDS:
        parts = command.split()
        if plain[: len(parts)] == parts:
            return command
    return None
