"""The walk over a parsed command line: every simple command found, wherever it sits, and
handed to the one rule for its program (the table at the end)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import NamedTuple

from sdd_git.shellpolicy.arith import (
    EVALUATES,
    INTEGER_VARIABLES,
    NAMING_BUILTINS,
    array_keys,
    assigned,
    evaluated,
    misread_arithmetic,
    named_words,
    tests_a_name,
)
from sdd_git.shellpolicy.findings import Ran, ShellFinding, Words
from sdd_git.shellpolicy.parse import (
    base_name,
    heredoc_body,
    is_python,
    is_sdd,
    join_continuations,
    looks_like_code,
    parser,
    printed_text,
    short_flag,
    text_of,
    words_of,
)
from sdd_git.shellpolicy.programs import cd_command, find_command, git_command
from sdd_git.shellpolicy.runs_code import runs_code
from sdd_git.shellpolicy.sed import sed_command
from sdd_git.shellpolicy.shells import (
    CODE_STRING_PROGRAMS,
    VERSIONED_CODE,
    capsh_command,
    code_strings,
    python_module,
    run_written_script,
    sg_command,
    shell_command,
    shell_has_script,
    watch_command,
)
from sdd_git.shellpolicy.wrappers import (
    COMMAND_OPTIONS,
    DANGEROUS_ENV,
    DANGEROUS_ENV_PREFIXES,
    FILE_WRAPPERS,
    LOADER,
    SHELLS,
    WRAPPERS,
    command_options,
    command_variable,
    probe_words,
    unwrap,
)
from sdd_git.shellpolicy.writers import (
    READERS,
    WRITERS_ALL,
    WRITERS_LAST,
    dd_command,
    file_redirect,
    perl_in_place,
    reader_writes,
    sort_command,
    touched,
    write_command,
)

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from sdd_git.shellpolicy.findings import Follow

# Builtins and programs that run text as code, rename commands or evaluate strings.
UNCERTAIN_COMMANDS = frozenset(
    {
        "eval", "source", ".", "alias", "trap", "enable", "fc", "coproc", "hash", "mapfile",
        "readarray", "let", "declare", "typeset", "shopt", "popd", "bind", "complete", "compgen",
        "su", "runuser", "ssh", "sudoedit", "expect", "osascript", "at", "batch", "crontab",
        "parallel", "entr", "inotifywait", "nsenter", "chroot", "unshare", "systemd-run",
    }
)  # fmt: skip


MAX_DEPTH = 8


def classify(command: str) -> ShellFinding:
    finding = ShellFinding()
    _classify(command, finding, ".", 0)
    return finding


def _classify(source: str, finding: ShellFinding, cwd: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        finding.uncertain.append("commands nested too deep to follow")
        return
    tree = parser().parse(join_continuations(source).encode("utf-8"))
    if tree.root_node.has_error:
        finding.uncertain.append("the command does not parse as shell")
    _walk(tree.root_node, finding, [cwd], depth)


def _walk(node: Any, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    kind = node.type
    if kind == "command":
        _command(node, finding, cwd, depth)
        return
    if kind == "variable_assignment":
        _assignment(node, finding)
    elif kind == "file_redirect":
        file_redirect(node, finding, cwd[-1])
    elif kind == "herestring_redirect":
        pass
    elif kind == "pipeline":
        _pipeline_into_interpreter(node, finding)
    elif kind in ("raw_string", "string_content") and looks_like_code(node.text):
        finding.uncertain.append("a string holds a command substitution that could be evaluated")
    elif kind in EVALUATES:  # where bash evaluates a value as arithmetic or as a name
        evaluated(node, finding)
    elif kind in ("subshell", "command_substitution", "process_substitution"):
        if kind != "process_substitution":
            misread_arithmetic(node, finding)
        cwd.append(cwd[-1])  # a `cd` inside stays inside
        for child in node.children:
            _walk(child, finding, cwd, depth)
        cwd.pop()
        return
    for child in node.children:
        _walk(child, finding, cwd, depth)


def _assignment(node: Any, finding: ShellFinding) -> None:
    name_node = node.child_by_field_name("name")
    name = name_node.text.decode("utf-8", "replace") if name_node is not None else ""
    name = name.split("[", 1)[0]
    if name in DANGEROUS_ENV or name.startswith(DANGEROUS_ENV_PREFIXES):
        finding.uncertain.append(f"it sets {name}, which changes what later commands run")
    value = node.child_by_field_name("value")
    text = text_of(value) if value is not None else None
    assigned(name, text if value is not None else "", finding)
    if value is not None and value.type == "array":
        array_keys(value, finding)
    command_variable(FOLLOW, name, text, finding)


def _pipeline_into_interpreter(node: Any, finding: ShellFinding) -> None:
    commands = [c for c in node.named_children if c.type == "command"]
    for later in commands[1:]:
        words = words_of(later)
        name = base_name(words[0]) if words and words[0] is not None else None
        if name is None:
            continue
        if name in SHELLS and not shell_has_script(words[1:]):
            finding.uncertain.append(f"text is piped into {name}")
        elif is_python(name) and not any(w in ("-c", "-m") for w in words[1:] if w):
            positional = [w for w in words[1:] if w is None or not w.startswith("-")]
            if not positional or positional[0] in (None, "-"):
                finding.uncertain.append(f"text is piped into {name}")


def _command(node: Any, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    for child in node.children:  # substitutions inside the words run as commands of their own
        _walk(child, finding, cwd, depth)
    if node.child_by_field_name("name") is None:
        return  # only assignments
    words = words_of(node)
    before = list(cwd)
    _note_script(node, words, finding, cwd[-1])
    _argv(words, finding, cwd, depth, heredoc_body(node))
    expanded = words_of(node, home=True)
    if expanded != words:
        # `~/x` is not a fixed word (the sandbox gives the command its own HOME), so the pass
        # above found it uncertain; seen as the person's home it may also write her rules, which
        # is refused outright. Only the writes of this second look are kept.
        probe = ShellFinding()
        _argv(expanded, probe, before, depth, heredoc_body(node))
        finding.writes.extend(w for w in probe.writes if w not in finding.writes)
        finding.sources.extend(s for s in probe.sources if s not in finding.sources)


def _note_script(node: Any, words: Words, finding: ShellFinding, cwd: str) -> None:
    """`printf '#!/bin/sh\\nsdd next\\n' > x.sh` (or echo) writes text the line can show: if a
    later command runs x.sh, that text is what runs, and it is classified as shell there."""
    parent = node.parent
    if parent is None or parent.type != "redirected_statement":
        return
    for redirect in parent.children_by_field_name("redirect"):
        if redirect.type != "file_redirect":
            continue
        operator = next((c.type for c in redirect.children if not c.is_named), "")
        destination = redirect.child_by_field_name("destination")
        target = text_of(destination) if destination is not None else None
        if operator not in (">", ">>", ">|") or target is None:
            continue
        path = posixpath.normpath(posixpath.join(cwd, target))
        text = printed_text(words)
        previous = finding.scripts.get(path, "") if operator == ">>" else ""
        finding.scripts[path] = None if text is None or previous is None else previous + text


def _argv(
    words: Words, finding: ShellFinding, cwd: list[str], depth: int, stdin_script: str | None = None
) -> None:
    if not words:
        return
    finding.commands.append(Ran(cwd[-1], list(words), stdin_script))
    head = words[0]
    if head is None:
        finding.uncertain.append("the command name is not a fixed word")
        return
    name = base_name(head)
    args = words[1:]
    finding.programs.append(head)
    finding.ran_code(runs_code(head, args))
    run_written_script(FOLLOW, head, finding, cwd[-1], depth)
    if name in COMMAND_OPTIONS:
        command_options(FOLLOW, name, args, finding, cwd, depth)
    if name in CODE_STRING_PROGRAMS or is_python(name) or VERSIONED_CODE.fullmatch(name):
        code_strings(FOLLOW, name, args, finding, cwd, depth)
    rule, key = _rule(name, args)
    rule(Command(key, head, args, stdin_script), finding, cwd, depth)


class Command(NamedTuple):
    """One simple command, its wrappers' words still on: `name` is the rule's key."""

    name: str
    head: str  # as written
    args: Words
    stdin_script: str | None  # the text a here-document feeds it


Rule = Callable[[Command, ShellFinding, list[str], int], None]


def _rule(name: str, args: Words) -> tuple[Rule, str]:
    """The one rule for the program, in order: what is sure of the name first, then what the
    words add; the table by name last."""
    if is_sdd(name):
        return _reaches_sdd, name
    if name in UNCERTAIN_COMMANDS:
        return _runs_unchecked, name
    if LOADER.fullmatch(name):
        return _wrapped, "ld.so"
    if name in ("printf", "read") and any(
        a is None or "[" in a or a in INTEGER_VARIABLES for a in args
    ):
        return _assigns_subscript, name
    if name in NAMING_BUILTINS:
        return _names, name
    if name == "command" and any(a in ("-v", "-V") for a in args):
        return _looks_up, name
    if is_python(name):
        return _python, name
    if name.startswith("git-"):
        return _git, name
    if name == "perl" and any(short_flag(a, "i") for a in args):
        return _perl_in_place, name
    return _BY_NAME.get(name, _other), name


def _reaches_sdd(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    finding.reach_sdd(f"it runs {command.head}", command.name, command.args)


def _runs_unchecked(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    finding.uncertain.append(f"`{command.name}` runs or rewrites commands that cannot be checked")
    probe_words(FOLLOW, command.name, command.args, finding, cwd, depth)


def _wrapped(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    inner = unwrap(FOLLOW, command.name, command.args, finding, cwd, depth)
    if inner is not None:
        _argv(inner, finding, cwd, depth)


def _assigns_subscript(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    integers = ", ".join(sorted(INTEGER_VARIABLES))
    finding.uncertain.append(
        f"`{command.name}` may assign to an array element or to one of {integers}, whose "
        "subscript or value bash evaluates as arithmetic, where a value can run a command"
    )


def _names(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    """`local`, `export`, `readonly`, `unset`, `wait -p` run as words (`builtin local`)."""
    named_words(command.name, command.args, finding)
    _other(command, finding, cwd, depth)


def _test(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    tests_a_name(command.args, finding)
    _other(command, finding, cwd, depth)


def _looks_up(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    """`command -v NAME` only looks the name up."""


def _python(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    python_module(command.args, finding)


def _git(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    name, args = command.name, command.args
    git_command(FOLLOW, [name[4:], *args] if name != "git" else args, finding, cwd[-1], depth)


def _perl_in_place(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    perl_in_place(command.args, finding, cwd[-1])


def _shell(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    shell_command(FOLLOW, command.name, command.args, finding, cwd, depth, command.stdin_script)


def _busybox(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    """`busybox APPLET ARGS...` runs the applet: it stays uncertain (busybox's applets are not
    the programs the tables know), and the applet is classified too, so that it is refused or
    counted as running code as the program of that name would be."""
    args = command.args
    finding.uncertain.append("busybox runs an applet whose options sdd does not know")
    if not args or args[0] in ("--list", "--help"):
        return
    if args[0] is None or args[0].startswith("-"):
        finding.uncertain.append("busybox gets an option sdd does not know how to follow")
        return
    _argv(args, finding, cwd, depth, command.stdin_script)


def _watch(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    watch_command(FOLLOW, command.args, finding, cwd, depth)


def _sg(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    sg_command(FOLLOW, command.args, finding, cwd, depth)


def _capsh(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    capsh_command(FOLLOW, command.args, finding, cwd, depth, command.stdin_script)


def _find(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    find_command(FOLLOW, command.args, finding, cwd, depth)


def _cd(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    cd_command(command.name, command.args, finding, cwd)


def _sed(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    sed_command(FOLLOW, command.args, finding, cwd[-1], depth)


def _writes(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    write_command(command.name, command.args, finding, cwd[-1])


def _sort(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    sort_command(command.args, finding, cwd[-1])


def _dd(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    dd_command(command.args, finding, cwd[-1])


def _other(command: Command, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    """A program nobody vouches for (or a reader told to write with `-o`)."""
    args = command.args
    if reader_writes(command.name, args, finding, cwd[-1]):
        return
    if command.name not in READERS or any(a is not None and a.startswith("-o") for a in args):
        touched(args, finding, cwd[-1])


# Disjoint sets, but for busybox (a shell too), which runs its applet.
_BY_NAME: dict[str, Rule] = {
    **dict.fromkeys(SHELLS, _shell),
    **dict.fromkeys((*WRAPPERS, *FILE_WRAPPERS), _wrapped),
    **dict.fromkeys(("ln", "cp", "mv", *WRITERS_ALL, *WRITERS_LAST), _writes),
    "busybox": _busybox,
    "watch": _watch,
    "sg": _sg,
    "capsh": _capsh,
    "find": _find,
    "cd": _cd,
    "pushd": _cd,
    "git": _git,
    "sed": _sed,
    "sort": _sort,
    "dd": _dd,
    "test": _test,
    "[": _test,
}


class _Walker:
    """The classifier's own recursion, handed to the program rules as a `Follow`."""

    script = staticmethod(_classify)
    argv = staticmethod(_argv)


FOLLOW: Follow = _Walker()
