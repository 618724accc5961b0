"""What runs text as shell: `bash -c`, a shell reading a here-document, watch, sg, capsh,
busybox, python -m, and code on the command line that hands a string to a shell."""

from __future__ import annotations

import posixpath
import re

from sdd_git.shellpolicy.findings import ShellFinding, Words
from sdd_git.shellpolicy.parse import is_sdd
from sdd_git.shellpolicy.runs_code import AWKS, EDITORS
from sdd_git.shellpolicy.wrappers import probe_words

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.shellpolicy.findings import Follow

PYTHON_LAUNCHERS = frozenset({"runpy", "cProfile", "profile", "pdb", "trace", "timeit", "code"})


# Programs whose code may be given on the command line; string literals handed to a call that
# runs a shell command in it are read as shell (`awk 'BEGIN{system("sdd next")}'`). Only the
# first argument, as a string: a list (`subprocess.run(['sdd'])`) is code this does not read, and
# the sink and the sandbox hold there.
CODE_STRING_PROGRAMS = AWKS | EDITORS | {
    "perl", "ruby", "node", "nodejs", "php", "bun", "deno", "gdb", "lldb", "lua", "tclsh",
}  # fmt: skip


# Those with a version in their name: perl5.36, ruby3.3, php8.2, lua5.4.
VERSIONED_CODE = re.compile(r"(perl|ruby|php|lua|luajit|node|tclsh)[0-9.]*")


_LITERAL = r"""(?P<q>["'`])(?P<body>(?:\\.|(?!(?P=q)).)*)(?P=q)"""


# Patterns, not compiled ones: `re` compiles each on first use and keeps it. Only code given on
# the line needs them, and `sdd guard` would pay for the compile before every tool call.
_SHELL_CALL = (
    r"(?:\b(?:system|exec\w*|popen\w*|spawn\w*|call|run|check_output|check_call|Popen|"
    r"getoutput|getstatusoutput|shell_exec|passthru|proc_open|qx|open\w*|pipe)\s*[(\s]\s*"
    r"|\|\s*|\bqx\s*)" + _LITERAL
)


_PIPED_LITERAL = _LITERAL + r"\s*\|"


_BACKTICKS = re.compile(r"`([^`]*)`")


def code_strings(
    follow: Follow, name: str, args: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> None:
    """Code given on the command line that hands a fixed string to a shell: the string is
    classified, and reaching sdd through it is refused (the rest of such code runs code)."""
    texts: list[str] = []
    for index, arg in enumerate(args):
        if arg is None:
            continue
        before = args[index - 1] if index else None
        if name in EDITORS and (before in ("-c", "--cmd") or arg.startswith("+")):
            command = arg.lstrip("+: ")
            if "!" in command:
                texts.append(command.split("!", 1)[1])
        if name in ("gdb", "lldb") and before in (
            "-ex",
            "--ex",
            "-iex",
            "--iex",
            "-eval-command",
            "--eval-command",
            "-o",
            "--one-line",
        ):
            command = arg.strip()
            for prefix in ("shell ", "!", "platform shell "):
                if command.startswith(prefix):
                    texts.append(command[len(prefix) :])
        for match in re.finditer(_SHELL_CALL, arg):
            texts.append(match.group("body"))
        for match in re.finditer(_PIPED_LITERAL, arg):
            texts.append(match.group("body"))
        if name not in AWKS and not name.startswith(("python", "pypy")):
            texts.extend(m.group(1) for m in _BACKTICKS.finditer(arg))
    probe = ShellFinding()
    for text in texts:
        follow.script(re.sub(r"\\(.)", r"\1", text).strip("|- "), probe, cwd[-1], depth + 1)
    finding.reach_sdd_through(probe, f"{name} hands a shell command to run: {{}}", sure=False)


def watch_command(
    follow: Follow, args: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> None:
    """`watch [-n N] [-d] [-t] CMD...` runs `sh -c "CMD..."` again and again."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-n", "--interval"):
            index += 2
        elif arg in ("-x", "--exec"):
            follow.argv(args[index + 1 :], finding, cwd, depth)  # run directly, not through sh -c
            return
        elif arg in ("-d", "--differences", "-t", "--no-title", "-b", "--beep", "-e", "-g",
                     "--errexit", "--chgexit", "-c", "--color", "-C", "--no-color", "-p",
                     "--precise", "-r", "--no-rerun", "-w", "--no-wrap"):  # fmt: skip
            index += 1
        elif arg is not None and arg.startswith("-"):
            finding.uncertain.append(f"watch {arg}: an option sdd does not know how to follow")
            probe_words(follow, "watch", args[index:], finding, cwd, depth)
            return
        else:
            break
    rest = args[index:]
    if not rest or any(w is None for w in rest):
        finding.uncertain.append("watch runs text that is not a fixed string")
        return
    follow.script(" ".join(w for w in rest if w is not None), finding, cwd[-1], depth + 1)


def sg_command(
    follow: Follow, args: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> None:
    """`sg [-] GROUP [-c] COMMAND`: COMMAND is a command line run by /bin/sh."""
    rest = args[1:] if args[:1] == ["-"] else args
    rest = rest[1:]  # the group
    if rest[:1] == ["-c"]:
        rest = rest[1:]
    if not rest:
        finding.uncertain.append("sg runs a shell that reads its input")
        return
    if any(w is None for w in rest):
        finding.uncertain.append("sg runs text that is not a fixed string")
        probe_words(follow, "sg", rest, finding, cwd, depth)
        return
    follow.script(" ".join(w for w in rest if w is not None), finding, cwd[-1], depth + 1)


def capsh_command(
    follow: Follow,
    args: Words,
    finding: ShellFinding,
    cwd: list[str],
    depth: int,
    stdin: str | None,
) -> None:
    """`capsh [--OPTION[=VALUE]]... [-- ARGS | == ARGS]`: after `--` ARGS go to its shell
    (bash unless --shell= names another); after `==` capsh runs again with them."""
    shell = "bash"
    for index, arg in enumerate(args):
        if arg is None:
            finding.uncertain.append("capsh gets an argument that is not a fixed word")
            probe_words(follow, "capsh", args[index:], finding, cwd, depth)
            return
        if arg == "--":
            follow.argv([shell, *args[index + 1 :]], finding, cwd, depth, stdin)
            return
        if arg == "==":
            capsh_command(follow, args[index + 1 :], finding, cwd, depth, stdin)
            return
        if arg.startswith("--shell="):
            shell = arg.split("=", 1)[1]
        elif not arg.startswith("--"):
            finding.uncertain.append(f"capsh {arg}: an option sdd does not know how to follow")
            probe_words(follow, "capsh", args[index:], finding, cwd, depth)
            return


def python_module(args: Words, finding: ShellFinding) -> None:
    """`python -m MODULE`, clusters like `-Im`, and launchers that run another module."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append("python gets an argument that is not a fixed word")
            return
        if arg == "-" or not arg.startswith("-"):
            if is_sdd(posixpath.basename(arg)):  # sdd's own console script, run by path
                finding.reach_sdd(f"it runs {arg} with python", "sdd", args[index + 1 :])
            return  # a script file (or stdin): the sink and the sandbox hold there
        if arg in ("-c",):
            return  # code on the command line: the sink and the sandbox hold there
        flags = arg[1:] if not arg.startswith("--") else ""
        if "m" in flags:
            attached = flags.split("m", 1)[1]
            module = attached or (args[index + 1] if index + 1 < len(args) else "")
            rest = args[index + (1 if attached else 2) :]
            if module is None or not module:
                finding.uncertain.append("python -m names a module that is not a fixed word")
            elif module.split(".")[0] == "sdd_git":
                program = "sdd_git" if module in ("sdd_git", "sdd_git.__main__") else module
                finding.reach_sdd("it runs python -m sdd_git", program, rest)
            elif module.split(".")[0] in PYTHON_LAUNCHERS:
                finding.uncertain.append(f"python -m {module} runs another module or script")
            return
        if "c" in flags:
            return
        if arg in ("-W", "-X", "-Q") or flags in ("W", "X"):
            index += 2
            continue
        index += 1


def shell_has_script(args: Words) -> bool:
    return any(
        a is not None and a.startswith("-") and not a.startswith("--") and "c" in a[1:]
        for a in args
    )


def shell_command(
    follow: Follow,
    name: str,
    args: Words,
    finding: ShellFinding,
    cwd: list[str],
    depth: int,
    stdin_script: str | None,
) -> None:
    """`bash [options] -c SCRIPT`, `bash FILE` or a shell reading its input."""
    has_c = False
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append(f"{name} gets an argument that is not a fixed word")
            return
        if arg == "--":
            index += 1
            break
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if arg.startswith(("-", "+")) and arg not in ("-", "+"):
            if not arg.startswith("--") and "c" in arg[1:]:
                has_c = True
            # A cluster ending in o or O takes the option's name next: -euo pipefail.
            index += 2 if not arg.startswith("--") and arg[-1] in "oO" else 1
            continue
        break
    rest = args[index:]
    if has_c:
        if not rest or rest[0] is None:
            finding.uncertain.append(f"{name} -c runs text that is not a fixed string")
            return
        follow.script(rest[0], finding, cwd[-1], depth + 1)
        return
    if rest and rest[0] not in (None, "-"):
        run_written_script(follow, rest[0], finding, cwd[-1], depth)
        finding.uncertain.append(f"{name} runs the script {rest[0]}, which is not checked")
        finding.runs_code.append(f"{name} runs the script {rest[0]}")
        return
    if stdin_script is not None:
        follow.script(stdin_script, finding, cwd[-1], depth + 1)
        return
    finding.uncertain.append(f"{name} reads commands from its input")
    finding.runs_code.append(f"{name} runs commands from its input")


def run_written_script(
    follow: Follow, head: str, finding: ShellFinding, cwd: str, depth: int
) -> None:
    """A program this same line wrote runs the text it was written with."""
    path = posixpath.normpath(posixpath.join(cwd, head))
    if path not in finding.scripts:
        return
    text = finding.scripts[path]
    if text is None:
        finding.uncertain.append(f"{head} was written by this command with text sdd cannot read")
        return
    follow.script(text, finding, cwd, depth + 1)
