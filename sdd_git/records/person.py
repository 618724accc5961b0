"""The one door to writing the person's record: never inside a role run, always under the lock."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from sdd_git import lockfile
from sdd_git.errors import InsideRunError
from sdd_git.root import Root

RUN_ID_ENV = "SDD_RUN_ID"


def refuse_inside_run() -> None:
    """Person commands refuse to run in a child process of a role run (the sink of the wall)."""
    run_id = os.environ.get(RUN_ID_ENV)
    if run_id:
        raise InsideRunError(
            f"person commands cannot run inside a role run (SDD_RUN_ID={run_id})",
            hint="only the person runs this, from their own terminal; a role can draft, not decide",
        )


@contextlib.contextmanager
def person_write(root: Root) -> Iterator[None]:
    refuse_inside_run()
    with lockfile.hold(root.record_lock):
        yield
