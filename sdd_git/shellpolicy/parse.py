"""The words of a shell command as bash would see them: the tree-sitter tree, static words
(None where bash would expand), here-documents, and option spellings."""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache

from sdd_git.shellpolicy.findings import Words

# `typing` is never imported at run time here: the classifier is on the hot path of
# `sdd guard`, which a host runs before each tool call (mypy reads this block as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@lru_cache(maxsize=1)
def parser() -> Any:
    ts, bash = _binding("tree_sitter"), _binding("tree_sitter_bash")
    return ts.Parser(ts.Language(bash.language()))


def _binding(package: str) -> Any:
    """The package's compiled `_binding` module. When the package is not imported yet, the
    extension is loaded alone, under its own name, so that a later import of the package finds
    it: the packages' own `__init__` would bring in `typing` and `importlib.resources`, a third
    of the time `sdd guard` may take."""
    import importlib
    import sys

    name = f"{package}._binding"
    if package in sys.modules or name in sys.modules:
        return importlib.import_module(name)
    import importlib.machinery
    import importlib.util
    import os

    spec = importlib.util.find_spec(package)
    folders = spec.submodule_search_locations if spec is not None else None
    for folder in folders or ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:  # in the order Python prefers
            path = os.path.join(folder, "_binding" + suffix)
            found = importlib.util.spec_from_file_location(name, path)
            if not os.path.isfile(path) or found is None or found.loader is None:
                continue
            module = importlib.util.module_from_spec(found)
            sys.modules[name] = module
            found.loader.exec_module(module)
            return module
    return importlib.import_module(name)  # as installed in another way: the package's own import


def join_continuations(source: str) -> str:
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


def looks_like_code(raw: bytes) -> bool:
    return b"$(" in raw or b"`" in raw


def text_of(node: Any) -> str | None:
    """The literal value of a word-like node, or None when it is not fully static."""
    kind = node.type
    raw: str = node.text.decode("utf-8", "replace")
    if kind in ("word", "number"):
        return static_word(raw)
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
        pieces = [text_of(child) for child in node.named_children]
        if any(p is None for p in pieces):
            return None
        return "".join(p for p in pieces if p is not None)
    if kind == "command_name":
        inner = node.named_children
        return text_of(inner[0]) if inner else None
    return None  # expansions, $'...' strings, arithmetic, brace expressions...


def static_word(raw: str) -> str | None:
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


def words_of(command: Any, home: bool = False) -> Words:
    """The command's words; with `home`, `~` and `~/...` read as the person's home folder."""
    words: Words = []
    name = command.child_by_field_name("name")
    if name is not None:
        words.append(text_of(name))
    for argument in command.children_by_field_name("argument"):
        words.append((home_path(argument) if home else None) or text_of(argument))
    parent = command.parent
    if parent is not None and parent.type == "redirected_statement":
        for redirect in parent.children_by_field_name("redirect"):
            for extra in _words_after(redirect):
                words.append((home_path(extra) if home else None) or text_of(extra))
    return words


def _words_after(redirect: Any) -> list[Any]:
    """The command's words that tree-sitter-bash files under a redirection. It reads
    `sdd >/dev/null next CH-1` as a redirection to three files, and `sdd <<X next` as a
    here-document whose start has arguments; bash gives a redirection one word (a here-document
    its delimiter), and the words after it are the command's. A here-string (`<<<word next`) is
    read right already."""
    if redirect.type == "file_redirect":
        return list(redirect.children_by_field_name("destination")[1:])
    if redirect.type != "heredoc_redirect":
        return []
    nodes: list[Any] = []
    for index, child in enumerate(redirect.children):  # in order: `<<X a 2>f b` is a, b
        field = redirect.field_name_for_child(index)
        if field == "argument":
            nodes.append(child)
        elif field == "redirect":
            nodes.extend(_words_after(child))
    return nodes


def home_path(node: Any) -> str | None:
    """`~` or `~/static/rest` as the absolute path bash would make of it, else None."""
    raw: str = node.text.decode("utf-8", "replace")
    if node.type != "word" or not (raw == "~" or raw.startswith("~/")):
        return None
    rest = static_word(raw[1:])
    return None if rest is None else posixpath.expanduser("~") + rest


def base_name(word: str) -> str:
    return posixpath.basename(word)


def heredoc_body(node: Any) -> str | None:
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
            return text_of(value) if value is not None else None
    return None


def matching_option(arg: str, options: frozenset[str]) -> tuple[str, str | None] | None:
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


def word_at(args: Words, index: int) -> str | None:
    return args[index] if index < len(args) else None


def short_flag(arg: str | None, flag: str) -> bool:
    return arg is not None and arg.startswith("-") and not arg.startswith("--") and flag in arg[1:]


def is_sdd(name: str) -> bool:
    return name == "sdd" or name.startswith("sdd-")


def is_python(name: str) -> bool:
    return re.fullmatch(r"(python|pypy)[0-9.]*", name) is not None


def printed_text(words: Words) -> str | None:
    """What `printf FORMAT` or `echo [-ne] WORDS` prints, when the words say it plainly."""
    if not words or any(w is None for w in words):
        return None
    head, *args = [w for w in words if w is not None]
    name = base_name(head)
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
