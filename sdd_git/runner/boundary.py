"""The approval boundary as data: which consequential calls run without a stop.

`always_allow` matches the same tool with the same canonical inputs (sorted-key JSON of the
arguments without `purpose`), looked up in a set, so 10,000 saved rules cost one hash. `ask_first`
matches a tool and, optionally, some inputs (a string input is a shell-style pattern); it always
stops, and it wins over `always_allow`.

A command-prefix rule (`prefix: [npm, test]`) allows a run_command only where the guard is
certain of the command, a working sandbox holds it, it asks for no network, and the command is
exactly one plain command beginning with those words (shellpolicy/prefix.py). `for_run` holds
the calls the person allowed for this run only (`sdd allow STOP --for-run`): the same tool and
canonical inputs, rebuilt from the run log's decisions on every resume.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any

from sdd_git.roles.profile import Boundary
from sdd_git.shellpolicy.decision import Decision, Verdict

UNMATCHED_INPUT = "purpose"  # the model's own explanation: shown on the stop, never matched


def canonical_inputs(args: dict[str, Any]) -> str:
    inputs = {k: v for k, v in args.items() if k != UNMATCHED_INPUT}
    return json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_ASK_FIRST = Decision("ask_first", verdict=Verdict.ASK)
_NO_SANDBOX = Decision("no sandbox", verdict=Verdict.ASK)
_ALWAYS_ALLOW = Decision("always_allow", verdict=Verdict.ALLOW)
_PREFIX_RULE = Decision("prefix_rule", verdict=Verdict.ALLOW)
_FOR_RUN = Decision("allow_for_run", verdict=Verdict.ALLOW)
# The inputs a prefix rule can allow: the command, and the model's own words about it. A call
# that also asks for the network (or anything else) stops as before.
_PREFIX_INPUTS = frozenset({"command", UNMATCHED_INPUT})
_NOT_ALLOWED = Decision("not allowed", verdict=Verdict.ASK)


class BoundaryIndex:
    def __init__(
        self, boundary: Boundary, for_run: frozenset[tuple[str, str]] = frozenset()
    ) -> None:
        self.allowed = {
            (rule.tool, canonical_inputs(rule.inputs or {}))
            for rule in boundary.always_allow
            if rule.prefix is None
        }
        self.prefixes = [r.prefix for r in boundary.always_allow if r.prefix is not None]
        self.for_run = for_run
        self.ask_first: dict[str, list[dict[str, Any] | None]] = {}
        for rule in boundary.ask_first:
            self.ask_first.setdefault(rule.tool, []).append(rule.inputs)

    def asks_first(self, tool: str, args: dict[str, Any]) -> bool:
        return any(_inputs_match(pattern, args) for pattern in self.ask_first.get(tool, ()))

    def decide(
        self,
        tool: str,
        args: dict[str, Any],
        certain: bool = True,
        runs_code: bool = False,
        sandboxed: bool = True,
    ) -> Decision:
        """Whether a consequential call may run without asking the person.

        A command that runs code, or that the guard could not classify, is matched by a saved
        rule only where a working sandbox holds it; with no sandbox no saved rule runs any
        command at all (the person reads "no sandbox" on every such stop). The decision's
        code is the stop's `because`: "always_allow", "ask_first", "not allowed", "no sandbox"."""
        if self.asks_first(tool, args):
            return _ASK_FIRST
        if tool == "run_command" and not sandboxed:
            return _NO_SANDBOX
        if (not certain or runs_code) and not sandboxed:
            return _NO_SANDBOX
        key = (tool, canonical_inputs(args))
        if key in self.allowed:
            return _ALWAYS_ALLOW
        if key in self.for_run:
            return _FOR_RUN
        if tool == "run_command" and certain and self._prefix_allows(args):
            return _PREFIX_RULE
        return _NOT_ALLOWED

    def _prefix_allows(self, args: dict[str, Any]) -> bool:
        if not self.prefixes or not set(args) <= _PREFIX_INPUTS:
            return False
        command = args.get("command")
        if not isinstance(command, str):
            return False
        from sdd_git.shellpolicy.prefix import matches_prefix

        return any(
            matches_prefix(command, words) and not self._may_reach_ask_first(words)
            for words in self.prefixes
        )

    def _may_reach_ask_first(self, words: tuple[str, ...]) -> bool:
        """Whether a command this prefix allows could be one her ask-first rules name. Her
        ask-first pattern is text (`npm publish*`), and a prefix rule allows any spelling of the
        words after its own: `npm  publish`, `npm 'publish'`, `npm pub` (npm's abbreviation) or
        `npm -q publish` would slip past the pattern. So a prefix rule holds only where, at one
        of its words, the pattern names another plain word for certain (`npm test` against
        `npm publish*`); else the call stops as before (ask first wins)."""
        for pattern in self.ask_first.get("run_command", ()):
            command = (pattern or {}).get("command")
            if isinstance(command, str) and not _disjoint(words, command):
                return True
        return False


_GLOB = frozenset("*?[]\\")


def _disjoint(words: tuple[str, ...], pattern: str) -> bool:
    """Whether no command beginning with the literal `words` can match the ask-first text
    `pattern`: at one word, before any glob of the pattern (a glob may span words), the
    pattern's text cannot begin the rule's word, and neither is an option (an option may stand
    before the word her pattern names)."""
    said = pattern.split()
    for at, word in enumerate(words):
        if at >= len(said):
            # A pattern with no glob matches its own text only, which has fewer words.
            return not any(char in _GLOB for char in pattern)
        theirs = said[at]
        if at == 0:
            theirs = theirs.rsplit("/", 1)[-1]  # `/usr/bin/npm publish*` names npm too
        head = theirs
        for at_glob, char in enumerate(theirs):
            if char in _GLOB:
                head = theirs[:at_glob]
                break
        if head == theirs == word:
            continue
        # An option may stand before her word; `publish*` may begin `publish`: not disjoint.
        return not (theirs.startswith("-") or word.startswith("-") or word.startswith(head))
    return False


def _inputs_match(pattern: dict[str, Any] | None, args: dict[str, Any]) -> bool:
    if not pattern:
        return True
    for key, expected in pattern.items():
        actual = args.get(key)
        if isinstance(expected, str) and isinstance(actual, str):
            if not fnmatch.fnmatchcase(actual, expected):
                return False
        elif actual != expected:
            return False
    return True
