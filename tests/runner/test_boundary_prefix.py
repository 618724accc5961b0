"""Command-prefix rules against the attack corpus of shell spellings: with `[pytest]`,
`[npm, test]` and `[git, status]` rules, the guard and the boundary together allow a command
without a stop only where it is, plainly, one command of that program beginning with those
words; every corpus spelling, alone and with each rule's words put in front of it, is tried.

The oracle here is written apart from `shellpolicy/prefix.py`, on the text alone: the command's
first words are the rule's, and it holds none of the characters through which a shell does
anything but run one program with literal arguments."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from sdd_git.roles.profile import Boundary, Rule
from sdd_git.root import Root
from sdd_git.runner import guard
from sdd_git.runner.boundary import BoundaryIndex
from sdd_git.shellpolicy.decision import strictest
from sdd_git.tools.catalog import TOOL_CLASSES
from tests.attack.routes import ROUTES as ATTACK_ROUTES
from tests.hostguard.spellings import ALL as SPELLINGS
from tests.shellpolicy.routes import ROUTES as POLICY_ROUTES

PREFIXES = (("pytest",), ("npm", "test"), ("git", "status"))
RULES = BoundaryIndex(
    Boundary(always_allow=tuple(Rule("run_command", None, p, (" ".join(p),)) for p in PREFIXES))
)
TRICKS = (
    "pytest;sdd next",
    "pytest $(x)",
    "pytest `x`",
    "pytest && rm -rf .",
    "pytest|sh",
    "PYTHONPATH=x pytest",
    "./pytest",
    "pytest\\ x",
    '"pytest"x',
    '"pytest"',
    "'pytest'",
    "pytest >.git/x",
    "pytest >>memory/decisions.yaml",
    "pytest 2>x",
    "pytest &>x",
    "pytest <x",
    "pytest <<EOF\nx\nEOF",
    "pytest &",
    "pytest & sdd next",
    "pytest\nsdd next",
    "pytest\\\nsdd",
    "pytest # x",
    "(pytest)",
    "{ pytest; }",
    "! pytest",
    "pytest || sdd next",
    "pytest $HOME",
    "pytest ${x}",
    "pytest $'x'",
    'pytest "$(sdd next)"',
    "pytest ~",
    "pytest ~/x",
    "pytest a=~",
    "pytest --x=~/y",
    "pytest b:~",
    "git status HEAD~1",
    "pytest *",
    "pytest {a,b}",
    "pytest <(sdd next)",
    "pytest >(sdd next)",
    "/tmp/pytest",
    "../bin/pytest",
    "py\\test",
    "pyt''est",
    "npm  test",  # two spaces: still the words npm, test; allowed, as plainly the rule's
    "npm test;sdd next",
    "npm testing",
    "npm run test",
    "npm 'test'",
    "npm te\\st",
    "git status --porcelain | sh",
    "git -c core.fsmonitor=x status",
    "git status $(sdd next)",
    "exec pytest",
    "command pytest",
    "env pytest",
    "time pytest",
    "pytest\x00",
    "pytest\r\nsdd next",
    "pytest -p evilplugin",  # plainly the rule's: what the plugin does is the sandbox's to hold
)
_UNQUOTED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:@%+=/-! ")


def _oracle(command: str) -> bool:
    """Plainly one of the rules' commands, by the text alone: outside quotes only letters,
    digits, spaces, harmless punctuation, a backslash before any character but a newline, `{}`
    and a `#` inside a word; inside single quotes anything but a newline; inside double quotes
    no `$`, backquote or newline; at the end at most a descriptor copy (`2>&1`, `>&2`); and the
    first words unquoted and the rule's own."""
    text = command.strip(" ")
    for copy in (" 2>&1", " >&2", " 1>&2"):
        text = text.removesuffix(copy)
    if "\n" in text or "\r" in text or "\x00" in text or text.startswith("!"):
        return False
    quote, index = "", 0
    while index < len(text):
        char = text[index]
        if quote == "'":
            quote = "" if char == "'" else quote
        elif quote == '"':
            if char in "$`":
                return False
            if char == "\\":
                index += 1
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char == "\\":
            index += 1  # the next character, whatever it is, is a literal
        elif text.startswith("{}", index):
            index += 1
        elif char == "#" and index and text[index - 1] != " ":
            pass
        elif char == "~" and index and text[index - 1].isalnum():
            pass  # HEAD~1: bash expands a tilde only at a word's start or after = and :
        elif char not in _UNQUOTED:
            return False
        index += 1
    if quote:
        return False
    words = [w for w in text.split(" ") if w]
    return any(words[: len(p)] == list(p) for p in PREFIXES)


def _corpus() -> list[str]:
    found: set[str] = set(TRICKS)
    for route in POLICY_ROUTES:
        if route.tool == "run_command":
            found.update(route.must_match)
            found.update(route.must_not_match)
    found.update(s.command for s in SPELLINGS)
    for attack in ATTACK_ROUTES:
        for call in attack.calls:
            command = (call.get("args") or {}).get("command") if isinstance(call, dict) else None
            if call.get("tool") == "run_command" and isinstance(command, str):
                found.add(command)
    spliced = {
        f"{' '.join(p)}{sep}{c}"
        for p, c, sep in itertools.product(PREFIXES, sorted(found), (" ", ";"))
    }
    return sorted(found | spliced)


CORPUS = _corpus()


def test_the_corpus_is_the_attack_corpus_worth_the_name() -> None:
    assert len(CORPUS) > 2000


def _decide(product: Path, command: str, sandboxed: bool = True) -> Any:
    args = {"command": command, "purpose": "p"}
    verdict = guard.check("run_command", args, product, tuple(TOOL_CLASSES))
    return strictest(
        verdict,
        RULES.decide(
            "run_command",
            args,
            certain=verdict.certain,
            runs_code=verdict.runs_code,
            sandboxed=sandboxed,
        ),
    )


def test_no_corpus_spelling_is_allowed_unless_it_is_plainly_the_rules(root: Root) -> None:
    allowed = [c for c in CORPUS if _decide(root.path, c).allowed]
    assert [c for c in allowed if not _oracle(c)] == []
    # And the rules do allow what they name: the test above is not passing on an empty list.
    assert "pytest -p evilplugin" in allowed and "git status" in allowed
    assert len(allowed) > 50


def test_with_no_working_sandbox_a_prefix_rule_allows_nothing() -> None:
    unboxed = [
        c for c in CORPUS if RULES.decide("run_command", {"command": c}, sandboxed=False).allowed
    ]
    assert unboxed == []


@pytest.mark.parametrize("command", ["pytest", "pytest -q tests", "npm test -- -u", "git status"])
def test_a_plain_match_is_allowed(root: Root, command: str) -> None:
    decided = _decide(root.path, command)
    assert decided.allowed
    assert RULES.decide("run_command", {"command": command}).code == "prefix_rule"


def test_a_prefix_rule_never_allows_another_input_than_the_command(root: Root) -> None:
    args = {"command": "pytest", "network": True}
    assert not RULES.decide("run_command", args).allowed
