"""The sink: inside a role run, child processes carry SDD_RUN_ID, and every person command
refuses to run when it is set. One layer of the wall, never the only one (any child can drop a
variable; the sandbox is what holds). Also the one door to writing the person's record."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from sdd_git.errors import InsideRunError

RUN_ID_ENV = "SDD_RUN_ID"


class _Record(Protocol):
    """A product's root as far as the door needs it (root.Root imports this module)."""

    @property
    def record_lock(self) -> Path: ...


def refuse_inside_run() -> None:
    """Person commands refuse to run in a child process of a role run."""
    run_id = os.environ.get(RUN_ID_ENV)
    if run_id:
        raise InsideRunError(
            f"person commands cannot run inside a role run (SDD_RUN_ID={run_id})",
            hint="only the person runs this, from their own terminal; a role can draft, not decide",
        )


@contextlib.contextmanager
def person_write(root: _Record) -> Iterator[None]:
    """Writes to the person's record: never inside a role run, always under the record lock.
    Here, below roles and records, because both write her record through it."""
    from sdd_git import lockfile

    refuse_inside_run()
    with lockfile.hold(root.record_lock):
        yield
