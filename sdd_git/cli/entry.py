"""The `sdd` console script. `sdd guard` runs before click is even imported: a host runs it
before every tool call its agent makes, so it pays for the classifier and the path rules only.
Everything else is the click command line of `sdd_git.cli.main`.

Before either, the platform: native Windows has none of what sdd's safety rests on (bubblewrap,
Landlock or Seatbelt, POSIX sh hooks, no-follow opens beneath the product), so sdd says so in
one line instead of failing somewhere deep in a run."""

from __future__ import annotations

import sys


def refuse_unsupported_platform(platform: str) -> None:
    """Exit 1 with one `error:` line and a `hint:` on a platform sdd does not run on (native
    Windows, `win32`); return on any other. Imports nothing, so it runs before click."""
    if platform != "win32":
        return
    sys.stderr.write(
        "error: sdd does not run on native Windows; run it inside WSL (Windows Subsystem for "
        "Linux)\n"
        "hint: install WSL (`wsl --install`), then install and run sdd in its Linux shell, on a "
        "clone inside the Linux file system\n"
    )
    sys.exit(1)


def main() -> None:
    refuse_unsupported_platform(sys.platform)
    if sys.argv[1:2] == ["guard"]:
        from sdd_git.hostguard.main import main as guard

        sys.exit(guard(sys.argv[2:]))
    from sdd_git.cli.main import main as command_line

    command_line()
