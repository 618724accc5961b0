"""What an MCP server's command may run: never a file of the product, however it is wrapped.

The server holds the network and whatever the config hands it (her token), even in the
sandbox, and all her rights outside one; a role may write product files, so a file there is
code a role could have written, run the next time any role reads through the connector. The
command is refused before it starts when its program, or a file it names (`python server.py`,
`node ./srv.js`, `--config=tools/x.json`), lies inside the product, and that is checked through
what only passes a command on: `sh -c "..."` and the other shells (the script split as the shell
would, with `cd` followed), `env [-i] [-u NAME] [-C DIR] [-S "..."] [VAR=x] cmd`, `nice`,
`timeout`, `exec`, `nohup`, `setsid`, `command`, `stdbuf`, `time`. A script that computes its
command (`$(...)`, backquotes, `eval`) is refused, as sdd cannot read what it would run. A
folder named as an argument (a repository a server reads) is data; a `cd` into the product is
not (`python -m x` there would load a product file). Code given to an interpreter inline
(`python -c`, `node -e`, `perl -e`, `ruby -e`, ...) may not mention a path inside the product,
and no environment variable may name one, whatever the variable (PYTHONPATH, NODE_OPTIONS,
BASH_ENV, LD_PRELOAD... each loads code from where it points): in the config's `env:`, in an
`env VAR=...` wrapper, or in a shell script's `VAR=...` and `export VAR=...`."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from sdd_git.connectors.base import ConnectorError

SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"))
_PASSERS = frozenset(("exec", "nohup", "setsid", "command", "time", "builtin"))
_SEPARATORS = frozenset((";", "&&", "||", "|", "&", "(", ")", ";;", "|&", "\n"))
_REDIRECTIONS = re.compile(r"^[0-9]*(<|>|>>|<<|<<<|<>|>&|<&|&>|&>>)$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REFERENCE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_COMPUTED = re.compile(r"\$\(|`|(^|[\s;&|(])eval(\s|$)")
_DEPTH = 8
# Interpreters, and their options whose value is code to run: (short letters, long options).
_INLINE: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    (re.compile(r"(python|pypy)[0-9.]*m?\Z"), "c", ()),
    (re.compile(r"(node|nodejs|bun)\Z"), "ep", ("--eval", "--print")),
    (re.compile(r"perl[0-9.]*\Z"), "eE", ()),
    (re.compile(r"(ruby|lua[0-9.]*|luajit|Rscript|osascript|jshell)\Z"), "e", ("--eval",)),
    (re.compile(r"php[0-9.]*\Z"), "r", ()),
    (re.compile(r"deno\Z"), "", ("eval",)),
)
# What may separate the paths in a value or in code: quotes, brackets, list separators.
_PATH_PIECES = re.compile(r"""[^\s'"`()\[\]{},;:=<>|&*?$]+""")
_DECLARES = frozenset(("export", "declare", "typeset", "readonly", "local"))


def inside(path: Path, product: Path) -> bool:
    try:
        return path.resolve().is_relative_to(product)
    except (OSError, RuntimeError):
        return True  # a loop of links: not trusted


def path_outside(path: str, product: Path) -> str:
    """The child's PATH without its entries inside the product (an activated product `.venv`,
    `./node_modules/.bin`) and without relative ones: a role can write there."""
    kept = [
        entry for entry in path.split(os.pathsep)
        if entry and os.path.isabs(entry) and not inside(Path(entry), product)
    ]  # fmt: skip
    return os.pathsep.join(kept)


class _Refused(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def refuse_product_code(
    name: str,
    key: str,
    product: Path,
    base: str | None,
    program: str,
    args: list[str],
    env: Mapping[str, str],
) -> None:
    """Raise ConnectorError when the command (`program`, found on the child's PATH, and its
    `args`), or a command it passes on, runs a file inside the product. `base`: the folder the
    server starts in (None: its own empty one; its relative words are still read against the
    product, which is the strict reading); `env`: the child's environment, whose variables a
    shell script may name."""
    said = f"{name}: the MCP server's command runs a file inside the product"
    hint = (
        f"install the server outside the product and name its full path in {key}.command, "
        f"and let no variable ({key}.env, `env VAR=...`, `VAR=...` in a script) name a path "
        "inside it; a role can change any file of the product"
    )
    try:
        start = base or str(product)
        for variable, value in env.items():
            _check_value(variable, value, start, product)
        for words, folder, shell in _commands([program, *args], start, env, product, 0, False):
            _check(words, folder, product, env, shell)
    except _Refused as refused:
        raise ConnectorError(
            f"{said} ({refused.what}), where a role can write", hint=hint
        ) from None
    except ValueError as exc:  # a script shlex cannot split (an open quote)
        raise ConnectorError(
            f"{name}: the MCP server's command holds a shell script sdd cannot read ({exc})",
            hint=f"write {key}.command as a list of words, the program first",
        ) from None


def _check(
    words: list[str], folder: str, product: Path, env: Mapping[str, str], shell: bool
) -> None:
    """`shell`: the words come from a shell script, which expands a glob among them."""
    program = words[0]
    if "/" in program:
        found = program if os.path.isabs(program) else str(Path(folder) / program)
    else:
        found = shutil.which(program, path=env.get("PATH", "")) or ""
    if found and inside(Path(found), product):
        raise _Refused(found)
    if program in _DECLARES or Path(program).name in _DECLARES:
        for arg in words[1:]:
            if _ASSIGNMENT.match(arg):
                _check_assignment(arg, folder, product)
    for code in _inline_code(Path(program).name, words[1:]):
        piece = _names_inside(code, folder, product)
        if piece is not None:
            raise _Refused(f"the code it gives {Path(program).name} names {piece}")
    for arg in words[1:]:
        for word in (arg, arg.partition("=")[2]):
            if not word or (word.startswith("-") and word == arg):
                continue
            for candidate in _candidates(word, folder, shell):
                try:
                    is_file = candidate.is_file()
                except OSError:
                    continue
                if is_file and inside(candidate, product):
                    raise _Refused(word)


def _inline_code(program: str, args: list[str]) -> list[str]:
    """The code `program` is given to run inline (`python -c CODE`, `node --eval=CODE`,
    `perl -le CODE`), read strictly: every option of every word, wherever it stands."""
    rule = next((r for r in _INLINE if r[0].match(program)), None)
    if rule is None:
        return []
    _, letters, longs = rule
    code: list[str] = []
    for index, arg in enumerate(args):
        after = args[index + 1] if index + 1 < len(args) else ""
        if arg in longs:
            code.append(after)
        elif arg.startswith("--"):
            code += [arg.partition("=")[2] for long in longs if arg.startswith(long + "=")]
        elif arg.startswith("-") and letters:
            at = next((i for i, ch in enumerate(arg[1:], 1) if ch in letters), None)
            if at is not None:
                code.append(arg[at + 1 :] or after)
    return [c for c in code if c]


def _names_inside(text: str, folder: str, product: Path) -> str | None:
    """The first path `text` names inside the product, or None: an absolute one whether or not
    it exists yet (a role can make it), a relative one (`tools/x`, `./x`) that is there."""
    if re.search(re.escape(str(product)) + r"""(?=$|[/\s'"`()\[\]{},;:=<>|&])""", text):
        return str(product)  # whatever the pieces split it into (a folder named with a space)
    pieces: list[str] = _PATH_PIECES.findall(text.replace("file://", " "))
    for piece in pieces:
        if os.path.isabs(piece):
            if inside(Path(piece), product):
                return piece
        elif "/" in piece or piece.startswith("."):
            candidate = Path(folder) / piece
            try:
                there = candidate.exists()
            except OSError:
                there = True
            if there and inside(candidate, product):
                return piece
    return None


def _check_value(variable: str, value: str, folder: str, product: Path) -> None:
    """A variable may name no path inside the product: any of them can make a program load
    code from where it points (PYTHONPATH, NODE_OPTIONS, BASH_ENV, LD_PRELOAD, PERL5LIB...)."""
    piece = _names_inside(value, folder, product)
    if piece is not None:
        raise _Refused(f"its environment sets {variable} to {piece}")


def _check_assignment(word: str, folder: str, product: Path) -> None:
    variable, _, value = word.partition("=")
    _check_value(variable, value, folder, product)


def _candidates(word: str, folder: str, shell: bool) -> list[Path]:
    path = word if os.path.isabs(word) else os.path.join(folder, word)
    if shell and any(ch in word for ch in "*?["):  # a glob the shell expands
        return [Path(found) for found in glob.glob(path)[:200]]
    return [Path(path)]


def _commands(
    argv: list[str], folder: str, env: Mapping[str, str], product: Path, depth: int, shell: bool
) -> list[tuple[list[str], str, bool]]:
    """`argv` and every command line it passes on, each with the folder it runs in and whether
    a shell script gave its words."""
    if not argv:
        return []
    found = [(argv, folder, shell)]
    if depth >= _DEPTH:
        raise _Refused(f"{shlex.join(argv)[:80]}: wrapped too deeply to read")
    name, rest = Path(argv[0]).name, argv[1:]
    inner: list[str] = []
    if name in SHELLS:
        script = _script_of(rest[1:] if name == "busybox" else rest)
        if script is not None:
            for words, where in _script(script, folder, env, product):
                found += _commands(words, where, env, product, depth + 1, True)
        return found
    if name == "env":
        inner, folder = _after_env(rest, folder, product)
    elif name == "nice":
        inner = _after_options(rest, takes_value=("-n", "--adjustment"))
    elif name == "timeout":
        inner = _after_options(rest, takes_value=("-s", "--signal", "-k", "--kill-after"))[1:]
    elif name == "stdbuf":
        inner = _after_options(rest, takes_value=("-i", "-o", "-e"))
    elif name in _PASSERS:
        inner = _after_options(rest, takes_value=())
    return found + _commands(inner, folder, env, product, depth + 1, shell)


def _after_options(args: list[str], takes_value: tuple[str, ...]) -> list[str]:
    """`args` from the first word that is not an option (or an option's value) on."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            return args[index + 1 :]
        if not arg.startswith("-") or arg == "-":
            return args[index:]
        index += 2 if arg in takes_value else 1
    return []


def _after_env(args: list[str], folder: str, product: Path) -> tuple[list[str], str]:
    """The command `env ARGS` runs, and the folder it runs it in (`-C DIR`)."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in ("-S", "--split-string") or arg.startswith(("-S", "--split-string=")):
            given = args[index + 1] if arg in ("-S", "--split-string") else arg.split("S", 1)[1]
            if arg.startswith("--split-string="):
                given = arg.partition("=")[2]
            after = args[index + 2 :] if arg in ("-S", "--split-string") else args[index + 1 :]
            return _after_env([*shlex.split(given), *after], folder, product)
        if arg in ("-C", "--chdir") or arg.startswith("--chdir="):
            target = args[index + 1] if "=" not in arg else arg.partition("=")[2]
            folder = _moved(folder, target, product)
            index += 1 if "=" in arg else 2
            continue
        if arg in ("-u", "--unset"):
            index += 2
            continue
        if arg == "--":
            index += 1
            continue
        if _ASSIGNMENT.match(arg):
            _check_assignment(arg, folder, product)
        if arg.startswith("-") or _ASSIGNMENT.match(arg):
            index += 1
            continue
        return args[index:], folder
    return [], folder


def _moved(folder: str, target: str, product: Path) -> str:
    """The folder a `cd` (or `env -C`) goes to; refused inside the product, where what runs
    next may load a product file (`python -m x`, `npx x`)."""
    moved = target if os.path.isabs(target) else os.path.join(folder, target)
    if inside(Path(moved), product):
        raise _Refused(f"it changes into {target}")
    return moved


def _script_of(args: list[str]) -> str | None:
    """The script of `sh -c SCRIPT` (and -ec, -lc, ...), or None when there is no -c."""
    seen_c = False
    for arg in args:
        if arg == "--":
            continue
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            seen_c = seen_c or "c" in arg[1:]
            continue
        if arg.startswith("--"):
            continue
        return arg if seen_c else None
    return None


def _script(
    script: str, folder: str, env: Mapping[str, str], product: Path
) -> list[tuple[list[str], str]]:
    """Each simple command of a shell script, with the folder it runs in (`cd` followed), its
    variables read from the child's environment. A `cd` into the product is refused."""
    if _COMPUTED.search(script):
        raise ValueError("it computes what it runs, with $(...), backquotes or eval")
    expanded = _REFERENCE.sub(lambda m: env.get(m.group(1) or m.group(2) or "", ""), script)
    lexer = shlex.shlex(expanded, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    commands: list[tuple[list[str], str]] = []
    words: list[str] = []
    for token in [*lexer, ";"]:
        if token not in _SEPARATORS:
            if not _REDIRECTIONS.match(token):
                words.append(token)
            continue
        while words and _ASSIGNMENT.match(words[0]):
            _check_assignment(words.pop(0), folder, product)
        if words and words[0] == "cd":
            folder = _moved(folder, words[1] if len(words) > 1 else env.get("HOME", "/"), product)
        elif words:
            commands.append((words, folder))
        words = []
    return commands
