"""What a host asked to do, in the terms the guard checks, and the answer it gets.

A host's protocol (`sdd_git.hostguard.claude`, ...) turns its own input into a `HostCall`, and an
`Answer` into its own output: the check in between knows no host. NamedTuples, not dataclasses:
this runs before every tool call, and `dataclasses` alone costs more than a check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

# The rest of `typing` is read by mypy only (it reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol, TextIO

ALLOW = "allow"  # the call goes on to the host's own permission check, untouched
ASK = "ask"  # the host asks the person
DENY = "deny"  # the call never runs


class HostCall(NamedTuple):
    tool: str  # as the host names it, for the messages
    cwd: str  # where the host's agent is: relative paths are read from here
    command: str | None = None  # a shell command line
    writes: tuple[str, ...] = ()  # the paths a file tool writes, as given
    project: str | None = None  # the host's project folder, when it says one
    # The host's own settings, hooks and rules (`~/.claude/`): written there, they could turn
    # the guard off, so no call may write them.
    host_files: tuple[str, ...] = ()


class Answer(NamedTuple):
    decision: str  # ALLOW, ASK or DENY
    reason: str = ""  # plain words, for the agent (and the person, on an ask)

    @property
    def allowed(self) -> bool:
        return self.decision == ALLOW


ALLOWED = Answer(ALLOW)


def deny(reason: str) -> Answer:
    return Answer(DENY, reason)


def ask(reason: str) -> Answer:
    return Answer(ASK, reason)


def strictest(answers: list[Answer]) -> Answer:
    """The strictest answer (deny, then ask, then allow); of equal ones, the first."""
    for decision in (DENY, ASK):
        for answer in answers:
            if answer.decision == decision:
                return answer
    return ALLOWED


if TYPE_CHECKING:

    class Host(Protocol):
        """One host's protocol: its input read into a call (or answered at once when it is not one
        the guard can check), and an answer written the way the host reads it."""

        name: str

        def read(self, data: str, environ: Mapping[str, str]) -> HostCall | Answer: ...

        def write(self, answer: Answer, out: TextIO, err: TextIO) -> int:
            """Write the answer; return the exit code."""
            ...
