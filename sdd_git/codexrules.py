"""What `sdd agents install codex` writes for Codex's own walls, besides AGENTS.md:

- `.codex/rules/sdd.rules`: Codex's execpolicy rules (Starlark). Each spelling of each person
  command is a `prefix_rule` with `decision = "forbidden"`, a justification in plain words (what
  to do instead: ask her), and `match`/`not_match` examples Codex checks when it loads the file.
  Codex matches a rule's words exactly from the start of a command; it has no wildcard word. So
  sdd's global options are refused whole (`sdd -C`, `sdd --no-agent`, `sdd --`, whatever
  follows): a rule cannot see which command comes after `-C DIR`. What no exact words can name
  (`-CDIR` for a DIR other than `.` and `..`, an interpreter option before `-m`, shell syntax
  Codex does not split into commands) is left to `sdd guard`, and docs/hosts.md lists it.
  A command by path (`.venv/bin/sdd accept`, `/usr/bin/python3 -m sdd_git accept`) meets the
  rule of its file name: Codex's agent resolves a path to its basename rules, which hold for
  every path as long as no `host_executable("sdd")` narrows them (none is written).
- `.codex/hooks.json`: `sdd guard --host codex` as a `PreToolUse` hook for `Bash` and
  `apply_patch`, merged with her hooks. Codex's hook has Claude Code's shape (the same
  `hooks.PreToolUse[].hooks[]` file, `tool_name` and `tool_input.command` on stdin, exit 2 with
  the reason on stderr to refuse).

The rules file is sdd's whole: it carries a marker line with the sha256 of the rest, as the git
hooks of `sdd hooks install` do, and is rewritten only while that still holds. A file without
the marker, or changed since sdd wrote it, is refused with the way out. The rules are derived
from the one table of the person's commands (sdd_git.personcommands), never kept beside it.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from sdd_git.errors import SddError
from sdd_git.hostclaude import hook_command
from sdd_git.personcommands import GLOBAL_FLAGS, GLOBAL_OPTIONS_WITH_VALUE, PERSON_COMMANDS

RULES_FILE = ".codex/rules/sdd.rules"
HOOKS_FILE = ".codex/hooks.json"
MARKER = "# sdd-rules sha256="
# How sdd knows its own hook among hers, whatever interpreter wrote it.
GUARD_MARK = "guard --host codex"  # `sdd guard ...` or `PYTHON -P -m sdd_git guard ...`
# Codex names every shell tool `Bash` and its file edits `apply_patch` in a hook's input
# (tool_input.command is the command line, or the whole patch).
GUARD_MATCHER = "Bash|apply_patch"
GUARD_TIMEOUT = 30  # seconds; Codex's default is 600, and a hung check must not hold a turn

# The interpreters a person's Python may be called by (3.11 is sdd's oldest).
PYTHONS: tuple[str, ...] = ("python", "python3", *(f"python3.{minor}" for minor in range(11, 16)))
MODULES: tuple[str, ...] = ("sdd_git", "sdd_git.__main__")
# Programs that run the words after them as a command, with no option of their own needed.
WRAPPERS: tuple[str, ...] = ("env", "command", "exec", "nohup", "nice", "time", "sudo")
# Attached forms of a valued global option that a rule can still name (`-C.`, `-C..`).
_ATTACHED_DIRS: tuple[str, ...] = (".", "..")
# What an agent may run, from AGENTS.md: the rules' `not_match` examples, and what the tests
# prove Codex lets through.
READS: tuple[tuple[str, ...], ...] = (
    ("change", "list"),
    ("change", "show", "CH-0001"),
    ("decision", "list"),
    ("role", "list"),
    ("role", "show", "builder"),
    ("role", "run", "builder", "--task", "x"),
    ("role", "runs"),
    ("stops",),
)

Token = str | tuple[str, ...]  # one word, or the words any one of which may stand there
State = Literal["intact", "changed"] | None


@dataclass(frozen=True)
class Launcher:
    """One way to start sdd: the rule's first words, and two concrete spellings of them."""

    label: str
    words: tuple[Token, ...]
    plain: tuple[str, ...]
    other: tuple[str, ...]  # another alternative (a path, another interpreter), for `match`


LAUNCHERS: tuple[Launcher, ...] = (
    Launcher("sdd", ("sdd",), ("sdd",), ("/usr/local/bin/sdd",)),
    Launcher(
        "python -m sdd_git",
        (PYTHONS, "-m", MODULES),
        ("python3", "-m", "sdd_git"),
        ("/usr/bin/python3.12", "-m", "sdd_git.__main__"),
    ),
    Launcher(
        "python -msdd_git",
        (PYTHONS, tuple(f"-m{module}" for module in MODULES)),
        ("python", "-msdd_git"),
        (".venv/bin/python3", "-msdd_git.__main__"),
    ),
    Launcher("a wrapper, then sdd", (WRAPPERS, "sdd"), ("env", "sdd"), ("nohup", "sdd")),
)


@dataclass(frozen=True)
class Rule:
    comment: str
    pattern: tuple[Token, ...]
    justification: str
    match: tuple[tuple[str, ...], ...]
    not_match: tuple[tuple[str, ...], ...]


def _global_words() -> tuple[str, ...]:
    attached = tuple(f"{opt}{d}" for opt in GLOBAL_OPTIONS_WITH_VALUE for d in _ATTACHED_DIRS)
    return (*GLOBAL_OPTIONS_WITH_VALUE, *attached, *GLOBAL_FLAGS, "--")


def _groups() -> tuple[str, ...]:
    """The first words of the person's two-word commands (`qa`, `role`, `trust`, ...)."""
    return tuple(dict.fromkeys(c.split()[0] for c in PERSON_COMMANDS if " " in c))


def _reads_near(first: str) -> tuple[tuple[str, ...], ...]:
    """Reads that share the command's first word when there are any (`role list` beside
    `role create`): the examples that show a rule is no wider than its words."""
    near = tuple(read for read in READS if read[0] == first)
    return near or (("stops",), ("change", "list"))


def _person_rule(launcher: Launcher, command: str) -> Rule:
    words = tuple(command.split())
    return Rule(
        comment=f"sdd {command}, started as {launcher.label}",
        pattern=(*launcher.words, *words),
        justification=(
            f"`sdd {command}` is a person command: only the person runs it, herself, in her "
            "own terminal, in no spelling of yours (sdd -C, python -m sdd_git, a path, a "
            "wrapper). Do not run it or work around this rule. Stop and tell her the exact "
            "command to run; `sdd stops` and `sdd change show CH` show what waits for her."
        ),
        match=((*launcher.plain, *words), (*launcher.other, *words, "x")),
        not_match=tuple((*launcher.plain, *read) for read in _reads_near(words[0])),
    )


def _global_rule(launcher: Launcher) -> Rule:
    options = _global_words()
    shown = ", ".join(options)
    return Rule(
        comment=f"sdd's global options ({shown}), started as {launcher.label}",
        pattern=(*launcher.words, options),
        justification=(
            f"sdd's global options ({shown}) are refused here whatever follows them: a rule "
            "matches exact words and cannot tell which command comes after them, and a person "
            "command hides behind them. Run sdd without them, from the folder it is for: "
            "`cd DIR && sdd change list`. The person's own commands stay hers."
        ),
        match=tuple((*launcher.plain, option, "accept") for option in options),
        not_match=((*launcher.plain, "change", "list"), (*launcher.plain, "--version")),
    )


def _dashes_rule(launcher: Launcher) -> Rule:
    groups = _groups()
    return Rule(
        comment=f"`--` between a command group and its command, started as {launcher.label}",
        pattern=(*launcher.words, groups, "--"),
        justification=(
            "`--` between an sdd command group and its command (`sdd qa -- record`) is refused "
            "here: it is a spelling of a person command that a rule cannot see through. Run "
            "the reads without it (`sdd role list`); the person's commands stay hers."
        ),
        match=tuple((*launcher.plain, group, "--", "x") for group in groups),
        not_match=((*launcher.plain, "role", "list"), (*launcher.plain, "change", "show", "--")),
    )


def rules() -> tuple[Rule, ...]:
    """Every rule the file holds, in its order."""
    out: list[Rule] = []
    for launcher in LAUNCHERS:
        out.append(_global_rule(launcher))
        out.append(_dashes_rule(launcher))
        out.extend(_person_rule(launcher, command) for command in PERSON_COMMANDS)
    return tuple(out)


# --- the file -------------------------------------------------------------------------------------


def _string(text: str) -> str:
    # A JSON string of ASCII text is a Starlark string literal: the same quotes and escapes.
    assert text.isascii() and text.isprintable(), text
    return json.dumps(text)


def _token(token: Token) -> str:
    if isinstance(token, str):
        return _string(token)
    return "[" + ", ".join(_string(word) for word in token) + "]"


def _examples(examples: Iterable[tuple[str, ...]]) -> str:
    return "[" + ", ".join(_string(shlex.join(example)) for example in examples) + "]"


def _render(rule: Rule) -> Iterator[str]:
    yield f"# {rule.comment}"
    yield "prefix_rule("
    yield "    pattern = [" + ", ".join(_token(token) for token in rule.pattern) + "],"
    yield '    decision = "forbidden",'
    yield f"    justification = {_string(rule.justification)},"
    yield f"    match = {_examples(rule.match)},"
    yield f"    not_match = {_examples(rule.not_match)},"
    yield ")"
    yield ""


HEADER = f"""\
# Codex rules written by `sdd agents install codex`: Codex refuses the commands only the person
# runs (sdd's person commands, in every spelling a rule can name), whatever the model decides.
# https://developers.openai.com/codex/rules
#
# This file is sdd's. `sdd agents install codex` rewrites it while it is as sdd wrote it (the
# sha256 below), and refuses to touch it once it was changed. Put rules of your own in another
# file of .codex/rules/: Codex loads every .rules file there, in a trusted project.
#
# Each rule matches exact words from the start of a command, so sdd's global options
# ({", ".join(_global_words())}) are refused whole: a rule cannot tell which command follows
# `-C DIR`. A path to sdd or to Python meets the rule of its file name, which Codex's agent
# looks up for any path. `sdd guard --host codex` (.codex/hooks.json) covers what words cannot:
# `-CDIR` for another DIR, interpreter options, `bash -c` with substitutions, writes to the record.
"""


def render() -> str:
    """The whole file, marker line included."""
    body = HEADER + "\n" + "\n".join(line for rule in rules() for line in _render(rule))
    return sign(body)


def sign(body: str) -> str:
    """`body` with the marker line after its header comment (the first blank line)."""
    head, sep, rest = body.partition("\n\n")
    return f"{head}\n{MARKER}{_digest(head + sep + rest)}{sep}{rest}"


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def state(text: str) -> State:
    """ "intact" when the marker's hash matches the rest of the file (sdd wrote it and nobody
    changed it since), "changed" when there is a marker and the text differs, None when there
    is no marker line (not sdd's)."""
    lines = text.splitlines(keepends=True)
    marked = [i for i, line in enumerate(lines) if line.startswith(MARKER)]
    if not marked:
        return None
    if len(marked) > 1:
        return "changed"
    i = marked[0]
    recorded = lines[i][len(MARKER) :].strip()
    rest = "".join(lines[:i] + lines[i + 1 :])
    return "intact" if _digest(rest) == recorded else "changed"


def merge_rules(existing: str | None) -> str:
    """The rules file as `install` leaves it: written anew while sdd's own file is unchanged,
    else refused with the way out (nothing is written)."""
    new = render()
    if existing is None or existing == new:
        return new
    found = state(existing)
    if found == "intact":
        return new
    said = (
        "was changed since sdd wrote it"
        if found == "changed"
        else "is not sdd's (it has no `# sdd-rules sha256=` line)"
    )
    raise SddError(
        f"{RULES_FILE} {said}, so sdd leaves it as it is",
        hint=f"move your own rules into another file of .codex/rules/ (Codex loads every "
        f".rules file there), remove {RULES_FILE}, then run `sdd agents install codex` again; "
        "nothing was written",
    )


# --- the hook ---------------------------------------------------------------------------------


def guard_group(python: str | None = None) -> dict[str, Any]:
    """The `PreToolUse` matcher group that runs `sdd guard` before each shell command and
    patch. Codex refuses the call when the hook exits 2 with a reason on stderr."""
    return {
        "matcher": GUARD_MATCHER,
        "hooks": [
            {
                "type": "command",
                "command": hook_command(python, "codex"),
                "timeout": GUARD_TIMEOUT,
                "statusMessage": "sdd guard: checking the call",
            }
        ],
    }


def _registers_guard(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(
        isinstance(hook, dict) and GUARD_MARK in str(hook.get("command", "")) for hook in hooks
    )


def merge_hooks(existing: str | None, rel: str = HOOKS_FILE) -> str:
    """Codex's hooks file with `sdd guard` registered; her hooks and keys kept. A file that
    already runs `sdd guard --host codex` before a tool is left byte for byte, however she
    shaped that group."""
    if existing is None or existing.strip() == "":
        return json.dumps({"hooks": {"PreToolUse": [guard_group()]}}, indent=2) + "\n"
    fix = f"fix {rel} by hand, then run `sdd agents install codex` again; nothing was written"
    try:
        data = json.loads(existing)
    except json.JSONDecodeError as exc:
        raise SddError(f"{rel}:{exc.lineno}: not valid JSON ({exc.msg})", hint=fix) from None
    if not isinstance(data, dict):
        raise SddError(f"{rel}: the hooks file is not a JSON object", hint=fix)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise SddError(f"{rel}: `hooks` is not an object", hint=fix)
    groups = hooks.setdefault("PreToolUse", [])
    if not isinstance(groups, list):
        raise SddError(f"{rel}: `hooks.PreToolUse` is not a list", hint=fix)
    if any(_registers_guard(group) for group in groups):
        return existing
    groups.append(guard_group())
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
