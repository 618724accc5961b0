"""The sink: inside a role run, child processes carry SDD_RUN_ID, and every person command
refuses to run when it is set. One layer of the wall, never the only one (any child can drop a
variable; the sandbox is what holds)."""

from __future__ import annotations

import os

from sdd_git.errors import InsideRunError

RUN_ID_ENV = "SDD_RUN_ID"


def refuse_inside_run() -> None:
    """Person commands refuse to run in a child process of a role run."""
    run_id = os.environ.get(RUN_ID_ENV)
    if run_id:
        raise InsideRunError(
            f"person commands cannot run inside a role run (SDD_RUN_ID={run_id})",
            hint="only the person runs this, from their own terminal; a role can draft, not decide",
        )
