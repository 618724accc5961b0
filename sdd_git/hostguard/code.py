"""Code an agent runs: what the command line shows of it.

An agent's host runs its commands with all its rights: no sandbox holds a script, so the guard
reads what it can. A command that runs code (an interpreter, a build or test runner: the
classifier's `runs_code`) and names sdd's own code (`sdd_git`) or a protected path among its
words is refused: `python -c "open('memory/decisions.yaml', 'w')"`. A script it runs by name
(`./x.sh`, `python x.py`, `bash x.sh`) is read too, and one that names sdd or a protected path is
asked about. What such code does beyond its words (a test suite, a Makefile, a script that builds
a path) is not seen here: that is what a sandbox is for (see docs/guard.md)."""

from __future__ import annotations

import os
import re

from sdd_git.hostguard.call import Answer, ask, deny

Words = list[str | None]

# A protected folder named as a path in code or a script (`memory/`, '.sdd/x', "changes", a
# quoted 'memory'), or a rule file by its name (`CLAUDE.md`, `ROLE.md`, ...).
_FOLDERS = r"memory|changes|\.sdd|\.git|\.claude|\.codex|\.cursor|\.githooks|\.husky"
_FILES = r"CLAUDE(?:\.local)?\.md|AGENTS(?:\.override)?\.md|ROLE\.md|SKILL\.md|\.mcp\.json"
# Patterns, not compiled ones: `re` compiles each on first use and keeps it, and most commands
# never need one (sdd guard pays for every compile at start).
_NAMES_PROTECTED = (
    rf"(?:(?:^|[\s'\"`(=,:])(?:\./)?({_FOLDERS})/|(['\"])({_FOLDERS})\2|\b({_FILES})\b)"
)
_NAMES_SDD = r"\bsdd_git\b|(?:^|[\s'\"`;&|(])sdd\s+[a-z-]"
_SCRIPT_BYTES = 1_000_000
# Interpreters whose first operand (after their options) is the script they run.
_SCRIPT_RUNNERS = r"(python|pypy|perl|ruby|node|nodejs|php|bash|sh|dash|zsh|ksh)[0-9.]*"


def code_answer(words: Words, cwd: str, stdin: str | None = None) -> Answer | None:
    """The word on one command (and the text a here-document feeds it), when it runs code or
    is a program outside the system's folders; None when the guard sees nothing in it."""
    from sdd_git.shellpolicy.runs_code import runs_code

    if not words or words[0] is None:
        return None
    head, args = words[0], words[1:]
    shown = os.path.basename(head)
    if runs_code(head, args):
        texts = [(word, False) for word in args if word is not None]
        texts += [(stdin, True)] if stdin else []
        for text, fed in texts:
            refused = _code_text(shown, text, cwd, whole=fed)
            if refused is not None:
                return refused
        script = _script(head, args)
        if script is not None:
            return _read_script(script, cwd)
    found = _on_path(head) if "/" not in head else None
    return _read_script(found, cwd) if found is not None else None


def _code_text(shown: str, text: str, cwd: str, whole: bool) -> Answer | None:
    """A word of a command that runs code, or the code a here-document feeds it."""
    if "sdd_git" in text or (whole and re.search(_NAMES_SDD, text)):
        return deny(
            f"{shown} is given code that runs sdd or uses its code (sdd_git); the person's "
            "commands are hers, by any route"
        )
    named = re.search(_NAMES_PROTECTED, text) if whole else None
    name = _group(named) if named is not None else (None if whole else _named(text, cwd))
    if name is None:
        return None
    return deny(
        f"{shown} runs code and is given {name}, part of the person's record or of the files "
        "that grant agents their rules; sdd guard cannot tell whether that code writes there. "
        "Read the record with the Read tool or cat; it changes only by the person's own sdd "
        "commands"
    )


def _group(found: re.Match[str]) -> str:
    return next(g for g in found.groups() if g and g not in "'\"")


def _on_path(name: str) -> str | None:
    """Where PATH finds a program of this name, when that is outside the system's folders: a
    program someone put there (a copy of sdd's own script under another name, say)."""
    from sdd_git.shellpolicy.runs_code import BASH_BUILTINS, SYSTEM_FOLDERS

    if not name or name in BASH_BUILTINS:
        return None
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return None if os.path.realpath(candidate).startswith(SYSTEM_FOLDERS) else candidate
    return None


def _named(word: str, cwd: str) -> str | None:
    """The protected path a word names: as a path (`memory/x`, `../p/.sdd`), checked where it
    leads; or, in code text, by its name."""
    value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
    if value and not value.startswith("-") and not any(c in value for c in " \t\n'\"();"):
        return value if _may_name_protected(value, cwd) else None
    found = re.search(_NAMES_PROTECTED, word)
    return _group(found) if found else None


def _may_name_protected(value: str, cwd: str) -> bool:
    """The path rules' answer for an operand of code, asked only when the path could be
    protected: a part of it (as written, or where its links lead) has a protected name, or it
    leads out of the folder the command runs in (into another product, sdd's home, Python's
    folders). Most operands (`tests/`, `src/app.py`) are neither, and the rules cost their
    import. A file a rule folder links to, under an ordinary name, is not seen here: the hook's
    file-tool and shell-write checks see it."""
    from sdd_git.hostguard.paths import absolute, write_problem

    full = absolute(cwd, value)
    real = os.path.realpath(full)
    parts = {p.casefold() for p in (*full.split("/"), *real.split("/"))}
    named = bool(parts & _PROTECTED_PARTS) or any(p.startswith(".env") for p in parts)
    leaves = not real.startswith(os.path.realpath(cwd).rstrip("/") + "/")
    return (named or leaves) and write_problem(cwd, value) is not None


# Parts of a path that make an operand worth the path rules' full check.
_PROTECTED_PARTS = frozenset(
    {
        "memory", "changes", ".sdd", ".git", "templates", ".agents", ".claude", ".codex",
        ".cursor", ".vscode", ".github", ".githooks", ".husky", "claude.md", "claude.local.md",
        "agents.md", "agents.override.md", ".mcp.json", "copilot-instructions.md",
        ".gitattributes", "role.md", "skill.md", ".claude.json",
    }
)  # fmt: skip


def _script(head: str, args: Words) -> str | None:
    """The file of code the command runs by name: the program itself when it is a path, or an
    interpreter's script."""
    if "/" in head:
        return head
    if not re.fullmatch(_SCRIPT_RUNNERS, head):
        return None
    for index, word in enumerate(args):
        if word is None:
            return None
        if word in ("-c", "-e", "-E", "-m", "-r", "--eval", "-p", "--print"):
            return None  # code on the line (read above) or a module
        if word == "--":
            following = args[index + 1] if index + 1 < len(args) else None
            return following
        if not word.startswith("-"):
            return word
    return None


def _read_script(path: str, cwd: str) -> Answer | None:
    full = os.path.join(cwd, path)
    try:
        if not os.path.isfile(full):
            return None
        with open(full, "rb") as handle:
            data = handle.read(_SCRIPT_BYTES)
    except OSError:
        return None
    if data.startswith((b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"MZ")):
        return None  # a compiled program: nothing to read in it
    text = data.decode("utf-8", "replace")
    if re.search(_NAMES_SDD, text):
        return ask(
            f"{path} runs sdd or uses its code (sdd_git); sdd guard cannot tell which of "
            "sdd's commands it runs, and the person's are hers alone"
        )
    found = re.search(_NAMES_PROTECTED, text)
    if found is not None:
        named = next(g for g in found.groups() if g and g not in "'\"")
        return ask(
            f"{path} names {named}, part of the person's record or of the files "
            "that grant agents their rules; sdd guard cannot tell whether it writes "
            "there"
        )
    return None
