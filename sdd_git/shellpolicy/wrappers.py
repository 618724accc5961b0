"""Commands that run another command: env, timeout, nice, xargs, sudo, flock, strace, ...; the
options each one knows, and the command left when they are taken off."""

from __future__ import annotations

import re

from sdd_git.shellpolicy.findings import ShellFinding, Words, Write
from sdd_git.shellpolicy.parse import base_name, is_sdd, matching_option, short_flag, word_at
from sdd_git.shellpolicy.runs_code import TARS, runs_code
from sdd_git.shellpolicy.writers import WRITERS_ALL, WRITERS_LAST

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from sdd_git.shellpolicy.findings import Follow

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish"})


# Variables whose value becomes code, a path lookup or a config for a child process.
DANGEROUS_ENV = frozenset(
    {
        "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "CDPATH", "HOME", "PAGER", "PS4",
        "PROMPT_COMMAND", "LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONSTARTUP",
        "PYTHONHOME", "PATH", "IFS", "GLOBIGNORE", "EDITOR", "VISUAL", "MANPAGER", "LESSOPEN",
        "PERL5OPT", "NODE_OPTIONS", "RUBYOPT",
        # Where git reads the person's configuration from (`$XDG_CONFIG_HOME/git/config`): one
        # the agent wrote names a program git runs (core.fsmonitor at `git status`,
        # diff.external at `git diff`).
        "XDG_CONFIG_HOME",
        # Options a program takes from its environment (`TAR_OPTIONS=-x tar -f a.tar` extracts),
        # and the command lines of COMMAND_VARIABLES below, which are followed only for sdd.
        "TAR_OPTIONS", "RSYNC_RSH", "BAT_PAGER", "LESSCLOSE", "BROWSER", "SSH_ASKPASS",
        "SUDO_ASKPASS", "SYSTEMD_PAGER",
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


# Wrappers with a file of their own to write or lock, followed by `_file_wrapper`.
FILE_WRAPPERS = ("flock", "script", "strace", "ltrace")
# Wrappers whose first positional word is a value (duration, priority, mask, context, group),
# not the command.
WRAPPER_POSITIONAL = frozenset({"timeout", "chrt", "taskset", "runcon"})


# prlimit's resource options take their value only when it is attached (`--nofile=1024`,
# `-n1024`): alone they print the limit, and the next word is not theirs.
_PRLIMIT_RESOURCES = frozenset("cdefilmnqrstuvxy")


# The dynamic loader runs the program it is given (`/lib64/ld-linux-x86-64.so.2 ./x`).
LOADER = re.compile(r"ld(-linux[-\w.]*|-musl-[\w.]*|64|-[0-9.]+)?\.so(\.[0-9]+)*")


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
        "GIT_ASKPASS", "TAR_OPTIONS", "BAT_PAGER",
    }
)  # fmt: skip


def command_variable(follow: Follow, name: str, value: str | None, finding: ShellFinding) -> None:
    """`MANPAGER='sdd next' man ls`, `LESSOPEN='|sdd next %s'`: the value is a command line a
    program runs later. It stays uncertain (above); one that reaches sdd is refused."""
    if name not in COMMAND_VARIABLES or not value:
        return
    probe = ShellFinding()
    follow.script(value.lstrip("|-").replace("%s", "x"), probe, ".", 1)
    finding.reach_sdd_through(probe, f"{name} holds a command that runs sdd: {{}}")


def probe_words(
    follow: Follow, name: str, args: Words, finding: ShellFinding, cwd: list[str], depth: int
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
            follow.script(value, probe, cwd[-1], depth + 1)
        elif not arg.startswith("-"):
            follow.argv(args[index:], probe, list(cwd), depth + 1)
    finding.reach_sdd_through(probe, f"{name} may run it: {{}}", sure=False)
    finding.runs_code.extend(r for r in probe.runs_code if r not in finding.runs_code)


def command_options(
    follow: Follow, name: str, args: Words, finding: ShellFinding, cwd: list[str], depth: int
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
                follow.script(action[5:], finding, cwd[-1], depth + 1)
        line = matching_option(arg, lines)
        program = matching_option(arg, programs)
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
            follow.script(value, finding, cwd[-1], depth + 1)
        else:
            follow.argv([value], finding, cwd, depth + 1)


def unwrap(
    follow: Follow, name: str, args: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> Words | None:
    """The command a wrapper runs, or None when it runs none we can name."""
    if name in FILE_WRAPPERS:
        return _file_wrapper(follow, name, args, finding, cwd, depth)
    taken = _options_taken(follow, name, args, finding, cwd, depth)
    if taken is None:
        return None
    split, index = taken
    rest = [*split, *args[index:]]
    if name == "env" and split and split[0] is None:
        finding.uncertain.append("env -S splits text sdd cannot read into a command")
        probe_words(follow, name, args, finding, cwd, depth)
        return None
    if name == "ld.so":
        finding.runs_code.append("the dynamic loader runs the program it is given")
    if not rest:
        if name in ("env", "xargs"):
            finding.uncertain.append(f"{name} runs a command named by its input")
        return None
    if name == "xargs":
        return _xargs(follow, rest, finding, cwd, depth)
    return rest


def _options_taken(
    follow: Follow, name: str, args: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> tuple[Words, int] | None:
    """The wrapper's own words taken off: (the words `env -S` split from one string, to run
    first; the index of the command's first word), or None when sdd cannot follow them."""
    index = 0
    positional_value = name in WRAPPER_POSITIONAL
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append(f"{name} gets an argument that is not a fixed word")
            probe_words(follow, name, args[index:], finding, cwd, depth)
            return None
        if name == "env" and "=" in arg and not arg.startswith("-"):
            _env_assignment(follow, arg, finding)
            index += 1
            continue
        if arg == "--":
            return [], index + 1
        if name == "env" and (match := matching_option(arg, _ENV_SPLIT)) is not None:
            text = match[1] if match[1] is not None else word_at(args, index + 1)
            return _split(text), index + (1 if match[1] is not None else 2)
        if name == "prlimit" and _prlimit_resource(arg):
            index += 1
            continue
        if arg.startswith("-") and arg != "-":
            width = _option_width(name, arg, word_at(args, index + 1), finding)
            if width == 0:
                finding.uncertain.append(f"{name} {arg}: an option sdd does not know how to follow")
                probe_words(follow, name, args[index:], finding, cwd, depth)
                return None
            # runcon's context options are a part of the context, not the whole.
            runcon_part = name == "runcon" and arg.split("=", 1)[0] in WRAPPERS[name][0]
            positional_value = positional_value and not runcon_part
            index += width
            continue
        if not positional_value:
            break
        positional_value = False
        _consumed(name, arg, finding)
        index += 1
    return [], index


def _option_width(name: str, arg: str, following: str | None, finding: ShellFinding) -> int:
    """How many words a wrapper's option takes (itself, and its value when apart); 0 when the
    table does not know it."""
    with_value, plain = WRAPPERS[name]
    option = arg.split("=", 1)[0]
    if option in with_value:
        _consumed(name, following if "=" not in arg else None, finding)
        return 1 if "=" in arg else 2
    if not arg.startswith("--") and arg[:2] in with_value:
        return 1  # a short option with its value attached: -o0, -n10
    if option in plain or arg in plain:
        return 1
    return 0


def _env_assignment(follow: Follow, arg: str, finding: ShellFinding) -> None:
    key, value = arg.split("=", 1)
    if key in DANGEROUS_ENV or key.startswith(DANGEROUS_ENV_PREFIXES):
        finding.uncertain.append(f"it sets {key}, which changes what later commands run")
    command_variable(follow, key, value, finding)


def _split(text: str | None) -> Words:
    """`env -S TEXT`: the words it splits TEXT into; [None] when sdd cannot read them."""
    import shlex  # here: `env -S` is rare, and sdd guard pays for every import at start

    try:
        return list(shlex.split(text)) if text is not None else [None]
    except ValueError:
        return [None]


# What xargs may not be handed its input for: it would run or write what it reads.
_XARGS_UNCERTAIN = frozenset(
    {*SHELLS, *WRAPPERS, "find", *WRITERS_ALL, *WRITERS_LAST, "mv", "ln", "sed", "perl", "dd"}
)


def _xargs(
    follow: Follow, rest: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> Words | None:
    inner = rest[0]
    if inner is not None and is_sdd(base_name(inner)):
        # Reaches sdd: refused outright, not merely uncertain. Its input adds words the line
        # does not show (the None word).
        return [*rest, None]
    if inner is None or "{}" in (w or "" for w in rest) or base_name(inner) in _XARGS_UNCERTAIN:
        finding.uncertain.append("xargs hands its input to a command that runs or writes it")
        probe_words(follow, "xargs", rest, finding, cwd, depth)
        if inner is None or base_name(inner) in SHELLS:
            finding.runs_code.append("xargs runs commands made of its input")
        else:
            finding.runs_code.extend(runs_code(inner, rest[1:]))
        return None
    handed_words(inner, rest[1:], finding)
    return rest


_ENV_SPLIT = frozenset({"-S", "--split-string"})


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
    if word is not None and is_sdd(base_name(word)):
        finding.reach_sdd(f"{name} is given {word}, which may be the command it runs", word)


def handed_words(head: str, args: Words, finding: ShellFinding) -> None:
    """xargs and `find -exec ... {}` add words the command line does not show: a tool that only
    prints its usage when given none (`unzip`, `npm`) runs with them."""
    if not runs_code(head, args):
        for reason in runs_code(head, [*args, "{}"]):
            if reason not in finding.runs_code:
                finding.runs_code.append(reason)


def _file_wrapper(
    follow: Follow, name: str, args: Words, finding: ShellFinding, cwd: list[str], depth: int
) -> Words | None:
    """flock LOCKFILE CMD / flock -c STRING, script [-c STRING] FILE, strace -o FILE CMD."""
    options_with_file = {"strace": ("-o",), "ltrace": ("-o",), "script": ()}.get(name, ())
    index = 0
    positional: Words = []
    while index < len(args):
        arg = args[index]
        if arg is None:
            finding.uncertain.append(f"{name} gets an argument that is not a fixed word")
            return None
        if name in ("flock", "script") and (arg == "--command" or short_flag(arg, "c")):
            script = args[index + 1] if index + 1 < len(args) else None
            if script is None:
                finding.uncertain.append(f"{name} -c runs text that is not a fixed string")
                return None
            follow.script(script, finding, cwd[-1], depth + 1)
            index += 2
            continue
        if arg in options_with_file:
            target = args[index + 1] if index + 1 < len(args) else None
            if target is None:
                finding.uncertain.append(f"{name} writes to a path that is not a fixed word")
            else:
                finding.writes.append(Write(cwd[-1], target))
            index += 2
            continue
        if arg.startswith("-"):
            if name in ("strace", "ltrace"):
                finding.uncertain.append(f"{name} {arg}: an option sdd does not know how to follow")
                return None
            index += 1
            continue
        if name == "flock" and not positional:
            finding.writes.append(Write(cwd[-1], arg))  # the lock file
            positional.append(arg)
            index += 1
            continue
        if name == "script":
            finding.writes.append(Write(cwd[-1], arg))  # the typescript file
            index += 1
            continue
        return args[index:]
    return None
