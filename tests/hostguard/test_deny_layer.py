"""The second layer alone: the spellings of the table through the deny rules `sdd agents install
claude` writes, under Claude Code's documented rule semantics, with no hook.

Bash rules (code.claude.com/docs/en/permissions): `Bash(SPEC)` matches a command when SPEC, with
`*` as any sequence of characters (spaces too, and none), matches the whole command; the rest is
literal. The matcher below applies that to the command as the agent wrote it: it knows nothing of
shell syntax, which is why chains, wrappers and quoting walk around it.

Edit rules: gitignore patterns, `/PATH` from the project root, `**` any folders, `*` within one
name. The docs do not say whether Claude Code resolves a link or folds case before it matches, so
the matcher takes the path as written (`..` folded away) and matches case-sensitively: a link into
the record and `MEMORY/` are counted as missed.

The table records what the layer catches; this test keeps that record true, and docs/guard.md
says in words what it misses."""

from __future__ import annotations

import os
import re

import pytest

from sdd_git.hostclaude import deny_rules
from tests.hostguard.guardrun import DENY
from tests.hostguard.spellings import ALL, Spelling

BASH_RULES = tuple(rule[5:-1] for rule in deny_rules() if rule.startswith("Bash("))


def bash_rule_matches(spec: str, command: str) -> bool:
    pattern = "".join(".*" if ch == "*" else re.escape(ch) for ch in spec)
    return re.fullmatch(pattern, command, re.S) is not None


def edit_rule_matches(rule: str, path: str) -> bool:
    """`Edit(/PATTERN)` against a path relative to the project root."""
    assert rule.startswith("Edit(/") and rule.endswith(")"), rule
    pattern = rule[6:-1]
    regex = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            regex, index = regex + "(?:.*/)?", index + 3
        elif pattern.startswith("**", index):
            regex, index = regex + ".*", index + 2
        elif pattern[index] == "*":
            regex, index = regex + "[^/]*", index + 1
        else:
            regex, index = regex + re.escape(pattern[index]), index + 1
    return re.fullmatch(regex, os.path.normpath(path)) is not None


@pytest.mark.parametrize("spelling", ALL, ids=[s.id for s in ALL])
def test_the_deny_rules_catch_what_the_table_records(spelling: Spelling) -> None:
    caught = any(bash_rule_matches(spec, spelling.command) for spec in BASH_RULES)
    assert caught == spelling.rules, spelling.command


def test_the_deny_rules_never_refuse_what_the_guard_allows() -> None:
    allowed = [s.command for s in ALL if s.expect != DENY]
    assert [c for c in allowed if any(bash_rule_matches(r, c) for r in BASH_RULES)] == []


def test_the_deny_layer_alone_misses_most_routes_which_is_why_the_hook_is_the_wall() -> None:
    refused = [s for s in ALL if s.expect == DENY]
    caught = [s for s in refused if s.rules]
    # Every person command in every global-option spelling is caught...
    assert {s.id for s in caught} >= {"plain", "-C DIR", "-CDIR", "--no-agent", "python -m sdd_git"}
    # ...and every chain, wrapper, quoting trick and shell write is not.
    assert {"&& chain", "cd prefix", "bash -c", "env", "quoted name", "redirect"} <= {
        s.id for s in refused if not s.rules
    }
    assert len(caught) < len(refused) / 2


def test_the_matcher_follows_the_documented_examples() -> None:
    # From the permissions page: `Bash(ls *)` matches `ls -la` but not `lsof`; `Bash(* --version)`
    # matches `node --version`; `Bash(npm run build)` matches only itself.
    assert bash_rule_matches("ls *", "ls -la") and not bash_rule_matches("ls *", "lsof")
    assert bash_rule_matches("* --version", "node --version")
    assert bash_rule_matches("npm run build", "npm run build")
    assert not bash_rule_matches("npm run build", "npm run build:dev")
    assert edit_rule_matches("Edit(/src/**)", "src/a/b.ts")
    assert not edit_rule_matches("Edit(/src/**)", "lib/src/b.ts")
    assert edit_rule_matches("Edit(/**/CLAUDE.md)", "CLAUDE.md")
    assert edit_rule_matches("Edit(/**/CLAUDE.md)", "a/b/CLAUDE.md")
