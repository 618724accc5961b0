"""The one ordered decision: allow < ask < forbid, and the strictest wins."""

from __future__ import annotations

from sdd_git.roles.profile import Boundary, Rule
from sdd_git.runner import guard
from sdd_git.runner.boundary import BoundaryIndex
from sdd_git.shellpolicy.decision import Decision, Verdict, strictest


def test_allow_is_below_ask_is_below_forbid() -> None:
    assert Verdict.ALLOW < Verdict.ASK < Verdict.FORBID


def test_the_strictest_wins_and_of_equals_the_first() -> None:
    allow, ask = Decision("always_allow"), Decision("ask_first", verdict=Verdict.ASK)
    forbid = guard.Rejection("protected_path", "no")
    assert strictest(allow, ask) is ask
    assert strictest(ask, forbid, allow) is forbid
    later = Decision("later")
    assert strictest(allow, later) is allow


def test_the_guard_and_the_boundary_answer_in_it() -> None:
    assert guard.Rejection("x", "y").forbidden
    assert guard.Clearance(certain=True).allowed
    index = BoundaryIndex(
        Boundary(always_allow=(Rule("git_push", {"remote": "origin"}),), ask_first=())
    )
    assert index.decide("git_push", {"remote": "origin"}).allowed
    asked = index.decide("git_push", {"remote": "elsewhere"})
    assert asked.verdict is Verdict.ASK and asked.code == "not allowed"
