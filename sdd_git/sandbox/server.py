"""A long-lived program (an MCP connector's stdio server) inside the strongest sandbox the
machine allows: the one place that builds the argv that starts it, for every backend.

What it gets, unlike a command (`execute.run`): the network, since it is a server that may call
its service, and the product folder read-only, all of it: a server reads the product, and only
the person's allowed commands write it. Like a command: the rest of the machine read-only; a
private HOME and /tmp of its own (a scratch folder, removed when it ends); credential files
hidden (bubblewrap and Seatbelt; Landlock cannot hide a file it lets be read); under bubblewrap
new user, pid, ipc and uts namespaces and no capabilities, also as root; and exactly the
environment its caller built, started from an empty one (`env -i`).

How each backend is entered. Bubblewrap and Seatbelt are programs that take the command after
them. Landlock is applied by the process itself, before it execs the server, and the caller
(the `mcp` package's stdio client) takes only an argv: so the argv starts
`python -E -P -m sdd_git.sandbox.enter`, which applies the ruleset and execs the server
(enter.py), and never execs it without one.

With `sandboxed=False` (the person's `sandbox: off`), or where the machine has no sandbox, the
program runs as she does, and the label says so; the caller puts that in words."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from sdd_git.sandbox.choose import current
from sdd_git.sandbox.policy import Policy, policy_for

OFF = "off"  # the label of a program the person's settings keep out of the sandbox
# What a sandboxed program finds set beyond the environment it was given (whose HOME is made its
# private one): TMPDIR, its private /tmp; PWD, which bubblewrap sets to the folder it starts in.
ADDED_ENV = ("TMPDIR", "PWD")
# The program starts in a process group of its own (the caller's client asks for a new
# session); this writes its pid, which `exec` hands on, so that the caller can end the group.
_WRITE_PID = 'echo $$ > "$0" && exec "$@"'


@dataclass(frozen=True)
class Launch:
    """How to start the program: `argv` from an empty environment of its own, the folder the
    outermost process starts in (never the product), and where it runs."""

    argv: tuple[str, ...]
    cwd: str
    sandbox: str  # "bwrap", "landlock", "seatbelt", OFF, or "none: <why>"

    @property
    def contained(self) -> bool:
        return self.sandbox != OFF and not self.sandbox.startswith("none")


def policy(product: Path | None, scratch: Path) -> Policy:
    """What the program may touch: writes only in `scratch` (its HOME and /tmp), the product
    and everything else read-only, credential files hidden, the network on. With no product
    (a caller outside any repository) the scratch stands in its place."""
    if product is None:
        return policy_for(scratch, scratch, network=True)
    base = policy_for(product, scratch, network=True)
    # The product itself first among the read-only paths: every backend then keeps all of it.
    return replace(base, read_only=(base.product, *base.read_only))


@contextmanager
def contained(
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    product: Path | None,
    cwd: str | None = None,
    pid_file: Path | None = None,
    sandboxed: bool = True,
) -> Iterator[Launch]:
    """The launch of `command` (its first word a full path) with exactly `env`, inside the
    sandbox unless `sandboxed` is False. The scratch folder it is given lives until the block
    ends: leave it only once the program has stopped. `cwd`: a folder outside the product to
    run in (read-only to a sandboxed program); by default the scratch folder."""
    scratch = Path(tempfile.mkdtemp(prefix="sdd-server-")).resolve()
    try:
        yield _launch(list(command), dict(env), product, cwd, pid_file, scratch, sandboxed)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _launch(
    command: list[str],
    env: dict[str, str],
    product: Path | None,
    cwd: str | None,
    pid_file: Path | None,
    scratch: Path,
    sandboxed: bool,
) -> Launch:
    shell, env_program = shutil.which("sh"), shutil.which("env")
    start = cwd or str(scratch)
    if os.name != "posix" or shell is None or env_program is None:
        return Launch(tuple(command), start, "none: no POSIX shell to start it from")
    # Asked of the machine only for a sandboxed program: the first ask probes bubblewrap.
    box = current() if sandboxed else None
    inner, label = command, OFF if box is None else box.label
    if box is not None and box.name == "bwrap":
        from sdd_git.sandbox import bwrap

        # bwrap sets HOME and TMPDIR to its private /tmp, and starts the program in `cwd`, or
        # in that /tmp: never in the product, where `python -m x` would load a file a role wrote.
        inner = bwrap.argv(box.binary, policy(product, scratch), command, chdir=cwd or "/tmp")
    elif box is not None and box.name == "landlock":
        env.update(HOME=str(scratch), TMPDIR=str(scratch))
        enter = [sys.executable, "-E", "-P", "-m", "sdd_git.sandbox.enter", "--scratch"]
        enter += [str(scratch), *(["--product", str(product)] if product else []), "--"]
        inner = [*enter, *command]
    elif box is not None and box.name == "seatbelt":
        from sdd_git.sandbox import seatbelt

        env.update(HOME=str(scratch), TMPDIR=str(scratch))
        inner = seatbelt.argv(policy(product, scratch), command)
    # The caller's client adds variables of its own choosing (USER, SHELL, TERM...): `env -i`
    # starts from none, so the program gets exactly `env`.
    argv = [env_program, "-i", *(f"{name}={value}" for name, value in env.items()), *inner]
    if pid_file is not None:
        argv = [shell, "-c", _WRITE_PID, str(pid_file), *argv]
    return Launch(tuple(argv), start, label)
