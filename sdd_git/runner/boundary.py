"""The approval boundary as data: which consequential calls run without a stop.

`always_allow` matches the same tool with the same canonical inputs (sorted-key JSON of the
arguments without `purpose`), looked up in a set, so 10,000 saved rules cost one hash. `ask_first`
matches a tool and, optionally, some inputs (a string input is a shell-style pattern); it always
stops, and it wins over `always_allow`.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from typing import Any

from sdd_git.roles.profile import Boundary

UNMATCHED_INPUT = "purpose"  # the model's own explanation: shown on the stop, never matched


def canonical_inputs(args: dict[str, Any]) -> str:
    inputs = {k: v for k, v in args.items() if k != UNMATCHED_INPUT}
    return json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Verdict:
    run: bool
    reason: str  # "always_allow", "ask_first", "not allowed", "no sandbox"


class BoundaryIndex:
    def __init__(self, boundary: Boundary) -> None:
        self.allowed = {
            (rule.tool, canonical_inputs(rule.inputs or {})) for rule in boundary.always_allow
        }
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
    ) -> Verdict:
        """Whether a consequential call may run without asking the person.

        A command that runs code, or that the guard could not classify, is matched by a saved
        rule only where a working sandbox holds it; with no sandbox no saved rule runs any
        command at all (the person reads "no sandbox" on every such stop)."""
        if self.asks_first(tool, args):
            return Verdict(False, "ask_first")
        if tool == "run_command" and not sandboxed:
            return Verdict(False, "no sandbox")
        if (not certain or runs_code) and not sandboxed:
            return Verdict(False, "no sandbox")
        if (tool, canonical_inputs(args)) in self.allowed:
            return Verdict(True, "always_allow")
        return Verdict(False, "not allowed")


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
