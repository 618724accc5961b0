"""`sdd guard` as click sees it: `sdd --help` lists it, and `sdd -C DIR guard` reaches it. The
console script runs it before click (`sdd_git.cli.entry`); both run the same
`sdd_git.hostguard.main`, which reads its own options."""

from __future__ import annotations

import click


@click.command(
    "guard",
    context_settings={"ignore_unknown_options": True, "help_option_names": []},
    add_help_option=False,
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar="[--host NAME]")
def guard(args: tuple[str, ...]) -> int:
    """Check another agent's tool call before it runs (a host's pre-tool-use hook)."""
    from sdd_git.hostguard.main import main

    return main(list(args))
