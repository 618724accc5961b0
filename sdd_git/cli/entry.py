"""The `sdd` console script. `sdd guard` runs before click is even imported: a host runs it
before every tool call its agent makes, so it pays for the classifier and the path rules only.
Everything else is the click command line of `sdd_git.cli.main`."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["guard"]:
        from sdd_git.hostguard.main import main as guard

        sys.exit(guard(sys.argv[2:]))
    from sdd_git.cli.main import main as command_line

    command_line()
