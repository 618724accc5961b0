"""A command-prefix rule as a role file says it: read and checked whole when the file is read;
a rule with any fault is refused with the key and the example named, and the file then does
not load (a broken rule never allows anything)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.roles.profile import Rule, rule_words
from sdd_git.roles.rolefile import RoleFileError, parse_role

HEAD = "---\nrole: b\njob: Build\nlevel: 1\ntoolPolicy.delegation: deny\nboundary:\n"


def _role(rules: str) -> str:
    return HEAD + rules + "---\nBuild.\n"


def test_a_prefix_rule_with_good_examples_loads() -> None:
    text = _role(
        "  always_allow:\n"
        "    - {tool: run_command, prefix: [npm, test], match: ['npm test', 'npm test -- -u'],"
        " not_match: ['npm testing', 'npm run test'], saved: {at: '2026-12-07T10:00:00Z',"
        " stop: stop-abc123}}\n"
    )
    (rule,) = parse_role(text, Path("ROLE.md")).profile.boundary.always_allow
    assert rule == Rule(
        "run_command",
        None,
        ("npm", "test"),
        ("npm test", "npm test -- -u"),
        ("npm testing", "npm run test"),
        {"at": "2026-12-07T10:00:00Z", "stop": "stop-abc123"},
    )
    assert Rule.from_dict(rule.as_dict()) == rule  # as the role cache keeps it
    assert 'beginning with "npm test"' in rule_words(rule)


@pytest.mark.parametrize(
    ("rule", "key", "words"),
    [
        (
            "{tool: run_command, prefix: [npm, test], match: ['npm run test']}",
            "boundary.always_allow.0.match",
            "the example 'npm run test' is not matched",
        ),
        (
            "{tool: run_command, prefix: [npm, test], match: ['npm test'],"
            " not_match: ['npm test -u']}",
            "boundary.always_allow.0.not_match",
            "the example 'npm test -u' is matched",
        ),
        (
            "{tool: run_command, prefix: [npm, test]}",
            "boundary.always_allow.0.match",
            "needs at least one match example",
        ),
        (
            "{tool: run_command, prefix: [], match: ['x']}",
            "boundary.always_allow.0.prefix",
            "at least",
        ),
        (
            "{tool: run_command, prefix: ['./pytest'], match: ['./pytest']}",
            "boundary.always_allow.0.prefix",
            "not a plain program name",
        ),
        (
            "{tool: run_command, prefix: [pytest, '$(x)'], match: ['pytest']}",
            "boundary.always_allow.0.prefix",
            "not a plain word",
        ),
        (
            "{tool: run_command, prefix: [bash], match: ['bash x.sh']}",
            "boundary.always_allow.0.prefix",
            "runs other commands",
        ),
        (
            "{tool: write_file, prefix: [x], match: ['x']}",
            "boundary.always_allow.0.prefix",
            "only a run_command rule",
        ),
        (
            "{tool: run_command, prefix: [ls], inputs: {command: ls}, match: ['ls']}",
            "boundary.always_allow.0",
            "a prefix or inputs, not both",
        ),
        (
            "{tool: run_command, inputs: {command: ls}, match: ['ls']}",
            "boundary.always_allow.0",
            "belong to a prefix rule",
        ),
    ],
)
def test_a_faulty_prefix_rule_is_refused_naming_its_key(rule: str, key: str, words: str) -> None:
    with pytest.raises(RoleFileError) as raised:
        parse_role(_role(f"  always_allow:\n    - {rule}\n"), Path("ROLE.md"))
    (problem,) = raised.value.problems
    assert problem.key == key and words in problem.message
    assert problem.line == 8


def test_ask_first_takes_no_prefix() -> None:
    with pytest.raises(RoleFileError) as raised:
        parse_role(
            _role("  ask_first:\n    - {tool: run_command, prefix: [git, push]}\n"),
            Path("ROLE.md"),
        )
    assert "a prefix belongs to an always_allow rule" in str(raised.value)
