"""The one door to writing the person's record: never inside a role run, always under the lock."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sdd_git import lockfile
from sdd_git.root import Root
from sdd_git.sink import RUN_ID_ENV, refuse_inside_run

__all__ = ["RUN_ID_ENV", "person_write", "refuse_inside_run"]


@contextlib.contextmanager
def person_write(root: Root) -> Iterator[None]:
    refuse_inside_run()
    with lockfile.hold(root.record_lock):
        yield
