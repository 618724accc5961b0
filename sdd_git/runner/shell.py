"""Classifying a shell command with a real parser (tree-sitter-bash), before it may run.

Every simple command in the tree is found, wherever it sits: lists, pipes, subshells, brace
groups, loops, functions, command and process substitution. Wrappers (`env`, `timeout`, `xargs`,
`find -exec`, ...) are unwrapped, and `bash -c STRING` and here-documents fed to a shell are
parsed in turn. The result says whether the command reaches `sdd`, which paths it writes, which
paths it hands to programs nobody can vouch for, whether it runs code (an interpreter, a build
or test runner, an extractor, a program of the product's: see `code_runners`), and whether it
could be classified with certainty at all.

The stance is strict: a word is known only when it is fully static (no expansion, glob, brace or
tilde), a wrapper option is known only when it is in the table, and anything else where it
matters makes the command uncertain. An uncertain command always stops for the person and no
saved rule allows it; the sink (SDD_RUN_ID) and the sandbox still hold after that.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from sdd_git.runner.code_runners import AWKS, EDITORS, TARS, runs_code

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish"})
# Builtins and programs that run text as code, rename commands or evaluate strings.
UNCERTAIN_COMMANDS = frozenset(
    {
        "eval", "source", ".", "alias", "trap", "enable", "fc", "coproc", "hash", "mapfile",
        "readarray", "let", "declare", "typeset", "shopt", "popd", "bind", "complete", "compgen",
        "su", "runuser", "ssh", "sudoedit", "expect", "osascript", "at", "batch", "crontab",
        "parallel", "entr", "inotifywait", "nsenter", "chroot", "unshare", "systemd-run",
    }
)  # fmt: skip
PYTHON_LAUNCHERS = frozenset({"runpy", "cProfile", "profile", "pdb", "trace", "timeit", "code"})
# Variables whose value becomes code, a path lookup or a config for a child process.
DANGEROUS_ENV = frozenset(
    {
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "CDPATH", "HOME", "PAGER", "PS4",
        "PROMPT_COMMAND", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONSTARTUP",
        "PYTHONHOME", "PATH", "IFS", "GLOBIGNORE", "EDITOR", "VISUAL", "MANPAGER", "LESSOPEN",
        "PERL5OPT", "NODE_OPTIONS", "RUBYOPT",
    }
)  # fmt: skip
DANGEROUS_ENV_PREFIXES = ("GIT_", "BASH_FUNC_", "SDD_")
# Commands that run their arguments as another command, with the options each one knows:
# an option outside the table makes the command uncertain. Values: options taking a value.
WRAPPERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    # name: (options with a value, options without)
    "env": (
        frozenset({"-u", "--unset"}),
        frozenset({"-i", "--ignore-environment", "-0", "--null"}),
    ),
    "timeout": (
        frozenset({"-s", "--signal", "-k", "--kill-after"}),
        frozenset({"--foreground", "--preserve-status", "-v", "--verbose"}),
    ),
    "nohup": (frozenset(), frozenset()),
    "nice": (frozenset({"-n", "--adjustment"}), frozenset()),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata"}), frozenset({"-t"})),
    "command": (frozenset(), frozenset({"-p"})),
    "builtin": (frozenset(), frozenset()),
    "exec": (frozenset({"-a"}), frozenset({"-c", "-l"})),
    "time": (frozenset(), frozenset({"-p"})),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), frozenset()),
    "setsid": (frozenset(), frozenset({"-f", "--fork", "-w", "--wait"})),
    "xargs": (
        frozenset({"-n", "--max-args", "-P", "--max-procs", "-L", "--max-lines", "-d",
                   "--delimiter", "-s", "--max-chars", "-E", "-I", "--replace"}),
        frozenset({"-0", "--null", "-r", "--no-run-if-empty", "-t", "--verbose", "-x"}),
    ),
    "sudo": (frozenset({"-u", "--user", "-g", "--group"}), frozenset({"-n", "--non-interactive"})),
    "doas": (frozenset({"-u"}), frozenset({"-n"})),
    "chrt": (
        frozenset({"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"}),
        frozenset({"-b", "--batch", "-d", "--deadline", "-f", "--fifo", "-i", "--idle", "-o",
                   "--other", "-r", "--rr", "-R", "--reset-on-fork", "-a", "--all-tasks"}),
    ),
    "taskset": (frozenset(), frozenset({"-c", "--cpu-list", "-a", "--all-tasks"})),
    "unbuffer": (frozenset(), frozenset()),
    "chronic": (frozenset(), frozenset()),
    "setpriv": (
        frozenset({"--reuid", "--regid", "--ruid", "--euid", "--rgid", "--egid", "--groups",
                   "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits",
                   "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access",
                   "--landlock-rule"}),
        frozenset({"--clear-groups", "--keep-groups", "--init-groups", "--nnp",
                   "--no-new-privs", "--reset-env"}),
    ),
    "prlimit": (
        frozenset(),
        frozenset({"--noheadings", "--raw", "--verbose"}),
    ),
    "runcon": (
        frozenset({"-u", "--user", "-r", "--role", "-t", "--type", "-l", "--range"}),
        frozenset({"-c", "--compute"}),
    ),
    "chpst": (
        frozenset({"-u", "-U", "-b", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c"}),
        frozenset({"-v", "-P", "-0", "-1", "-2"}),
    ),
    "firejail": (
        frozenset(),
        frozenset({"--quiet", "--noprofile", "--private", "--net=none", "--nosound",
                   "--no3d", "--nodvd", "--notv", "--novideo", "--nogroups", "--nonewprivs",
                   "--noroot", "--seccomp", "--private-tmp", "--private-dev"}),
    ),
    "numactl": (
        frozenset({"-i", "--interleave", "-m", "--membind", "-N", "--cpunodebind", "-C",
                   "--physcpubind", "-p", "--preferred", "-P", "--preferred-many", "-w",
                   "--weighted-interleave"}),
        frozenset({"-l", "--localalloc", "-a", "--all", "-b", "--balancing"}),
    ),
    "cgexec": (frozenset({"-g"}), frozenset({"--sticky"})),
    "ld.so": (
        frozenset({"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
                   "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask"}),
        frozenset({"--inhibit-cache"}),
    ),
}  # fmt: skip
# Wrappers whose first positional word is a value (duration, priority, mask, context, group),
# not the command.
WRAPPER_POSITIONAL = frozenset({"timeout", "chrt", "taskset", "runcon"})
# prlimit's resource options take their value only when it is attached (`--nofile=1024`,
# `-n1024`): alone they print the limit, and the next word is not theirs.
_PRLIMIT_RESOURCES = frozenset("cdefilmnqrstuvxy")
# The dynamic loader runs the program it is given (`/lib64/ld-linux-x86-64.so.2 ./x`).
_LOADER = re.compile(r"ld(-linux[-\w.]*|-musl-[\w.]*|64|-[0-9.]+)?\.so(\.[0-9]+)*")
# Options whose value is a command line (run by a shell) or names a program, by program:
# (command-line options, program options). A short option listed here takes the next word or
# its attached value; a long one takes `=VALUE` or the next word.
COMMAND_OPTIONS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "split": (frozenset({"--filter"}), frozenset()),
    "rsync": (frozenset({"-e", "--rsh", "--rsync-path"}), frozenset()),
    "zip": (frozenset({"-TT", "--unzip-command"}), frozenset()),
    "man": (frozenset({"-P", "--pager", "-H", "--html"}), frozenset()),
    "sort": (frozenset(), frozenset({"--compress-program"})),
    "tar": (
        frozenset({"-I", "--use-compress-program", "--to-command", "--info-script", "-F",
                   "--new-volume-script", "--rsh-command", "--rmt-command"}),
        frozenset(),
    ),
    "gdb": (frozenset(), frozenset()),
}  # fmt: skip
COMMAND_OPTIONS["gtar"] = COMMAND_OPTIONS["bsdtar"] = COMMAND_OPTIONS["tar"]
# Variables whose value is a command line some program runs (a pager, an editor, ssh).
COMMAND_VARIABLES = frozenset(
    {
        "PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
        "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF", "LESSOPEN",
        "LESSCLOSE", "BROWSER", "PROMPT_COMMAND", "RSYNC_RSH", "SUDO_ASKPASS", "SSH_ASKPASS",
        "GIT_ASKPASS", "TAR_OPTIONS",
    }
)  # fmt: skip
# git options whose value is a program git runs through a shell, and the subcommands where the
# short `-u` is one of them (elsewhere it means "update" or "set upstream").
GIT_PROGRAM_OPTIONS = frozenset({"--upload-pack", "--receive-pack", "--exec"})
GIT_SHORT_UPLOAD_PACK = frozenset({"clone", "ls-remote"})
# git subcommands that only read; a few read only with some first arguments.
GIT_READS = frozenset(
    {
        "status", "log", "diff", "show", "blame", "grep", "ls-files", "ls-tree", "rev-parse",
        "rev-list", "describe", "shortlog", "cat-file", "whatchanged", "version", "merge-base",
        "name-rev", "for-each-ref", "show-ref", "check-ignore", "count-objects", "check-attr",
        "ls-remote", "var", "cherry", "range-diff",
    }
)  # fmt: skip
GIT_READ_FIRST_ARGS: dict[str, frozenset[str]] = {
    "stash": frozenset({"list", "show"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "tag": frozenset({"-l", "--list"}),
    "reflog": frozenset({"show"}),
    "worktree": frozenset({"list"}),
    "notes": frozenset({"list", "show"}),
    "submodule": frozenset({"status"}),
}
GIT_RUNS_PROGRAMS = ("-O", "--open-files-in-pager", "--ext-diff", "--textconv")
WRITE_REDIRECTS = (">", ">>", ">|", "&>", "&>>", "<>", ">&")
# Programs that only read their operands (unless an option below says otherwise).
READERS = frozenset(
    {
        "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ack", "wc",
        "diff", "cmp", "ls", "stat", "file", "jq", "yq", "md5sum", "sha1sum", "sha256sum",
        "sha512sum", "du", "tree", "nl", "od", "xxd", "hexdump", "strings", "cut", "comm", "join",
        "paste", "fold", "fmt", "basename", "dirname", "realpath", "readlink", "test", "[",
        "echo", "pwd", "true", "false", "column", "zcat", "bat", "which", "type", "whereis",
        "printenv", "date", "sleep", "expr", "seq", "yes", "id", "whoami", "uname", "locale",
    }
)  # fmt: skip
WRITERS_ALL = frozenset(
    {
        "touch", "rm", "rmdir", "mkdir", "truncate", "chmod", "chown", "chgrp", "shred", "unlink",
        "mkfifo", "mknod", "setfacl", "chattr", "tee", "sponge", "link", "gzip", "gunzip",
        "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd",
    }
)  # fmt: skip
WRITERS_LAST = frozenset({"cp", "install", "rsync", "scp"})
TREE_WRITERS = frozenset({"rm", "rmdir", "chmod", "chown", "chgrp", "shred", "setfacl", "chattr"})
MAX_DEPTH = 8


@dataclass
class ShellFinding:
    reaches_sdd: list[str] = field(default_factory=list)  # why, for each route found
    # (cwd, path, whole tree, soft): a path written. Whole tree: everything under it may go.
    # Soft: when the path only *holds* protected folders, the command stops rather than fails.
    writes: list[tuple[str, str, bool, bool]] = field(default_factory=list)
    touches: list[tuple[str, str]] = field(default_factory=list)  # operands of unknown programs
    git_writes: list[str] = field(default_factory=list)  # git subcommands that change the repo
    uncertain: list[str] = field(default_factory=list)  # why it cannot be classified
    cwds: set[str] = field(default_factory=lambda: {"."})  # every folder a `cd` reached
    # Why it runs code, in plain words: such a command is never allowed by a saved rule unless
    # a sandbox holds it, since what it does is decided by files a role can write.
    runs_code: list[str] = field(default_factory=list)
    programs: list[str] = field(default_factory=list)  # every command name run, as written
    # (cwd, path, destination, moved): a path copied, moved or linked *from*, and where to (None:
    # not a fixed word). A role or skill file there (or in a folder copied whole) makes a new
    # one where it lands, under a name no check of the destination can see.
    sources: list[tuple[str, str, str | None, bool]] = field(default_factory=list)
    # Files this command line writes with text it shows (`printf '...' > x.sh`), by path from
    # the product folder: a later command of the same line that runs one runs that text.
    scripts: dict[str, str | None] = field(default_factory=dict)

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


def _join_continuations(source: str) -> str:
    """Bash joins `\\` + newline before it splits words; tree-sitter splits there instead. Join
    them first, except inside single quotes, where the backslash is literal."""
    out: list[str] = []
    quoted = False
    index = 0
    while index < len(source):
        char = source[index]
        if char == "'" and not quoted and (index == 0 or source[index - 1] != "\\"):
            quoted = True
        elif char == "'" and quoted:
            quoted = False
        elif char == "\\" and not quoted and index + 1 < len(source):
            if source[index + 1] == "\n":
                index += 2
                continue
            out.append(source[index : index + 2])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _classify(source: str, finding: ShellFinding, cwd: str, depth: int) -> None:
    if depth > MAX_DEPTH:
        finding.uncertain.append("commands nested too deep to follow")
        return
    tree = _parser().parse(_join_continuations(source).encode("utf-8"))
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
        _redirect(node, finding, cwd[-1])
    elif kind == "herestring_redirect":
        pass
    elif kind == "pipeline":
        _pipeline_into_interpreter(node, finding)
    elif kind in ("raw_string", "string_content") and _looks_like_code(node.text):
        finding.uncertain.append("a string holds a command substitution that could be evaluated")
    elif kind in ("subshell", "command_substitution", "process_substitution"):
        cwd.append(cwd[-1])  # a `cd` inside stays inside
        for child in node.children:
            _walk(child, finding, cwd, depth)
        cwd.pop()
        return
    for child in node.children:
        _walk(child, finding, cwd, depth)


def _looks_like_code(raw: bytes) -> bool:
    return b"$(" in raw or b"`" in raw


def _assignment(node: Any, finding: ShellFinding) -> None:
    name_node = node.child_by_field_name("name")
    name = name_node.text.decode("utf-8", "replace") if name_node is not None else ""
    name = name.split("[", 1)[0]
    if name in DANGEROUS_ENV or name.startswith(DANGEROUS_ENV_PREFIXES):
        finding.uncertain.append(f"it sets {name}, which changes what later commands run")
    value = node.child_by_field_name("value")
    _command_variable(name, _text(value) if value is not None else None, finding)


def _command_variable(name: str, value: str | None, finding: ShellFinding) -> None:
    """`MANPAGER='sdd next' man ls`, `LESSOPEN='|sdd next %s'`: the value is a command line a
    program runs later. It stays uncertain (above); one that reaches sdd is refused."""
    if name not in COMMAND_VARIABLES or not value:
        return
    probe = ShellFinding()
    _classify(value.lstrip("|-").replace("%s", "x"), probe, ".", 1)
    for reason in probe.reaches_sdd:
        finding.reaches_sdd.append(f"{name} holds a command that runs sdd: {reason}")


def _pipeline_into_interpreter(node: Any, finding: ShellFinding) -> None:
    commands = [c for c in node.named_children if c.type == "command"]
    for later in commands[1:]:
        words = _words(later)
        name = _base(words[0]) if words and words[0] is not None else None
        if name is None:
            continue
        if name in SHELLS and not _shell_has_script(words[1:]):
            finding.uncertain.append(f"text is piped into {name}")
        elif _is_python(name) and not any(w in ("-c", "-m") for w in words[1:] if w):
            positional = [w for w in words[1:] if w is None or not w.startswith("-")]
            if not positional or positional[0] in (None, "-"):
                finding.uncertain.append(f"text is piped into {name}")


def _text(node: Any) -> str | None:
    """The literal value of a word-like node, or None when it is not fully static."""
    kind = node.type
    raw: str = node.text.decode("utf-8", "replace")
    if kind in ("word", "number"):
        return _static_word(raw)
    if kind == "raw_string":
        return raw[1:-1]
    if kind == "string":
        parts = []
        for child in node.named_children:
            if child.type == "string_content":
                parts.append(_unescape_double(child.text.decode("utf-8", "replace")))
            else:
                return None  # an expansion inside the quotes
        return "".join(parts)
    if kind == "concatenation":
        bare = "".join(
            c.text.decode("utf-8", "replace") for c in node.named_children if c.type == "word"
        )
        if "{" in bare and "}" in bare and ("," in bare or ".." in bare):
            return None  # brace expansion: bash makes several words of it
        pieces = [_text(child) for child in node.named_children]
        if any(p is None for p in pieces):
            return None
        return "".join(p for p in pieces if p is not None)
    if kind == "command_name":
        inner = node.named_children
        return _text(inner[0]) if inner else None
    return None  # expansions, $'...' strings, arithmetic, brace expressions...


def _static_word(raw: str) -> str | None:
    """An unquoted word: None when bash would expand it (glob, brace, tilde)."""
    if raw.startswith("~"):
        return None
    out: list[str] = []
    index = 0
    while index < len(raw):
        char = raw[index]
        if char == "\\":
            if index + 1 < len(raw):
                if raw[index + 1] != "\n":  # backslash-newline is a line continuation
                    out.append(raw[index + 1])
                index += 2
                continue
            index += 1
            continue
        if char in "*?[":
            return None
        if char == "{" and ("," in raw[index:] or ".." in raw[index:]) and "}" in raw[index:]:
            return None
        out.append(char)
        index += 1
    return "".join(out)


def _unescape_double(text: str) -> str:
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] == "\n":
            index += 2  # a line continuation, inside double quotes too
            continue
        if char == "\\" and index + 1 < len(text) and text[index + 1] in '$`"\\':
            out.append(text[index + 1])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _words(command: Any, home: bool = False) -> list[str | None]:
    """The command's words; with `home`, `~` and `~/...` read as the person's home folder."""
    words: list[str | None] = []
    name = command.child_by_field_name("name")
    if name is not None:
        words.append(_text(name))
    for argument in command.children_by_field_name("argument"):
        words.append((_home_path(argument) if home else None) or _text(argument))
    return words


def _home_path(node: Any) -> str | None:
    """`~` or `~/static/rest` as the absolute path bash would make of it, else None."""
    raw: str = node.text.decode("utf-8", "replace")
    if node.type != "word" or not (raw == "~" or raw.startswith("~/")):
        return None
    rest = _static_word(raw[1:])
    return None if rest is None else posixpath.expanduser("~") + rest


def _base(word: str) -> str:
    return posixpath.basename(word)


def _command(node: Any, finding: ShellFinding, cwd: list[str], depth: int) -> None:
    for child in node.children:  # substitutions inside the words run as commands of their own
        _walk(child, finding, cwd, depth)
    if node.child_by_field_name("name") is None:
        return  # only assignments
    words = _words(node)
    before = list(cwd)
    _note_script(node, words, finding, cwd[-1])
    _argv(words, finding, cwd, depth, _heredoc_body(node))
    expanded = _words(node, home=True)
    if expanded != words:
        # `~/x` is not a fixed word (the sandbox gives the command its own HOME), so the pass
        # above found it uncertain; seen as the person's home it may also write her rules, which
        # is refused outright. Only the writes of this second look are kept.
        probe = ShellFinding()
        _argv(expanded, probe, before, depth, _heredoc_body(node))
        finding.writes.extend(w for w in probe.writes if w not in finding.writes)
        finding.sources.extend(s for s in probe.sources if s not in finding.sources)


def _note_script(node: Any, words: list[str | None], finding: ShellFinding, cwd: str) -> None:
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
        target = _text(destination) if destination is not None else None
        if operator not in (">", ">>", ">|") or target is None:
            continue
        path = posixpath.normpath(posixpath.join(cwd, target))
        text = _printed_text(words)
        previous = finding.scripts.get(path, "") if operator == ">>" else ""
        finding.scripts[path] = None if text is None or previous is None else previous + text


def _printed_text(words: list[str | None]) -> str | None:
    """What `printf FORMAT` or `echo [-ne] WORDS` prints, when the words say it plainly."""
    if not words or any(w is None for w in words):
        return None
    head, *args = [w for w in words if w is not None]
    name = _base(head)
    if name == "printf" and len(args) == 1 and "%" not in args[0].replace("%%", ""):
        return _backslash_escapes(args[0].replace("%%", "%"))
    if name == "echo":
        escapes = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args) + "\n"
        return _backslash_escapes(text) if escapes else text
    return None


def _backslash_escapes(text: str) -> str:
    table = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "'": "'", '"': '"'}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), m.group(0)), text, flags=re.S)


def _run_written_script(head: str, finding: ShellFinding, cwd: str, depth: int) -> None:
    """A program this same line wrote runs the text it was written with."""
    path = posixpath.normpath(posixpath.join(cwd, head))
    if path not in finding.scripts:
        return
    text = finding.scripts[path]
    if text is None:
        finding.uncertain.append(f"{head} was written by this command with text sdd cannot read")
        return
    _classify(text, finding, cwd, depth + 1)


def _heredoc_body(node: Any) -> str | None:
    """The text a here-document or here-string feeds to the command, or None."""
    parent = node.parent
    redirects = [c for c in node.children if c.type.endswith("_redirect")]
    if parent is not None and parent.type == "redirected_statement":
        redirects += parent.children_by_field_name("redirect")
    for redirect in redirects:
        if redirect.type == "heredoc_redirect":
            body = next((c for c in redirect.named_children if c.type == "heredoc_body"), None)
            if body is None:
                return ""
            if any(c.type != "heredoc_content" for c in body.named_children):
                return None
            return str(body.text.decode("utf-8", "replace"))
        if redirect.type == "herestring_redirect":
            value = next(iter(redirect.named_children), None)
            return _text(value) if value is not None else None
    return None


def _argv(
    words: list[str | None],
    finding: ShellFinding,
    cwd: list[str],
    depth: int,
    stdin_script: str | None = None,
) -> None:
    if not words:
        return
    head = words[0]
    if head is None:
        finding.uncertain.append("the command name is not a fixed word")
        return
    name = _base(head)
    args = words[1:]
    finding.programs.append(head)
    finding.runs_code.extend(r for r in runs_code(head, args) if r not in finding.runs_code)
    _run_written_script(head, finding, cwd[-1], depth)
    if name in COMMAND_OPTIONS:
        _command_options(name, args, finding, cwd, depth)
    if name in CODE_STRING_PROGRAMS or _is_python(name) or _VERSIONED_CODE.fullmatch(name):
        _code_strings(name, args, finding, cwd, depth)
    if _is_sdd(name):
        finding.reaches_sdd.append(f"it runs {head}")
    elif name == "busybox":
        _busybox(args, finding, cwd, depth, stdin_script)
    elif name in UNCERTAIN_COMMANDS:
        finding.uncertain.append(f"`{name}` runs or rewrites commands that cannot be checked")
        _probe(name, args, finding, cwd, depth)
    elif _LOADER.fullmatch(name):
        inner = _unwrap("ld.so", args, finding, cwd, depth)
        if inner is not None:
            _argv(inner, finding, cwd, depth)
    elif name in ("printf", "read") and any(a is None or "[" in a for a in args):
        finding.uncertain.append(f"`{name}` may assign to an array subscript, which evaluates it")
    elif name == "command" and any(a in ("-v", "-V") for a in args):
        pass  # only looks the name up
    elif _is_python(name):
        _python(args, finding)
    elif name in SHELLS:
        _shell(name, args, finding, cwd, depth, stdin_script)
    elif name == "watch":
        _watch(args, finding, cwd, depth)
    elif name == "sg":
        _sg(args, finding, cwd, depth)
    elif name == "capsh":
        _capsh(args, finding, cwd, depth, stdin_script)
    elif name in WRAPPERS or name in ("flock", "script", "strace", "ltrace"):
        inner = _unwrap(name, args, finding, cwd, depth)
        if inner is not None:
            _argv(inner, finding, cwd, depth)
    elif name == "find":
        _find(args, finding, cwd, depth)
    elif name in ("cd", "pushd"):
        _cd(name, args, finding, cwd)
    elif name == "git" or name.startswith("git-"):
        _git([name[4:], *args] if name.startswith("git-") else args, finding, cwd[-1], depth)
    elif name == "sed":
        _sed(args, finding, cwd[-1], depth)
    elif name == "perl" and any(_short_flag(a, "i") for a in args):
        _perl_in_place(args, finding, cwd[-1])
    elif name in ("ln", "cp", "mv") or name in WRITERS_ALL or name in WRITERS_LAST:
        _writer(name, args, finding, cwd[-1])
    elif name == "sort":
        _sort(args, finding, cwd[-1])
    elif name == "dd":
        for arg in args:
            if arg is None:
                finding.uncertain.append("dd gets an operand that is not a fixed word")
            elif arg.startswith("of="):
                finding.writes.append((cwd[-1], arg[3:], False, False))
    elif name not in READERS or any(a is not None and a.startswith("-o") for a in args):
        _touches(args, finding, cwd[-1])


def _is_sdd(name: str) -> bool:
    return name == "sdd" or name.startswith("sdd-")


def _probe(
    name: str, args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int
) -> None:
    """A command whose options sdd does not know (it is uncertain already) may still name sdd:
    every word is tried as the command it could run, and every word with a space as a command
    line, and whatever reaches sdd or runs code is kept. It errs towards refusing."""
    probe = ShellFinding()
    for index, arg in enumerate(args):
        if arg is None or (arg.startswith("-") and "=" not in arg):
            continue
        value = arg.split("=", 1)[1] if arg.startswith("-") else arg
        if any(c.isspace() for c in value):
            _classify(value, probe, cwd[-1], depth + 1)
        elif not arg.startswith("-"):
            _argv(args[index:], probe, list(cwd), depth + 1)
    for reason in probe.reaches_sdd:
        finding.reaches_sdd.append(f"{name} may run it: {reason}")
    finding.runs_code.extend(r for r in probe.runs_code if r not in finding.runs_code)


def _matching_option(arg: str, options: frozenset[str]) -> tuple[str, str | None] | None:
    """(option, attached value or None) when ARG is one of OPTIONS: `--opt`, `--opt=VALUE`,
    `-X`, `-XVALUE`, or a cluster of flags `-avX` / `-avXVALUE` (the first flag that takes a
    value takes the rest of the cluster)."""
    for option in options:
        if arg == option:
            return option, None
        if option.startswith("--"):
            if arg.startswith(option + "="):
                return option, arg[len(option) + 1 :]
            continue
        if len(option) != 2 or arg.startswith("--"):
            continue
        letters = arg[1:]
        position = letters.find(option[1])
        if position == 0 or (position > 0 and letters[:position].isalpha()):
            return option, letters[position + 1 :] or None
    return None


def _command_options(
    name: str, args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int
) -> None:
    """split --filter, rsync -e, zip -TT, man -P, tar -I: a value run by a shell is classified
    as shell in turn; sort --compress-program names a program, classified as a command name."""
    lines, programs = COMMAND_OPTIONS[name]
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None or not arg.startswith("-"):
            index += 1
            continue
        if name in TARS and arg.startswith("--checkpoint-action="):
            action = arg.split("=", 1)[1]
            if action.startswith("exec="):
                _classify(action[5:], finding, cwd[-1], depth + 1)
        line = _matching_option(arg, lines)
        program = _matching_option(arg, programs)
        match = line or program
        if match is None:
            index += 1
            continue
        value = match[1]
        if value is None:
            value = args[index + 1] if index + 1 < len(args) else None
            index += 1
        index += 1
        if value is None:
            finding.uncertain.append(f"{name} {arg} runs a command that is not a fixed word")
        elif line is not None:
            _classify(value, finding, cwd[-1], depth + 1)
        else:
            _argv([value], finding, cwd, depth + 1)


# Programs whose code may be given on the command line; string literals handed to a call that
# runs a shell command in it are read as shell (`awk 'BEGIN{system("sdd next")}'`). Only the
# first argument, as a string: a list (`subprocess.run(['sdd'])`) is code this does not read, and
# the sink and the sandbox hold there.
CODE_STRING_PROGRAMS = AWKS | EDITORS | {
    "perl", "ruby", "node", "nodejs", "php", "bun", "deno", "gdb", "lldb", "lua", "tclsh",
}  # fmt: skip
# Those with a version in their name: perl5.36, ruby3.3, php8.2, lua5.4.
_VERSIONED_CODE = re.compile(r"(perl|ruby|php|lua|luajit|node|tclsh)[0-9.]*")
_LITERAL = r"""(?P<q>["'`])(?P<body>(?:\\.|(?!(?P=q)).)*)(?P=q)"""
_SHELL_CALL = re.compile(
    r"(?:\b(?:system|exec\w*|popen\w*|spawn\w*|call|run|check_output|check_call|Popen|"
    r"getoutput|getstatusoutput|shell_exec|passthru|proc_open|qx|open\w*|pipe)\s*[(\s]\s*"
    r"|\|\s*|\bqx\s*)" + _LITERAL
)
_PIPED_LITERAL = re.compile(_LITERAL + r"\s*\|")
_BACKTICKS = re.compile(r"`([^`]*)`")


def _code_strings(
    name: str, args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int
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
        for match in _SHELL_CALL.finditer(arg):
            texts.append(match.group("body"))
        for match in _PIPED_LITERAL.finditer(arg):
            texts.append(match.group("body"))
        if name not in AWKS and not name.startswith(("python", "pypy")):
            texts.extend(m.group(1) for m in _BACKTICKS.finditer(arg))
    probe = ShellFinding()
    for text in texts:
        _classify(re.sub(r"\\(.)", r"\1", text).strip("|- "), probe, cwd[-1], depth + 1)
    for reason in probe.reaches_sdd:
        finding.reaches_sdd.append(f"{name} hands a shell command to run: {reason}")


def _sort(args: list[str | None], finding: ShellFinding, cwd: str) -> None:
    """`sort -o FILE` writes FILE; its other operands are only read."""
    index = 0
    operands: list[str | None] = []
    while index < len(args):
        arg = args[index]
        match = (
            _matching_option(arg, frozenset({"-o", "--output", "-T", "--temporary-directory"}))
            if arg
            else None
        )
        if match is not None:
            value = match[1]
            if value is None:
                value = args[index + 1] if index + 1 < len(args) else None
                index += 1
            if value is None:
                finding.uncertain.append("sort writes to a path that is not a fixed word")
            elif match[0] in ("-o", "--output"):
                finding.writes.append((cwd, value, False, False))
            index += 1
            continue
        if arg is None or not arg.startswith("-") or arg == "-":
            operands.append(arg)
        index += 1
    _touches(operands, finding, cwd)


def _busybox(
    args: list[str | None],
    finding: ShellFinding,
    cwd: list[str],
    depth: int,
    stdin_script: str | None,
) -> None:
    """`busybox APPLET ARGS...` runs the applet: it stays uncertain (busybox's applets are not
    the programs the tables know), and the applet is classified too, so that it is refused or
    counted as running code as the program of that name would be."""
    finding.uncertain.append("busybox runs an applet whose options sdd does not know")
    if not args or args[0] in ("--list", "--help"):
        return
    if args[0] is None or args[0].startswith("-"):
        finding.uncertain.append("busybox gets an option sdd does not know how to follow")
        return
    _argv(args, finding, cwd, depth, stdin_script)


def _watch(args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int) -> None:
    """`watch [-n N] [-d] [-t] CMD...` runs `sh -c "CMD..."` again and again."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-n", "--interval"):
            index += 2
        elif arg in ("-x", "--exec"):
            _argv(args[index + 1 :], finding, cwd, depth)  # run directly, not through sh -c
            return
        elif arg in ("-d", "--differences", "-t", "--no-title", "-b", "--beep", "-e", "-g",
                     "--errexit", "--chgexit", "-c", "--color", "-C", "--no-color", "-p",
                     "--precise", "-r", "--no-rerun", "-w", "--no-wrap"):  # fmt: skip
            index += 1
        elif arg is not None and arg.startswith("-"):
            finding.uncertain.append(f"watch {arg}: an option sdd does not know how to follow")
            _probe("watch", args[index:], finding, cwd, depth)
            return
        else:
            break
    rest = args[index:]
    if not rest or any(w is None for w in rest):
        finding.uncertain.append("watch runs text that is not a fixed string")
        return
    _classify(" ".join(w for w in rest if w is not None), finding, cwd[-1], depth + 1)


def _sg(args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int) -> None:
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
        _probe("sg", rest, finding, cwd, depth)
        return
    _classify(" ".join(w for w in rest if w is not None), finding, cwd[-1], depth + 1)


def _capsh(
    args: list[str | None],
    finding: ShellFinding,
    cwd: list[str],
    depth: int,
    stdin_script: str | None,
) -> None:
    """`capsh [--OPTION[=VALUE]]... [-- ARGS | == ARGS]`: after `--` ARGS go to its shell
    (bash unless --shell= names another); after `==` capsh runs again with them."""
    shell = "bash"
    for index, arg in enumerate(args):
        if arg is None:
            finding.uncertain.append("capsh gets an argument that is not a fixed word")
            _probe("capsh", args[index:], finding, cwd, depth)
            return
        if arg == "--":
            _argv([shell, *args[index + 1 :]], finding, cwd, depth, stdin_script)
            return
        if arg == "==":
            _capsh(args[index + 1 :], finding, cwd, depth, stdin_script)
            return
        if arg.startswith("--shell="):
            shell = arg.split("=", 1)[1]
        elif not arg.startswith("--"):
            finding.uncertain.append(f"capsh {arg}: an option sdd does not know how to follow")
            _probe("capsh", args[index:], finding, cwd, depth)
            return


def _is_python(name: str) -> bool:
    return re.fullmatch(r"(python|pypy)[0-9.]*", name) is not None


def _python(args: list[str | None], finding: ShellFinding) -> None:
    """`python -m MODULE`, clusters like `-Im`, and launchers that run another module."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append("python gets an argument that is not a fixed word")
            return
        if arg == "-" or not arg.startswith("-"):
            return  # a script file (or stdin): the sink and the sandbox hold there
        if arg in ("-c",):
            return  # code on the command line: the sink and the sandbox hold there
        flags = arg[1:] if not arg.startswith("--") else ""
        if "m" in flags:
            module = flags.split("m", 1)[1] or (args[index + 1] if index + 1 < len(args) else "")
            if module is None or not module:
                finding.uncertain.append("python -m names a module that is not a fixed word")
            elif module.split(".")[0] == "sdd_git":
                finding.reaches_sdd.append("it runs python -m sdd_git")
            elif module.split(".")[0] in PYTHON_LAUNCHERS:
                finding.uncertain.append(f"python -m {module} runs another module or script")
            return
        if "c" in flags:
            return
        if arg in ("-W", "-X", "-Q") or flags in ("W", "X"):
            index += 2
            continue
        index += 1


def _shell_has_script(args: list[str | None]) -> bool:
    return any(
        a is not None and a.startswith("-") and not a.startswith("--") and "c" in a[1:]
        for a in args
    )


def _shell(
    name: str,
    args: list[str | None],
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
        _classify(rest[0], finding, cwd[-1], depth + 1)
        return
    if rest and rest[0] not in (None, "-"):
        _run_written_script(rest[0], finding, cwd[-1], depth)
        finding.uncertain.append(f"{name} runs the script {rest[0]}, which is not checked")
        finding.runs_code.append(f"{name} runs the script {rest[0]}")
        return
    if stdin_script is not None:
        _classify(stdin_script, finding, cwd[-1], depth + 1)
        return
    finding.uncertain.append(f"{name} reads commands from its input")
    finding.runs_code.append(f"{name} runs commands from its input")


def _unwrap(
    name: str, args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int
) -> list[str | None] | None:
    """The command a wrapper runs, or None when it runs none we can name."""
    if name in ("flock", "script", "strace", "ltrace"):
        return _file_wrapper(name, args, finding, cwd, depth)
    with_value, plain = WRAPPERS[name]
    index = 0
    positional_value = name in WRAPPER_POSITIONAL
    split: list[str | None] = []  # env -S: words split from one string, run first
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append(f"{name} gets an argument that is not a fixed word")
            _probe(name, args[index:], finding, cwd, depth)
            return None
        if name == "env" and "=" in arg and not arg.startswith("-"):
            key, value = arg.split("=", 1)
            if key in DANGEROUS_ENV or key.startswith(DANGEROUS_ENV_PREFIXES):
                finding.uncertain.append(f"it sets {key}, which changes what later commands run")
            _command_variable(key, value, finding)
            index += 1
            continue
        if arg == "--":
            index += 1
            break
        if name == "env" and (match := _matching_option(arg, _ENV_SPLIT)) is not None:
            text = match[1] if match[1] is not None else _at(args, index + 1)
            index += 1 if match[1] is not None else 2
            try:
                split = list(shlex.split(text)) if text is not None else [None]
            except ValueError:
                split = [None]
            break
        if name == "prlimit" and _prlimit_resource(arg):
            index += 1
            continue
        if arg.startswith("-") and arg != "-":
            option = arg.split("=", 1)[0]
            if option in with_value:
                if name == "runcon":
                    positional_value = False  # a part of the context, not the whole
                _consumed(name, _at(args, index + 1) if "=" not in arg else None, finding)
                index += 1 if "=" in arg else 2
                continue
            if not arg.startswith("--") and arg[:2] in with_value:
                index += 1  # a short option with its value attached: -o0, -n10
                continue
            if option in plain or arg in plain:
                index += 1
                continue
            finding.uncertain.append(f"{name} {arg}: an option sdd does not know how to follow")
            _probe(name, args[index:], finding, cwd, depth)
            return None
        if positional_value:
            positional_value = False
            _consumed(name, arg, finding)
            index += 1
            continue
        break
    rest = [*split, *args[index:]]
    if name == "env" and split and split[0] is None:
        finding.uncertain.append("env -S splits text sdd cannot read into a command")
        _probe(name, args, finding, cwd, depth)
        return None
    if name == "ld.so":
        finding.runs_code.append("the dynamic loader runs the program it is given")
    if not rest:
        if name in ("env", "xargs"):
            finding.uncertain.append(f"{name} runs a command named by its input")
        return None
    if name == "xargs":
        inner = rest[0]
        if inner is not None and (_base(inner) == "sdd" or _base(inner).startswith("sdd-")):
            return rest  # reaches sdd: refused outright, not merely uncertain
        if (
            inner is None
            or "{}" in (w or "" for w in rest)
            or _base(inner)
            in (
                *SHELLS,
                *WRAPPERS,
                "find",
            )
            or _base(inner) in WRITERS_ALL | WRITERS_LAST | {"mv", "ln", "sed", "perl", "dd"}
        ):
            finding.uncertain.append("xargs hands its input to a command that runs or writes it")
            _probe(name, rest, finding, cwd, depth)
            if inner is None or _base(inner) in SHELLS:
                finding.runs_code.append("xargs runs commands made of its input")
            else:
                finding.runs_code.extend(runs_code(inner, rest[1:]))
            return None
        _handed_words(inner, rest[1:], finding)
    return rest


_ENV_SPLIT = frozenset({"-S", "--split-string"})


def _at(args: list[str | None], index: int) -> str | None:
    return args[index] if index < len(args) else None


def _prlimit_resource(arg: str) -> bool:
    """`--nofile=1024`, `-n1024`, `--cpu`, `-n`: a resource limit, whose value is attached."""
    if arg.startswith("--"):
        return re.fullmatch(r"--[a-z]+(=[0-9:a-z]*)?", arg) is not None and arg not in (
            "--pid", "--output", "--noheadings", "--raw", "--verbose",
        )  # fmt: skip
    return arg.startswith("-") and len(arg) > 1 and arg[1] in _PRLIMIT_RESOURCES


def _consumed(name: str, word: str | None, finding: ShellFinding) -> None:
    """A word a wrapper takes as an option's value is not its command: were sdd's name taken so
    (a table that is wrong about an option), it is refused all the same."""
    if word is not None and _is_sdd(_base(word)):
        finding.reaches_sdd.append(f"{name} is given {word}, which may be the command it runs")


def _handed_words(head: str, args: list[str | None], finding: ShellFinding) -> None:
    """xargs and `find -exec ... {}` add words the command line does not show: a tool that only
    prints its usage when given none (`unzip`, `npm`) runs with them."""
    if not runs_code(head, args):
        for reason in runs_code(head, [*args, "{}"]):
            if reason not in finding.runs_code:
                finding.runs_code.append(reason)


def _file_wrapper(
    name: str, args: list[str | None], finding: ShellFinding, cwd: list[str], depth: int
) -> list[str | None] | None:
    """flock LOCKFILE CMD / flock -c STRING, script [-c STRING] FILE, strace -o FILE CMD."""
    options_with_file = {"strace": ("-o",), "ltrace": ("-o",), "script": ()}.get(name, ())
    index = 0
    positional: list[str | None] = []
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append(f"{name} gets an argument that is not a fixed word")
            return None
        if name in ("flock", "script") and (arg == "--command" or _short_flag(arg, "c")):
            script = args[index + 1] if index + 1 < len(args) else None
            if script is None:
                finding.uncertain.append(f"{name} -c runs text that is not a fixed string")
                return None
            _classify(script, finding, cwd[-1], depth + 1)
            index += 2
            continue
        if arg in options_with_file:
            target = args[index + 1] if index + 1 < len(args) else None
            if target is None:
                finding.uncertain.append(f"{name} writes to a path that is not a fixed word")
            else:
                finding.writes.append((cwd[-1], target, False, False))
            index += 2
            continue
        if arg.startswith("-"):
            if name in ("strace", "ltrace"):
                finding.uncertain.append(f"{name} {arg}: an option sdd does not know how to follow")
                return None
            index += 1
            continue
        if name == "flock" and not positional:
            finding.writes.append((cwd[-1], arg, False, False))  # the lock file
            positional.append(arg)
            index += 1
            continue
        if name == "script":
            finding.writes.append((cwd[-1], arg, False, False))  # the typescript file
            index += 1
            continue
        return args[index:]
    return None


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
            inner = args[index + 1 : end]
            if not inner or inner[0] in (None, "{}"):
                finding.uncertain.append("find -exec runs a command named by what it finds")
                finding.runs_code.append("find runs the programs it finds")
            elif "{}" in inner[1:]:
                # What it finds becomes the operands: the start paths stand for them.
                probe = [inner[0], *("" if w == "{}" else w for w in inner[1:])]
                before = (len(finding.writes), len(finding.touches), len(finding.uncertain))
                _argv([w for w in probe if w != ""], finding, cwd, depth)
                if inner[0] is not None:
                    _handed_words(inner[0], [w for w in inner[1:] if w != "{}"], finding)
                if (len(finding.writes), len(finding.touches)) != before[:2] or _writes_operands(
                    inner
                ):
                    finding.writes.extend((cwd[-1], s, True, True) for s in starts)
            else:
                _argv(inner, finding, cwd, depth)
            index = end
        elif arg == "-delete":
            finding.writes.extend((cwd[-1], s, True, True) for s in starts)
        elif arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            target = args[index + 1] if index + 1 < len(args) else None
            if target is None:
                finding.uncertain.append("find writes to a path that is not a fixed word")
            else:
                finding.writes.append((cwd[-1], target, False, False))
        index += 1


def _writes_operands(inner: list[str | None]) -> bool:
    name = _base(inner[0] or "")
    return (
        name in WRITERS_ALL
        or name in ("mv", "ln", "dd")
        or (name in ("sed", "perl") and any(_short_flag(a, "i") for a in inner))
    )


def _cd(name: str, args: list[str | None], finding: ShellFinding, cwd: list[str]) -> None:
    operands = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            operands.extend(args[index + 1 :])
            break
        if arg is not None and arg.startswith("-") and arg not in ("-",):
            index += 1
            continue
        operands.append(arg)
        index += 1
    if not operands or operands[0] in (None, "-"):
        finding.uncertain.append(f"`{name}` to a folder that is not a fixed word")
        return
    target = operands[0]
    assert target is not None
    cwd[-1] = posixpath.normpath(posixpath.join(cwd[-1], target))
    finding.cwds.add(cwd[-1])


def _git(args: list[str | None], finding: ShellFinding, cwd: str, depth: int) -> None:
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append("git gets an argument that is not a fixed word")
            return
        if arg in ("-c", "--config-env", "--exec-path") or arg.startswith(
            ("--config-env=", "--exec-path=")
        ):
            finding.uncertain.append(f"git {arg} can make git run any program")
            setting = _at(args, index + 1) if arg == "-c" else None
            if setting is not None and "=" in setting:
                # core.sshCommand, core.pager, alias.x=!cmd, credential.helper=!cmd: a value
                # git may run through a shell.
                probe = ShellFinding()
                _classify(setting.split("=", 1)[1].lstrip("!"), probe, cwd, depth + 1)
                finding.reaches_sdd.extend(f"git -c {r}" for r in probe.reaches_sdd)
            return
        if arg in ("-C", "--git-dir", "--work-tree", "--namespace"):
            index += 2
            continue
        if arg.startswith("-"):
            index += 1
            continue
        sub = arg
        rest = args[index + 1 :]
        _git_programs(sub, rest, finding, cwd, depth)
        for word in rest:
            if word is None:
                continue
            if word.split("=", 1)[0] in GIT_RUNS_PROGRAMS:
                finding.uncertain.append(f"git {sub} {word} runs another program")
                return
            if word.startswith("--output"):
                target = word.split("=", 1)[1] if "=" in word else None
                if target is None:
                    finding.uncertain.append("git --output writes a file")
                else:
                    finding.writes.append((cwd, target, False, False))
        if not _git_reads(sub, rest):
            finding.git_writes.append(sub)
        return


def _git_programs(
    sub: str, rest: list[str | None], finding: ShellFinding, cwd: str, depth: int
) -> None:
    """`git ls-remote --upload-pack=CMD`, `git push --receive-pack CMD`, `git clone -u CMD`,
    `git archive --remote R --exec CMD`: git runs CMD through a shell, so it is shell too."""
    options = GIT_PROGRAM_OPTIONS | ({"-u"} if sub in GIT_SHORT_UPLOAD_PACK else set())
    for index, word in enumerate(rest):
        if word is None:
            continue
        match = _matching_option(word, frozenset(options))
        if match is None or (match[0] == "-u" and word != "-u" and not word.startswith("-u")):
            continue
        value = match[1] if match[1] is not None else _at(rest, index + 1)
        if value is None:
            finding.uncertain.append(f"git {sub} {word} runs a program that is not a fixed word")
        else:
            _classify(value, finding, cwd, depth + 1)


def _git_reads(sub: str, rest: list[str | None]) -> bool:
    if sub in GIT_READS:
        return True
    first = next((w for w in rest if w is not None), None)
    if sub in GIT_READ_FIRST_ARGS:
        if first is None:
            return sub in ("remote", "tag", "reflog", "notes", "submodule")  # `git stash` pushes
        return first in GIT_READ_FIRST_ARGS[sub]
    if sub == "branch":
        changing = {
            "-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy",
            "--force", "--set-upstream-to", "--unset-upstream", "--edit-description",
        }  # fmt: skip
        return all(w is not None and w.startswith("-") and w not in changing for w in rest)
    if sub == "config":
        operands = [w for w in rest if w is not None and not w.startswith("-")]
        reading = any(w in ("--get", "--get-all", "--get-regexp", "--list", "-l") for w in rest)
        return reading or len(operands) == 1
    return False


def _short_flag(arg: str | None, flag: str) -> bool:
    return arg is not None and arg.startswith("-") and not arg.startswith("--") and flag in arg[1:]


def _sed(args: list[str | None], finding: ShellFinding, cwd: str, depth: int) -> None:
    scripts: list[str | None] = []
    operands: list[str | None] = []
    in_place = False
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-e", "--expression", "-f", "--file"):
            scripts.append(args[index + 1] if index + 1 < len(args) else None)
            if arg in ("-f", "--file"):
                scripts[-1] = None  # a script file: not read here
            index += 2
            continue
        if arg is not None and (arg.startswith("--in-place") or _short_flag(arg, "i")):
            in_place = True
        elif arg is None or not arg.startswith("-"):
            operands.append(arg)
        index += 1
    if not scripts and operands:
        scripts.append(operands.pop(0))
    for script in scripts:
        if script is None or not _sed_script(script, finding, cwd, depth):
            finding.uncertain.append("the sed script writes files or runs commands")
            return
    if in_place:
        for arg in operands:
            if arg is None:
                finding.uncertain.append("sed -i edits a path that is not a fixed word")
            else:
                finding.writes.append((cwd, arg, False, False))
    else:
        _touches(operands, finding, cwd)


_SED_ADDRESS = re.compile(
    r"(?:[0-9]+(?:~[0-9]+)?|\$|/(?:\\.|[^/\\])*/[IM]*|\\(.)(?:\\.|(?!\1).)*\1[IM]*)"
    r"(?:\s*,\s*(?:[0-9]+|\$|[+~][0-9]+|/(?:\\.|[^/\\])*/[IM]*))?\s*!?\s*"
)
_SED_PLAIN = set("=dDgGhHnNpPxzFlLqQ")


def _sed_script(script: str, finding: ShellFinding, cwd: str, depth: int) -> bool:
    """Walks a sed script command by command, after any address (`1e`, `$e`, `/re/w f`,
    `0~2e`, `1,3w f`): `e COMMAND` is classified as shell, `w FILE` is a write, and `e` alone or
    `s///e` (the text as a command) makes it uncertain. False when it cannot be read."""
    index = 0
    size = len(script)

    def rest_of_line() -> str:
        nonlocal index
        end = script.find("\n", index)
        end = size if end < 0 else end
        text = script[index:end]
        index = end
        return text.strip()

    def written(path: str) -> None:
        if path not in ("/dev/stdout", "/dev/stderr"):
            finding.writes.append((cwd, path, False, False))

    while index < size:
        char = script[index]
        if char in " \t\n;}":
            index += 1
            continue
        if char == "#":
            rest_of_line()
            continue
        address = _SED_ADDRESS.match(script, index)
        if address is not None:
            index = address.end()
        if index >= size:
            return False
        command = script[index]
        index += 1
        if command == "{":
            continue
        if command in "aic":
            while True:  # text to the end of the line, and on while lines end in a backslash
                line = rest_of_line()
                if not line.endswith("\\") or index >= size:
                    break
                index += 1
        elif command in ":btTv":
            while index < size and script[index] not in ";\n}":
                index += 1
        elif command in "rR":
            rest_of_line()
        elif command in "wW":
            written(rest_of_line())
        elif command == "e":
            line = rest_of_line()
            if not line:
                finding.runs_code.append("sed e runs the text it edits as a command")
                return False
            _classify(line, finding, cwd, depth + 1)
        elif command in "sy":
            if index >= size or script[index] in "\n\\":
                return False
            delimiter = script[index]
            index += 1
            for _part in (1, 2):
                while index < size and script[index] != delimiter:
                    index += 2 if script[index] == "\\" else 1
                if index >= size:
                    return False
                index += 1
            if command == "s":
                while index < size and script[index] in "gpiImM0123456789e":
                    if script[index] == "e":
                        finding.runs_code.append("sed s///e runs the text it edits as a command")
                        return False
                    index += 1
                if index < size and script[index] == "w":
                    index += 1
                    written(rest_of_line())
        elif command in _SED_PLAIN:
            while index < size and script[index].isdigit():
                index += 1
        else:
            return False
    return True


def _perl_in_place(args: list[str | None], finding: ShellFinding, cwd: str) -> None:
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg is not None and arg.startswith("-") and arg[-1:] in ("e", "E"):
            skip_next = True  # the next word is the program
            continue
        if arg is None:
            finding.uncertain.append("perl -i edits a path that is not a fixed word")
        elif not arg.startswith("-"):
            finding.writes.append((cwd, arg, False, False))


def _writer(name: str, args: list[str | None], finding: ShellFinding, cwd: str) -> None:
    def written(path: str | None, whole_tree: bool = False) -> None:
        if path is None:
            finding.uncertain.append(f"{name} writes to a path that is not a fixed word")
        else:
            finding.writes.append((cwd, path, whole_tree, False))

    operands: list[str | None] = []
    target_dir = False
    destination: str | None = None  # the -t folder, when there is one
    hard_link = name == "link"
    index = 0
    while index < len(args):
        arg = args[index]
        if arg is None:
            operands.append(None)
        elif arg == "--":
            operands.extend(args[index + 1 :])
            break
        elif arg.startswith("--target-directory"):
            target_dir = True
            destination = (
                arg.split("=", 1)[1]
                if "=" in arg
                else (args[index + 1] if index + 1 < len(args) else None)
            )
            written(destination)
            index += 1 if "=" in arg else 2
            continue
        elif arg in ("--link", "--hard-link"):
            hard_link = True
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            flags = arg[1:]
            if "l" in flags and name == "cp":
                hard_link = True
            if "t" in flags and name in ("cp", "mv", "install", "ln"):
                target_dir = True
                value = flags.split("t", 1)[1] or (
                    args[index + 1] if index + 1 < len(args) else None
                )
                destination = value
                written(value)
                index += 1 if flags.split("t", 1)[1] else 2
                continue
        elif not arg.startswith("-"):
            operands.append(arg)
        index += 1
    if name == "ln":
        _link(operands, finding, cwd, target_dir)
        return
    if name in ("cp", "mv", "install", "rsync", "scp", "link"):
        if not target_dir:
            destination = operands[-1] if operands else None
        for arg in operands if target_dir else operands[:-1]:
            if arg is not None:
                finding.sources.append((cwd, arg, destination, name == "mv"))
    if hard_link or name == "mv" or name in WRITERS_ALL:
        for arg in operands:  # moved and hard-linked sources leave or share the record
            written(arg, name in TREE_WRITERS)
    elif not target_dir:
        written(operands[-1] if operands else None)


def _link(operands: list[str | None], finding: ShellFinding, cwd: str, target_dir: bool) -> None:
    """`ln [-s] TARGET LINK`: the link is written, and the target must not be the record: a
    link into it made now would be written through later in the same command."""
    if not operands or any(o is None for o in operands):
        finding.uncertain.append("ln gets an operand that is not a fixed word")
        return
    names = [o for o in operands if o is not None]
    link = names[-1] if len(names) > 1 and not target_dir else "."
    targets = names[:-1] if len(names) > 1 and not target_dir else names
    finding.writes.append((cwd, link, False, False))
    link_dir = posixpath.dirname(posixpath.join(cwd, link)) if link != "." else cwd
    link_path = posixpath.normpath(posixpath.join(cwd, link))
    for target in targets:
        seen_from = target if target.startswith("/") else posixpath.join(link_dir, target)
        finding.writes.append((".", posixpath.normpath(seen_from), True, False))
        finding.sources.append((".", posixpath.normpath(seen_from), link_path, False))


def _touches(args: list[str | None], finding: ShellFinding, cwd: str) -> None:
    """Operands of a program nobody can vouch for: one inside the record makes it uncertain."""
    for arg in args:
        if arg is None:
            continue
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if arg.startswith("-o") and len(arg) > 2:
            value = arg[2:]
        if value and not value.startswith("-"):
            finding.touches.append((cwd, value))


def _redirect(node: Any, finding: ShellFinding, cwd: str) -> None:
    operator = next((c.type for c in node.children if not c.is_named), "")
    if operator not in WRITE_REDIRECTS:
        return
    destination = node.child_by_field_name("destination")
    if destination is None:
        return
    target = _text(destination)
    if target is None:
        finding.uncertain.append("output is redirected to a path that is not a fixed word")
        home = _home_path(destination)  # `> ~/x` writes the person's home outside a sandbox
        if home is not None:
            finding.writes.append((cwd, home, False, False))
        return
    if operator == ">&" and (target.isdigit() or target == "-"):
        return  # 2>&1 and friends duplicate a descriptor; they write no file
    if target in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"):
        return
    finding.writes.append((cwd, target, False, False))
