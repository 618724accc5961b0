"""`sdd guard [--host NAME]`: read the host's pre-tool-use input on stdin, answer in its protocol.

Run before click is imported (`sdd_git.cli.entry`, `sdd_git.__main__`): it is on the hot path
of every tool call the host's agent makes. Whatever goes wrong inside (input it cannot read, a
bug) ends in a refusal that says why, never in an exit code the host would read as "go on"."""

from __future__ import annotations

import os
import sys

# `typing` is never imported at run time here: `sdd guard` runs this before each tool call of
# another agent (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

USAGE = """\
Usage: sdd guard [--host NAME]

  Check one tool call of another agent (Claude Code, ...) before it runs: the host's
  pre-tool-use hook input on stdin, the answer in that host's protocol. It refuses the
  person's sdd commands by any spelling, and any write to memory/, changes/, .sdd/, .git/ or
  another agent's rule files; a command it cannot classify is asked about, never allowed.
  `sdd agents install claude` registers it as Claude Code's PreToolUse hook.

Options:
  --host NAME  the host's protocol: {hosts} (default: {default})
  -h, --help   show this message and exit
"""
MAX_INPUT = 64 * 1024 * 1024  # a Write of a big file still fits; anything larger is refused


def main(
    argv: list[str],
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    from sdd_git.hostguard.hosts import DEFAULT_HOST, HOSTS, host

    out, err = stdout or sys.stdout, stderr or sys.stderr
    name, problem = _arguments(argv, DEFAULT_HOST)
    if problem == "help":
        out.write(USAGE.format(hosts=", ".join(HOSTS), default=DEFAULT_HOST))
        return 0
    if problem is not None:
        err.write(f"error: {problem}\nhint: see 'sdd guard --help'\n")
        return 2  # a hook given a wrong command line refuses: it fails closed
    chosen = host(name)
    if chosen is None:
        err.write(f"error: sdd guard knows no host '{name}' (it knows: {', '.join(HOSTS)})\n")
        return 2
    from sdd_git.hostguard.call import Answer, deny
    from sdd_git.hostguard.check import decide

    try:
        read = chosen.read(_input(stdin), os.environ)
        answer = read if isinstance(read, Answer) else decide(read)
    except _InputError as exc:
        answer = deny(str(exc))
    except BaseException as exc:  # a guard that fails must refuse, in words
        answer = deny(
            f"sdd guard could not check this call ({type(exc).__name__}: {exc}); it "
            "is refused until it can. Run `sdd guard --help`, or report the input"
        )
    return chosen.write(answer, out, err)


def _arguments(argv: list[str], default: str) -> tuple[str, str | None]:
    name, index = default, 0
    while index < len(argv):
        word = argv[index]
        if word in ("-h", "--help"):
            return name, "help"
        if word == "--host" and index + 1 < len(argv):
            name, index = argv[index + 1], index + 2
        elif word.startswith("--host="):
            name, index = word.split("=", 1)[1], index + 1
        else:
            return name, f"sdd guard takes only --host NAME, not '{word}'"
    return name, None


class _InputError(Exception):
    pass


def _input(stdin: TextIO | None) -> str:
    stream = stdin if stdin is not None else sys.stdin
    raw = stream.buffer.read(MAX_INPUT + 1) if hasattr(stream, "buffer") else stream.read()
    if len(raw) > MAX_INPUT:
        raise _InputError(f"the hook input is larger than {MAX_INPUT // 1024 // 1024} MB")
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _InputError("the hook input is not UTF-8 text") from None
