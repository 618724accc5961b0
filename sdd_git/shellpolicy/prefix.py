"""A command-prefix rule's test: is a shell command, for certain, exactly one plain command of
that program whose first words are the rule's literal words?

Strict by design, as a saved rule widens what runs without her: the whole text must parse, with
no error, as ONE simple command (no list, pipe, `&&`, `;`, `&`, subshell, `!`, comment), with no
variable assignment before it, no substitution or expansion anywhere in it (every word static:
no `$`, glob, brace or tilde expansion), and no redirection but a descriptor copy (`2>&1`), which
opens no file. Each of the rule's words must be spelled in the command exactly as in the rule,
unquoted and unescaped: `"pytest"`, `pytest\\ x`, `./pytest` and `/tmp/pytest` are other
spellings, never the rule's. What the program then does with its own options (`pytest -p
plugin`, `npm test` running a package script) is the sandbox's to hold: a prefix rule applies
only where a working sandbox holds the command (runner/boundary.py).
"""

from __future__ import annotations

import re

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
# A program's name: no path, no `=` (that would be an assignment), nothing the shell reads.
PROGRAM_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*\Z")
# A later word of the prefix: plain letters, digits and the punctuation options use.
LATER_WORD = re.compile(r"[A-Za-z0-9_.,:@%+=/-]+\Z")
# Programs whose job is to run another command, or sdd itself: a prefix rule naming one would
# allow whatever follows it, so no rule may name one (the guard would still see `sdd` through
# them, but a rule must not read as narrower than it is).
NEVER_PROGRAMS = frozenset(
    {
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "env", "eval",
        "exec", "command", "builtin", "sudo", "doas", "su", "xargs", "nohup", "nice", "timeout",
        "time", "stdbuf", "setsid", "flock", "strace", "ltrace", "chroot", "unshare", "nsenter",
        "runuser", "watch", "script", "find", "parallel", "sdd", "source", ".", "trap", "alias",
        "function", "declare", "typeset", "local", "export", "readonly", "set", "shopt", "ssh",
    }
)  # fmt: skip


def prefix_problem(words: list[str] | tuple[str, ...]) -> str | None:
    """Why `words` cannot be a rule's prefix, in words; None when they can."""
    if not words:
        return "a prefix must name at least the program"
    if not all(isinstance(w, str) for w in words):
        return "each word of a prefix must be a text"
    program = words[0]
    if not PROGRAM_WORD.match(program):
        return (
            f"'{program}' is not a plain program name: write the name alone, with no path, quote "
            "or space"
        )
    if program in NEVER_PROGRAMS:
        return f"'{program}' runs other commands (or is sdd itself): a rule cannot allow it"
    for word in words[1:]:
        if not LATER_WORD.match(word):
            return (
                f"'{word}' is not a plain word: a prefix holds literal words only (letters, "
                "digits and - _ . , : @ % + = /), no quote, space, `$`, glob or `~`"
            )
    return None


def matches_prefix(command: str, words: list[str] | tuple[str, ...]) -> bool:
    """Whether `command` is, for certain, one plain command that begins with `words`."""
    if prefix_problem(words) is not None or not isinstance(command, str):
        return False
    args = plain_command(command)
    if args is None or len(args) < len(words):
        return False
    return all(raw == word for (raw, _), word in zip(args, words, strict=False))


def plain_command(command: str) -> list[tuple[str, str]] | None:
    """The words of `command` as (as written, as bash reads it) when it is one plain command
    with every word static; None otherwise."""
    text = command.strip(" \t")
    if text.endswith("\n"):
        text = text.rstrip("\n")
    if not text or _CONTROL.search(text):
        # A newline separates commands (a continuation too is refused). A form feed or a
        # vertical tab is a blank to the parser and a plain character to bash, which runs the
        # program `ls\vx` where the parser reads `ls x`: any control character but a tab stops.
        return None
    from sdd_git.shellpolicy.parse import parser

    raw = text.encode("utf-8")
    tree = parser().parse(raw)
    root = tree.root_node
    if root.has_error or len(root.children) != 1:
        return None
    node = root.children[0]
    if node.start_byte != 0 or node.end_byte != len(raw):
        return None  # a trailing `&`, which the tree leaves out
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if c.type != "command"]
        if body is None or len(redirects) != len(node.named_children) - 1:
            return None
        if not all(_copies_descriptor(r) for r in redirects):
            return None
        if any(raw[r.start_byte - 1 : r.start_byte] not in (b" ", b"\t") for r in redirects):
            return None  # `{fd}>&1`: bash reads the word before as the redirect's variable
        node = body
    if node.type != "command":
        return None
    if any(not child.is_named for child in node.children):
        return None  # `ls $"x"`: a bare `$` before a string, which bash translates
    words: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type == "command_name":
            inner = child.named_children
            if len(inner) != 1:
                return None
            child = inner[0]
        elif child.type not in ("word", "string", "raw_string", "concatenation", "number"):
            return None  # an assignment, a substitution, an expansion, a redirect in the middle
        written = child.text.decode("utf-8", "replace")
        read = _static(child)
        if read is None:
            return None
        words.append((written, read))
    return words or None


def _static(node: Any) -> str | None:
    from sdd_git.shellpolicy.parse import text_of

    if node.type == "word" and written_has_expansion(node.text.decode("utf-8", "replace")):
        return None
    if node.type == "string" and node.text.startswith(b"$"):
        return None  # `$"x"`: bash translates it through the locale's message catalog
    if node.type == "concatenation" and any(not c.is_named for c in node.children):
        return None
    if node.type == "concatenation" and any(
        (c.type == "word" and written_has_expansion(c.text.decode("utf-8", "replace")))
        or (c.type == "string" and c.text.startswith(b"$"))
        for c in node.named_children
    ):
        return None
    return text_of(node)


def written_has_expansion(raw: str) -> bool:
    """`$` or a backquote left in an unquoted word (tree-sitter keeps some inside a word), or
    a tilde bash expands: at the start, and after `=` or `:` (`a=~` is read as `a=/home/her`
    even as an argument)."""
    return "$" in raw or "`" in raw or re.search(r"(^|[=:])~", raw) is not None


def _copies_descriptor(redirect: Any) -> bool:
    """`2>&1`, `>&2`: a copy of an open descriptor, which opens and writes no file."""
    if redirect.type != "file_redirect":
        return False
    destination = redirect.child_by_field_name("destination")
    text = redirect.text.decode("utf-8", "replace")
    if destination is None or not re.fullmatch(r"[0-9]?>&[0-9]", text.replace(" ", "")):
        return False
    target: str = destination.text.decode("utf-8", "replace")
    return target.isdigit()
