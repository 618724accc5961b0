"""`python -E -P -m sdd_git.sandbox.enter --scratch DIR [--product DIR] -- PROGRAM ARGS...`:
apply the Landlock ruleset of a server (sandbox/server.py) to this process, then exec PROGRAM
in its place, with the environment as it is.

Landlock binds the process that applies it and everything it starts, and a caller that can only
pass an argv (the `mcp` stdio client) cannot run code in the child before exec; this module is
that code. It applies the ruleset or fails: a ruleset the kernel refuses ends here with a
message on stderr and exit 126, and PROGRAM never runs without it. `-E -P`: nothing of the
environment or of the working folder decides what Python imports before the ruleset holds."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

CANNOT_ENTER = 126  # what a shell answers for a program it found but could not run


def _parsed(args: list[str]) -> tuple[Path, Path | None, list[str]]:
    if "--" not in args:
        raise ValueError("no program after --")
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    named = dict(zip(options[::2], options[1::2], strict=False))
    if len(options) % 2 or set(named) - {"--scratch", "--product"} or "--scratch" not in named:
        raise ValueError(f"unexpected options: {' '.join(options) or '(none)'}")
    if not command:
        raise ValueError("no program after --")
    product = named.get("--product")
    return Path(named["--scratch"]), Path(product) if product else None, command


def main(args: list[str]) -> NoReturn:
    try:
        scratch, product, command = _parsed(args)
        from sdd_git.sandbox import landlock
        from sdd_git.sandbox.server import policy

        with landlock.prepare(policy(product, scratch)) as prepared:
            prepared.apply()
    except Exception as exc:  # any failure: the program must not run without its ruleset
        sys.stderr.write(f"sdd: cannot start the server inside the Landlock sandbox: {exc}\n")
        sys.stderr.flush()
        os._exit(CANNOT_ENTER)
    try:
        os.execvpe(command[0], command, dict(os.environ))
    except OSError as exc:
        sys.stderr.write(f"sdd: cannot start {command[0]}: {exc.strerror}\n")
        sys.stderr.flush()
        os._exit(CANNOT_ENTER)


if __name__ == "__main__":
    main(sys.argv[1:])
