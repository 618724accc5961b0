"""The one error base. Core code raises these; only the CLI turns them into exit codes."""

from __future__ import annotations


class SddError(Exception):
    """A user-facing error: what was wrong (message) and how to fix it (hint)."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(SddError):
    """Refused before anything ran: bad arguments, an empty job, a forbidden task."""

    exit_code = 2


class RecordError(SddError):
    """A broken or missing record file: the message names the file and line."""


class GateError(SddError):
    """A stage gate or release gate does not hold."""


class NoSpecError(SddError):
    """Stopped with no choice to offer: the work needs an accepted spec section first."""

    exit_code = 4


class LockError(SddError):
    """Another writer holds the record lock."""


class InsideRunError(SddError):
    """A person command was started from inside a role run."""
