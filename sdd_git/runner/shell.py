"""Classifying a shell command with a real parser (tree-sitter-bash), before it may run.

Every simple command in the tree is found, wherever it sits: lists, pipes, subshells, brace
groups, loops, functions, command and process substitution. Wrappers (`env`, `timeout`, `xargs`,
`find -exec`, ...) are unwrapped, `bash -c STRING` and here-documents fed to a shell are parsed
in turn. The result says whether the command reaches `sdd`, which paths it writes, and whether
it could be classified with certainty at all. Anything dynamic where it matters (a variable as a
command name, `eval`, text piped into a shell, a parse error) is uncertain: it always stops.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
# Commands that run their arguments as another command: how many leading words to skip is
# decided per wrapper in `_unwrap`.
WRAPPERS = frozenset(
    {
        "env", "timeout", "nohup", "nice", "ionice", "command", "builtin", "exec", "time",
        "stdbuf", "xargs", "sudo", "doas", "chrt", "taskset", "setsid", "unbuffer", "flock",
        "chronic", "caffeinate", "watch", "systemd-run", "strace", "ltrace", "firejail",
    }
)  # fmt: skip
UNCERTAIN_COMMANDS = frozenset({"eval", "source", ".", "alias", "trap", "enable", "fc", "coproc"})
INTERPRETERS = ("python", "python3", "pypy", "pypy3")
# git subcommands that only read the repository; every other one writes `.git/`.
GIT_READS = frozenset(
    {
        "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
        "rev-list", "describe", "shortlog", "cat-file", "whatchanged", "version", "help",
        "merge-base", "name-rev", "for-each-ref", "show-ref", "check-ignore", "count-objects",
    }
)  # fmt: skip
WRITE_REDIRECTS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")
MAX_DEPTH = 8


@dataclass
class ShellFinding:
    reaches_sdd: list[str] = field(default_factory=list)  # why, for each route found
    # (cwd, path, whole tree): a path written; whole tree when everything under it may go too
    writes: list[tuple[str, str, bool]] = field(default_factory=list)
    git_writes: list[str] = field(default_factory=list)  # git subcommands that write .git/
    uncertain: list[str] = field(default_factory=list)  # why it cannot be classified

    @property
    def certain(self) -> bool:
        return not self.uncertain


@lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def classify(command: str) -> ShellFinding:
    finding = ShellFinding()
    _classify(command, finding, ".", 0)
    return finding


def _classify(source: str, finding: ShellFinding, cwd: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        finding.uncertain.append("commands nested too deep to follow")
        return
    tree = _parser().parse(source.encode("utf-8"))
    if tree.root_node.has_error:
        finding.uncertain.append("the command does not parse as shell")
    _walk(tree.root_node, finding, [cwd], depth)


def _walk(node: Any, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    kind = node.type
    if kind == "command":
        _command(node, finding, cwd, depth)
        return
    if kind == "file_redirect":
        _redirect(node, finding, cwd[-1])
    elif kind == "pipeline":
        _pipeline_into_shell(node, finding)
    elif kind in ("subshell", "command_substitution", "process_substitution"):
        cwd.append(cwd[-1])  # a `cd` inside stays inside
        for child in node.children:
            _walk(child, finding, cwd, depth)
        cwd.pop()
        return
    for child in node.children:
        _walk(child, finding, cwd, depth)


def _pipeline_into_shell(node: Any, finding: ShellFinding) -> None:
    commands = [c for c in node.named_children if c.type == "command"]
    for later in commands[1:]:
        words = _words(later)
        name = _base(words[0]) if words and words[0] is not None else None
        if name in SHELLS and not any(w == "-c" for w in words[1:]):
            finding.uncertain.append(f"text is piped into {name}")
        if name in INTERPRETERS and len(words) == 1:
            finding.uncertain.append(f"text is piped into {name}")


def _text(node: Any) -> str | None:
    """The literal value of a word-like node, or None when it is not static."""
    kind = node.type
    raw: str = node.text.decode("utf-8", "replace")
    if kind == "word" or kind == "number":
        return _unescape(raw)
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "ansi_c_string":
        return None  # $'...' escapes: possible, but not certain enough
    if kind == "string":
        parts = []
        for child in node.named_children:
            if child.type == "string_content":
                parts.append(_unescape_double(child.text.decode("utf-8", "replace")))
            else:
                return None  # an expansion inside the quotes
        return "".join(parts)
    if kind == "concatenation":
        pieces = [_text(child) for child in node.named_children]
        if any(p is None for p in pieces):
            return None
        return "".join(p for p in pieces if p is not None)
    if kind == "command_name":
        inner = node.named_children
        return _text(inner[0]) if inner else None
    return None


def _unescape(text: str) -> str:
    out, escaped = [], False
    for char in text:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def _unescape_double(text: str) -> str:
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in '$`"\\\n':
            out.append(text[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _words(command: Any) -> list[str | None]:
    words: list[str | None] = []
    name = command.child_by_field_name("name")
    if name is not None:
        words.append(_text(name))
    for argument in command.children_by_field_name("argument"):
        words.append(_text(argument))
    return words


def _base(word: str) -> str:
    return posixpath.basename(word)


def _command(node: Any, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    # Substitutions inside the words run first, as their own commands.
    for child in node.children:
        _walk(child, finding, cwd, depth)
    if node.child_by_field_name("name") is None:
        return  # only assignments
    _argv(_words(node), finding, cwd, depth, _heredoc_body(node))


def _heredoc_body(node: Any) -> str | None:
    parent = node.parent
    if parent is None or parent.type != "redirected_statement":
        return None
    for redirect in parent.children_by_field_name("redirect"):
        if redirect.type == "heredoc_redirect":
            body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
            if body is None:
                return ""
            if any(c.type != "heredoc_content" for c in body.named_children):
                return None
            return str(body.text.decode("utf-8", "replace"))
    return None


def _argv(
    words: list[str | None],
    finding: ShellFinding,
    cwd: list[str],
    depth: int,
    heredoc: str | None = None,
) -> None:
    if not words:
        return
    head = words[0]
    if head is None:
        finding.uncertain.append("the command name is not a fixed word")
        return
    name = _base(head)
    args = words[1:]
    if name in UNCERTAIN_COMMANDS:
        finding.uncertain.append(f"`{name}` runs text that cannot be checked first")
        return
    if name == "sdd" or name.startswith("sdd-") or head.endswith("/sdd"):
        finding.reaches_sdd.append(f"it runs {head}")
        return
    if name in INTERPRETERS or name.startswith("python"):
        _interpreter(args, finding)
        return
    if name in SHELLS:
        _shell(name, args, finding, cwd, depth, heredoc)
        return
    if name in WRAPPERS:
        inner = _unwrap(name, args, finding)
        if inner is not None:
            _argv(inner, finding, cwd, depth)
        return
    if name == "find":
        _find(args, finding, cwd, depth)
        return
    if name == "cd":
        target = args[0] if args else "~"
        if target is None:
            finding.uncertain.append("`cd` to a folder that is not a fixed word")
        else:
            cwd[-1] = posixpath.normpath(posixpath.join(cwd[-1], target))
        return
    if name == "git":
        _git(args, finding, cwd[-1])
        return
    _writes(name, args, finding, cwd[-1])


def _interpreter(args: list[str | None], finding: ShellFinding) -> None:
    for index, arg in enumerate(args):
        if arg == "-m" and index + 1 < len(args):
            module = args[index + 1]
            if module is None:
                finding.uncertain.append("python -m with a module that is not a fixed word")
            elif module.split(".")[0] == "sdd_git":
                finding.reaches_sdd.append("it runs python -m sdd_git")
            return


def _shell(
    name: str,
    args: list[str | None],
    finding: ShellFinding,
    cwd: list[str],
    depth: int,
    heredoc: str | None,
) -> None:
    for index, arg in enumerate(args):
        if arg is None:
            finding.uncertain.append(f"{name} gets an argument that is not a fixed word")
            return
        if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]):
            if index + 1 >= len(args) or args[index + 1] is None:
                finding.uncertain.append(f"{name} -c runs text that is not a fixed string")
                return
            script = args[index + 1]
            assert script is not None
            _classify(script, finding, cwd[-1], depth + 1)
            return
        if not arg.startswith("-"):
            finding.uncertain.append(f"{name} runs the script {arg}, which is not checked")
            return
    if heredoc is not None:
        _classify(heredoc, finding, cwd[-1], depth + 1)
        return
    finding.uncertain.append(f"{name} reads commands from its input")


def _unwrap(name: str, args: list[str | None], finding: ShellFinding) -> list[str | None] | None:
    """The command a wrapper runs, or None when it runs none (e.g. `env` alone)."""
    index = 0
    takes_value = {
        "timeout": {"-s", "--signal", "-k", "--kill-after"},
        "nice": {"-n", "--adjustment"},
        "ionice": {"-c", "-n", "-p"},
        "xargs": {"-I", "-i", "-n", "-P", "-L", "-s", "-d", "-E", "-a", "--arg-file",
                  "--max-args", "--max-procs", "--delimiter", "--replace"},
        "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-U", "-r", "-t"},
        "doas": {"-u", "-C"},
        "stdbuf": {"-i", "-o", "-e"},
        "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
        "chrt": set(),
        "taskset": set(),
        "flock": {"-w", "--timeout", "-E", "--conflict-exit-code"},
        "watch": {"-n", "--interval", "-d"},
        "systemd-run": {"-p", "--property", "--unit", "-u"},
        "strace": {"-e", "-o", "-p", "-s"},
    }.get(name, set())  # fmt: skip
    skips_positional = name in ("timeout", "taskset", "chrt", "flock")
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append(f"{name} gets an argument that is not a fixed word")
            return None
        if name == "env" and arg in ("-S", "--split-string"):
            finding.uncertain.append("env -S splits a string into a command")
            return None
        if name == "env" and "=" in arg and not arg.startswith("-"):
            index += 1
            continue
        if arg == "--":
            index += 1
            break
        if arg.startswith("-"):
            index += 2 if arg in takes_value else 1
            continue
        if skips_positional:
            skips_positional = False
            index += 1  # the duration, the mask, the priority, the lock file
            continue
        break
    rest = args[index:]
    if name == "watch" and rest:
        joined = " ".join(w for w in rest if w is not None)
        return ["sh", "-c", joined]
    return rest or None


def _find(args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int) -> None:
    starts: list[str] = []
    for arg in args:
        if arg is None:
            finding.uncertain.append("find starts at a path that is not a fixed word")
            return
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    starts = starts or ["."]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end] not in (";", "+"):
                end += 1
            _argv(args[index + 1 : end], finding, cwd, depth)
            index = end
        elif arg == "-delete":
            finding.writes.extend((cwd[-1], p, True) for p in starts)
        index += 1


def _git(args: list[str | None], finding: ShellFinding, cwd: str) -> None:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append("git gets an argument that is not a fixed word")
            return
        if arg in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"):
            index += 2
            continue
        if arg.startswith("-"):
            index += 1
            continue
        if arg not in GIT_READS:
            finding.git_writes.append(arg)
        if arg == "diff" and any(a is not None and a.startswith("--output") for a in args):
            finding.git_writes.append("diff --output")
        return
    return


# Commands that write the paths they are given: which arguments are written.
_WRITERS_ALL = frozenset(
    {"touch", "rm", "rmdir", "mkdir", "truncate", "chmod", "chown", "chgrp", "shred", "unlink",
     "ln", "mkfifo", "mknod", "setfacl", "chattr", "tee", "sponge"}
)  # fmt: skip
_WRITERS_LAST = frozenset({"cp", "mv", "install", "rsync", "scp"})


_TREE_WRITERS = frozenset({"rm", "rmdir", "chmod", "chown", "chgrp", "shred", "setfacl", "chattr"})


def _writes(name: str, args: list[str | None], finding: ShellFinding, cwd: str) -> None:
    def written(path: str | None, whole_tree: bool = False) -> None:
        if path is None:
            finding.uncertain.append(f"{name} writes to a path that is not a fixed word")
        else:
            finding.writes.append((cwd, path, whole_tree))

    operands = [a for a in args if a is None or not a.startswith("-")]
    if name in _WRITERS_ALL or name in _WRITERS_LAST:
        for index, arg in enumerate(args):
            if arg in ("-t", "--target-directory") and index + 1 < len(args):
                written(args[index + 1])
                operands = [a for a in operands if a is not args[index + 1]]
        if name in _WRITERS_LAST and name != "mv":
            operands = operands[-1:]  # cp and friends write only their destination
        for arg in operands:  # mv changes its sources too: they leave the record
            written(arg, name in _TREE_WRITERS)
    elif name == "sed" and any(_short_flag(a, "i") or a == "--in-place" for a in args):
        scripted = any(a in ("-e", "--expression", "-f", "--file") for a in args)
        for arg in operands if scripted else operands[1:]:
            written(arg)
    elif name == "perl" and any(_short_flag(a, "i") for a in args):
        skip_next = False
        for arg in args:
            if skip_next:
                skip_next = False
                continue
            if arg is not None and arg.startswith("-") and arg[-1:] in ("e", "E"):
                skip_next = True  # the next word is the program
                continue
            if arg is None or not arg.startswith("-"):
                written(arg)
    elif name == "dd":
        for arg in args:
            if arg is not None and arg.startswith("of="):
                written(arg[3:])


def _short_flag(arg: str | None, flag: str) -> bool:
    return arg is not None and arg.startswith("-") and not arg.startswith("--") and flag in arg[1:]


def _redirect(node: Any, finding: ShellFinding, cwd: str) -> None:
    if node.type != "file_redirect":
        return
    operator = next((c.type for c in node.children if not c.is_named), "")
    if operator not in WRITE_REDIRECTS:
        return
    destination = node.child_by_field_name("destination")
    if destination is None:
        return
    target = _text(destination)
    if target is None:
        finding.uncertain.append("output is redirected to a path that is not a fixed word")
        return
    if operator == ">&" and (target.isdigit() or target == "-"):
        return  # 2>&1 and friends duplicate a descriptor; they write no file
    if target in ("/dev/null", "/dev/stdout", "/dev/stderr"):
        return
    finding.writes.append((cwd, target, False))
