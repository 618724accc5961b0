"""Which files a git pathspec names, checked against the protected paths without running git.

A pathspec is not a path. Git matches a word that holds `*`, `?`, `[` or `\\` as a pattern over
the whole path (without `:(glob)`, `*` crosses `/`: `'*.yaml'` is every YAML file in every
folder, `memory/`'s too); a word that starts with `:` carries magic (`:(top)` and `:/` from the
repository's top, `:(icase)` in any case, `:(literal)`, `:(glob)`, `:!`/`:^`/`:(exclude)` to leave
files out) or none (`:memory/x` is `memory/x`). So a pattern is matched here against every
protected path it could name, as git would match it from the command's folder (or the top):
each protected folder and what is under it, each rule file's name in any folder, `.env*`. Case is
ignored (a case-insensitive file system, `:(icase)`). An exclusion narrows nothing here: git
would take the rest of the whole tree for a pathspec of exclusions alone.

Git itself is not asked (`git ls-files` would read configuration the agent may have written, and
costs a process): the match is pure, and errs towards "could match"."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from typing import NamedTuple

from sdd_git.hostguard.call import Answer, ask, deny

GLOB_CHARACTERS = "*?[\\"
# A patch or a pathspec file git is given is read whole, or not trusted: past a limit, what the
# guard did not read could name the record.
MAX_FILE = 4_000_000
MAX_SPECS = 10_000
_NAMED_CLASSES: dict[str, Callable[[str], bool]] = {
    "alnum": str.isalnum, "alpha": str.isalpha, "blank": lambda c: c in " \t",
    "cntrl": lambda c: ord(c) < 32 or ord(c) == 127, "digit": str.isdigit,
    "graph": lambda c: c.isprintable() and not c.isspace(), "lower": str.islower,
    "print": str.isprintable, "punct": lambda c: c.isprintable() and not c.isalnum()
    and not c.isspace(), "space": str.isspace, "upper": str.isupper,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
}  # fmt: skip


def read_small(path: str) -> str | None:
    """A regular file's text, when it is one and small enough to read whole; else None. A FIFO
    would hold the guard until the host's timeout, and a timed-out hook lets the call run."""
    import stat

    try:
        with open(path, "rb", opener=_no_block) as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_FILE:
                return None
            return handle.read(MAX_FILE + 1).decode("utf-8", errors="replace")
    except OSError:
        return None


def _no_block(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK)


def git_top(cwd: str) -> str | None:
    """The top of the work tree `cwd` is in, as git finds it (a `.git` folder or file)."""
    folder = os.path.realpath(cwd)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def specs_from_file(name: str, nul: bool, cwd: str) -> list[str] | Answer:
    """`--pathspec-from-file=NAME`: its pathspecs, one a line (NUL-separated with
    `--pathspec-file-nul`), a line in double quotes unquoted as git does."""
    import codecs

    if name == "-":
        return ask("git reads its pathspecs from its input, which sdd guard cannot read")
    text = read_small(os.path.join(cwd, name))
    if text is None:
        return ask(f"sdd guard cannot read {name}, the pathspecs git is given, to check them")
    lines = text.split("\0") if nul else text.splitlines()
    if len(lines) > MAX_SPECS:
        return ask(f"{name} holds more pathspecs than sdd guard checks")
    specs: list[str] = []
    for line in lines:
        if not nul and len(line) > 1 and line[0] == line[-1] == '"':
            raw = codecs.escape_decode(line[1:-1].encode("utf-8"))[0]
            line = bytes(raw).decode("utf-8", errors="replace")
        specs.append(line)
    return specs if not nul or specs[-1:] != [""] else specs[:-1]


class Spec:
    """One pathspec, its magic read."""

    def __init__(self, word: str, flags: frozenset[str]) -> None:
        self.top = self.exclude = self.unknown = False
        self.icase = "--icase-pathspecs" in flags
        self.literal = "--noglob-pathspecs" in flags
        self.glob = "--glob-pathspecs" in flags
        self.pattern = word
        if "--literal-pathspecs" in flags or not word.startswith(":"):
            self.literal = self.literal or "--literal-pathspecs" in flags
            return
        if word.startswith(":("):
            end = word.find(")")
            if end < 0:
                self.unknown = True
                return
            for magic in word[2:end].split(","):
                self._long(magic)
            self.pattern = word[end + 1 :]
            return
        at = 1
        while at < len(word) and word[at] in "/!^":
            self.top = self.top or word[at] == "/"
            self.exclude = self.exclude or word[at] in "!^"
            at += 1
        self.pattern = word[at + 1 :] if word[at : at + 1] == ":" else word[at:]

    def _long(self, magic: str) -> None:
        if magic == "top" or magic.startswith("prefix:"):
            self.top = True
        elif magic == "exclude":
            self.exclude = True
        elif magic == "icase":
            self.icase = True
        elif magic == "literal":
            self.literal, self.glob = True, False
        elif magic == "glob":
            self.glob, self.literal = True, False
        elif not magic.startswith("attr:"):  # attributes only narrow what the pattern names
            self.unknown = True

    @property
    def pattern_like(self) -> bool:
        return not self.literal and any(c in self.pattern for c in GLOB_CHARACTERS)


Items = tuple[tuple[str, str, str], ...]  # a bracket's ("r", low, high) and ("n", class, "")


class Step(NamedTuple):
    kind: str  # "c" a character, "?" any one, "[" one of a bracket's, "*" any run of them
    char: str = ""  # the character; for "*", "/" when the run may cross folders
    negated: bool = False
    items: Items = ()


class Glob:
    """A wildmatch pattern as an automaton over the path's characters, so that the guard can ask
    whether it could match some path that starts (or ends) a given way. Case is ignored."""

    def __init__(self, literal: str, pattern: str, pathname: bool) -> None:
        self.steps = [Step("c", c.lower()) for c in literal]
        self.skips: dict[int, int] = {}  # `**/`: may match no folder at all
        self.pathname = pathname
        at = 0
        while at < len(pattern):
            char = pattern[at]
            if char == "\\" and at + 1 < len(pattern):
                self.steps.append(Step("c", pattern[at + 1].lower()))
                at += 2
            elif char == "?":
                self.steps.append(Step("?"))
                at += 1
            elif char == "[":
                at = self._bracket(pattern, at)
            elif char == "*":
                at = self._stars(pattern, at)
            else:
                self.steps.append(Step("c", char.lower()))
                at += 1

    def _stars(self, pattern: str, at: int) -> int:
        end = at
        while end < len(pattern) and pattern[end] == "*":
            end += 1
        boundary = (at == 0 or pattern[at - 1] == "/") and pattern[end : end + 1] in ("", "/")
        if end - at >= 2 and boundary:
            self.steps.append(Step("*", "/"))
            if pattern[end : end + 1] == "/":
                self.skips[len(self.steps) - 1] = len(self.steps) + 1
                self.steps.append(Step("c", "/"))
                end += 1
            return end
        self.steps.append(Step("*", "" if self.pathname else "/"))
        return end

    def _bracket(self, pattern: str, at: int) -> int:
        items: list[tuple[str, str, str]] = []  # ("r", low, high) or ("n", class name, "")
        index = at + 1
        negated = pattern[index : index + 1] in ("!", "^")
        index += negated
        first = True
        while index < len(pattern) and (first or pattern[index] != "]"):
            first = False
            char = pattern[index]
            if pattern.startswith("[:", index) and ":]" in pattern[index + 2 :]:
                close = pattern.index(":]", index + 2)
                items.append(("n", pattern[index + 2 : close], ""))
                index = close + 2
                continue
            if char == "\\" and index + 1 < len(pattern):
                index += 1
                char = pattern[index]
            if pattern[index + 1 : index + 2] == "-" and pattern[index + 2 : index + 3] not in (
                "",
                "]",
            ):
                high = pattern[index + 2]
                if high == "\\" and index + 3 < len(pattern):
                    high, index = pattern[index + 3], index + 1
                items.append(("r", char, high))
                index += 3
            else:
                items.append(("r", char, char))
                index += 1
        if index >= len(pattern):  # no closing `]`: git matches nothing; `[` is read as itself
            self.steps.append(Step("c", "["))
            return at + 1
        self.steps.append(Step("[", "", negated, tuple(items)))
        return index + 1

    def _takes(self, step: Step, char: str) -> bool:
        if step.kind == "c":
            return char.lower() == step.char
        if char == "/" and self.pathname and step.kind in ("?", "["):
            return False
        if step.kind == "*":
            return char != "/" or step.char == "/"
        if step.kind == "?":
            return True
        variants = {char, char.lower(), char.upper()}
        return any(_in_class(step.items, c) != step.negated for c in variants)

    def start(self) -> set[int]:
        return self._closure({0})

    def everywhere(self) -> set[int]:
        """Every state some input reaches (each step takes some character)."""
        return set(range(len(self.steps) + 1))

    def _closure(self, states: set[int]) -> set[int]:
        stack, seen = list(states), set(states)
        while stack:
            state = stack.pop()
            following = []
            if state < len(self.steps) and self.steps[state].kind == "*":
                following.append(state + 1)
            if state in self.skips:
                following.append(self.skips[state])
            for other in following:
                if other not in seen:
                    seen.add(other)
                    stack.append(other)
        return seen

    def read(self, states: set[int], text: str) -> set[int]:
        for char in text:
            moved: set[int] = set()
            for state in states:
                if state < len(self.steps) and self._takes(self.steps[state], char):
                    moved.add(state if self.steps[state].kind == "*" else state + 1)
            states = self._closure(moved)
            if not states:
                break
        return states

    def done(self, states: set[int]) -> bool:
        return len(self.steps) in states

    def could_match_within(self, folder: str) -> bool:
        """Some path the pattern matches is `folder` or lies in it."""
        states = self.read(self.start(), folder)
        return self.done(states) or bool(self.read(states, "/"))

    def could_match_starting(self, text: str) -> bool:
        return bool(self.read(self.start(), text))

    def could_match_under(self, name: str) -> bool:
        """Some path the pattern matches lies in a folder of this name, anywhere."""
        states = self.read(self.everywhere(), "/" + name.lower())
        return self.done(states) or bool(self.read(states, "/"))

    def could_match_named(self, name: str) -> bool:
        """Some path the pattern matches is a file of this name, in any folder."""
        return self.done(self.read(self.everywhere(), "/" + name.lower()))


def _in_class(items: Items, char: str) -> bool:
    for kind, low, high in items:
        if kind == "r" and low <= char <= high:
            return True
        if kind == "n":
            test = _NAMED_CLASSES.get(low)
            if test is None or test(char):  # a class git does not know: it could be anything
                return True
    return False


def pathspecs_answer(
    sub: str,
    words: list[str],
    cwd: str,
    flags: frozenset[str],
    whole: str,
    revision: bool = False,
) -> Answer | None:
    """The answer for the pathspecs `git SUB` is given in `cwd`. `whole` is what a pathspec that
    takes the whole tree gets ("ask": it rewrites her uncommitted work; "deny": it deletes it).
    `revision`: the first word may be a commit rather than a pathspec (checkout's); it is checked
    as a path all the same, but does not count as what the exclusions leave out of."""
    from sdd_git.hostguard.paths import write_problem

    specs = [Spec(word, flags) for word in words]
    if any(spec.unknown for spec in specs):
        return ask(f"`git {sub}` is given pathspec magic sdd guard does not know")
    positive = [(spec, spec.pattern or ".") for spec in specs if not spec.exclude]
    counted = positive[1:] if revision and specs and not specs[0].exclude else positive
    if any(spec.exclude for spec in specs) and not counted:
        # Exclusions alone: git takes the rest of the whole tree.
        positive.append((Spec(":/", frozenset()), " ".join(words)))
    top: str | None = None
    for spec, shown in positive:
        base = cwd
        if spec.top:
            top = top or git_top(cwd) or cwd
            base = top
        if spec.pattern_like or spec.icase:
            found = _pattern_problem(sub, spec, base, whole)
            if found is not None:
                return found
            continue
        path = os.path.join(base, spec.pattern) if spec.top else spec.pattern or "."
        problem = write_problem(cwd, path)
        if problem is not None:
            return deny(f"`git {sub}` would write {problem}")
        if write_problem(cwd, path, whole_tree=True) is not None:
            return _whole(sub, shown, whole)
    return None


def _whole(sub: str, shown: str, whole: str) -> Answer:
    if whole == "deny":
        return deny(
            f"`git {sub} {shown}` deletes a folder that holds the person's record and sdd's "
            "files; name the files or folders to remove"
        )
    return ask(
        f"`git {sub} {shown}` rewrites files across a folder that holds the person's record, "
        "and would throw away her uncommitted changes there"
    )


def _pattern_problem(sub: str, spec: Spec, base: str, whole: str) -> Answer | None:
    """A pattern (or a path in any case): refused when it could match a protected path."""
    real = os.path.realpath(base)
    full = posixpath.normpath(posixpath.join(real, spec.pattern))
    if spec.pattern_like:
        # Git reads the command's folder literally, whatever it holds, and the pattern (what is
        # left of it past its own `..`) as a pattern.
        common = posixpath.commonpath([full, real])
        literal = common if common == "/" or len(full) == len(common) else common + "/"
        glob = Glob(literal, full[len(literal) :], spec.glob)
    else:
        glob = Glob(full, "", spec.glob)
    shown = f"`git {sub}` is given the pathspec `{spec.pattern}`"
    folders, names, roots = _protected(full)
    for folder in folders:
        if glob.could_match_within(folder.lower()):
            return deny(
                f"{shown}, which could match {_shown(folder, roots)}: the person's record, sdd's "
                "or another agent's files, where no agent writes. Name the files plainly "
                "(src/*.py), outside those folders"
            )
        if not spec.pattern_like and _within(folder.lower(), full.lower()):
            return _whole(sub, spec.pattern or ".", whole)
    for root in roots:
        if glob.could_match_starting(posixpath.join(root, ".env").lower()):
            return deny(f"{shown}, which could match the product's .env files, its secrets")
    for name in names:
        if glob.could_match_named(name):
            return deny(
                f"{shown}, which could match a file named {name}: it gives an agent or git its "
                "rules, and only the person changes it"
            )
    if not roots and any(glob.could_match_under(n) for n in ("memory", "changes", ".sdd")):
        return ask(
            f"{shown}, which could match the record of an sdd product below this folder; sdd "
            "guard cannot tell"
        )
    return None


def _within(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip("/") + "/")


def _shown(folder: str, roots: list[str]) -> str:
    for root in roots:
        if folder.startswith(root.rstrip("/") + "/"):
            return folder[len(root.rstrip("/")) + 1 :] + "/"
    return folder + "/"


def _protected(full: str) -> tuple[list[str], list[str], list[str]]:
    """The protected folders (absolute, resolved) a pattern under `full`'s folders could reach,
    the protected file names, and the sdd roots they were taken from."""
    from sdd_git.hostguard import paths
    from sdd_git.sandbox.tables import PROTECTED_FILE_NAMES, RECORD_FOLDERS, RULE_FOLDERS

    roots = paths.roots_for(full)
    folders: list[str] = []
    for root in roots:
        folders += [posixpath.join(root, name) for name in (*RECORD_FOLDERS, *RULE_FOLDERS)]
        folders += _product_folders(root)
    folders += paths.guarded_places()
    return folders, [name.lower() for name in PROTECTED_FILE_NAMES], roots


def _product_folders(root: str) -> list[str]:
    """What else the rules protect in this product: the Python environment sdd runs from when it
    lies there, what the rule folders' links lead to, and the hooks folder git is told of."""
    from pathlib import Path

    from sdd_git.sandbox.policy import hooks_folder, python_environments, rule_link_targets

    found = [str(path) for path in python_environments(Path(root))]
    found += [str(path) for path in rule_link_targets(Path(root))]
    from sdd_git.hostguard.paths import may_name_hooks

    hooks = hooks_folder(Path(root)) if may_name_hooks(root) else None
    if hooks:
        found.append(posixpath.join(root, hooks))
    return found
