"""Commands sdd starts itself, never typed by her: `event-worker ROOT`, the detached worker that
hooks, the watcher and `sdd trust` start, and `network-node CH NODE SHA`, one node's own
process. Hidden from `sdd --help`, spawned as `sys.executable -m sdd_git COMMAND ...`.

`python -m sdd_git` runs them before click is imported (see `__main__`): a worker start pays
for its own module only, as it did when it was `python -m sdd_git.events.worker`."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

# command -> (the module whose `main(argv) -> int` it runs, its arguments as usage shows them)
SPAWNED = {
    "event-worker": ("sdd_git.events.worker", "ROOT"),
    "network-node": ("sdd_git.network.node", "CH NODE SHA"),
}


def run(name: str, args: Sequence[str]) -> int:
    entry = importlib.import_module(SPAWNED[name][0]).main
    code = entry(list(args))
    assert isinstance(code, int)
    return code


def command(name: str) -> click.Command:
    """The hidden click command, for `sdd COMMAND ...` from a shell."""
    import click

    @click.command(name, hidden=True, context_settings={"ignore_unknown_options": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar=SPAWNED[name][1])
    def spawned(args: tuple[str, ...]) -> int:
        return run(name, args)

    return spawned
