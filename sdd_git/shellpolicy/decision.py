"""One ordered decision on an action a role asks for: allow < ask < forbid.

The guard, the boundary and the connectors' operation table each answer in it, and dispatch
takes the strictest: what no role may do by any route is never made less by a saved rule."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Verdict(IntEnum):
    ALLOW = 0  # runs without a stop
    ASK = 1  # stops for the person
    FORBID = 2  # never runs, whoever asks


@dataclass(frozen=True)
class Decision:
    code: str = ""  # why, as one word the log keeps: "always_allow", "ask_first", "not_offered"...
    message: str = ""  # why, in words for the model and the log
    verdict: Verdict = Verdict.ALLOW
    certain: bool = True  # False: the call always stops and no saved rule may allow it
    # True: a shell command that runs code; no saved rule allows it unless a sandbox holds it.
    runs_code: bool = False
    reasons: tuple[str, ...] = ()  # why it runs code, in plain words, for the stop

    @property
    def allowed(self) -> bool:
        return self.verdict is Verdict.ALLOW

    @property
    def forbidden(self) -> bool:
        return self.verdict is Verdict.FORBID


def strictest(first: Decision, *others: Decision) -> Decision:
    """The strictest of the decisions; of equal ones, the first."""
    return max((first, *others), key=lambda decision: decision.verdict)
