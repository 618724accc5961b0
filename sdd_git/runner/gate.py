"""What is decided before any model call: refusals, and the gate from `produces` and the change."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sdd_git.errors import UsageError
from sdd_git.records import changes, decisions
from sdd_git.records.changes import ChangePack
from sdd_git.records.spec import read_spec
from sdd_git.root import Root

GATED = ("code", "scenario", "release-notes")

_X_PATTERNS = (
    re.compile(r"\bx\.com\b", re.IGNORECASE),
    re.compile(r"\btwitter\b", re.IGNORECASE),
    re.compile(r"\btweet(?:s|ed|ing)?\b", re.IGNORECASE),
    re.compile(r"\bretweet", re.IGNORECASE),
    # "post to X", "read replies on X", "share it on X": X as the network, capital X only.
    re.compile(
        r"\b(?i:post|posts|posting|posted|share|sharing|publish|publishing|read|reading|reply|"
        r"replies|replying|dm|message|thread|trending)\b[^.\n]{0,40}?\b(?i:on|to|from|in)\s+X\b"
        r"(?![-\s]?(?i:axis|coordinate|value|position|direction|offset|dimension))"
    ),
    re.compile(r"\bX\s*\(formerly Twitter\)", re.IGNORECASE),
)


def refuse_before_any_call(author: str, critic: str | None, task: str) -> None:
    """Exit 2 before anything is written: no model call, no run log."""
    if not task.strip():
        raise UsageError("the task is empty", hint='sdd role run NAME --task "what to do"')
    if critic is not None and critic == author:
        raise UsageError(
            f"--with names the same role as the author ({author}); a draft is checked by a "
            "different role",
            hint="name another role with --with, or leave it out",
        )
    if names_x(task):
        raise UsageError(
            "refused: the task names X, the social network; no role reads or posts on X",
            hint="sdd works on your product's repository and its development tools only",
        )


def names_x(text: str) -> bool:
    return any(pattern.search(text) for pattern in _X_PATTERNS)


@dataclass(frozen=True)
class Plan:
    change: str | None
    spec: str | None
    sections: tuple[str, ...]  # accepted section ids, e.g. SPEC-0001#S1
    checks: tuple[str, ...]  # their check ids in full, e.g. SPEC-0001#S1/C1
    decisions: tuple[str, ...]  # the accept-section decision of each section


def resolve_change(root: Root, change_id: str | None) -> ChangePack | None:
    if change_id:
        return changes.load(root, change_id)
    open_packs = [p for p in changes.list_all(root) if p.stage != "done"]
    if len(open_packs) > 1:
        names = ", ".join(p.id for p in open_packs)
        raise UsageError(
            f"more than one change is open ({names}); the run needs to know which",
            hint="name it: --change CH-0001",
        )
    return open_packs[0] if open_packs else None


def plan_for(root: Root, pack: ChangePack | None) -> Plan:
    """The accepted sections of the change's spec and their check ids, decided by the runner."""
    if pack is None:
        return Plan(None, None, (), (), ())
    spec = read_spec(root.spec_file(pack.spec))
    log = decisions.load(root)
    sections: list[str] = []
    checks: list[str] = []
    decided: list[str] = []
    for section in spec.sections:
        accepted = log.section_acceptance(section.full_id, section.hash)
        if accepted is None:
            continue
        sections.append(section.full_id)
        decided.append(accepted.id)
        checks.extend(f"{section.full_id}/{check.id}" for check in section.checks)
    return Plan(pack.id, pack.spec, tuple(sections), tuple(checks), tuple(decided))
