"""A role's saved rules, as she reviews them: listed (always_allow, then ask_first, numbered
from 1), each in plain words with when and from which stop it was saved and whether it counts;
and one revoked, a person write recorded in her trust ledger like the rule's saving."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sdd_git import beneath
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import UsageError
from sdd_git.roles.profile import RoleProfile, Rule, rule_words
from sdd_git.root import Root

SECTIONS = ("always_allow", "ask_first")


@dataclass(frozen=True)
class SavedRule:
    number: int  # from 1, as `sdd role rules NAME --revoke N` names it
    section: str  # "always_allow" or "ask_first"
    index: int  # its place in that list of the file, from 0
    rule: Rule
    counts: bool  # an always_allow rule counts once she confirmed the file (CONTRACT §13)

    def words(self) -> str:
        kind = "always allow" if self.section == "always_allow" else "ask first"
        return f"{kind}: {rule_words(self.rule)}"

    def fingerprint(self) -> str:
        """This rule as it stands, in short: her page sends it with a revoke, so a file that
        changed since she read it (a pull, another revoke) never loses another rule instead."""
        import hashlib
        import json

        said = json.dumps([self.section, self.rule.as_dict()], sort_keys=True, default=str)
        return hashlib.sha256(said.encode("utf-8")).hexdigest()[:16]

    def origin(self) -> str:
        saved = self.rule.saved or {}
        if not saved:
            return "written by hand"
        at, stop = saved.get("at"), saved.get("stop")
        return "saved" + (f" {at}" if at else "") + (f" from {stop}" if stop else "")

    def as_json(self) -> dict[str, Any]:
        saved = self.rule.saved or {}
        return {
            "number": self.number,
            "section": self.section,
            "rule": self.rule.as_dict(),
            "words": self.words(),
            "saved_at": saved.get("at"),
            "saved_from": saved.get("stop"),
            "written_by_hand": not saved,
            "counts": self.counts,
        }


def saved_rules(profile: RoleProfile) -> list[SavedRule]:
    """The rules the role's file says, in its order. An always_allow rule of a file she has
    not confirmed is listed too (from `trust.rules`), saying it does not count."""
    trust = profile.trust
    allowed = trust.rules if trust is not None else profile.boundary.always_allow
    counts = trust is None or trust.counts
    listed = [SavedRule(i + 1, "always_allow", i, rule, counts) for i, rule in enumerate(allowed)]
    start = len(listed)
    listed += [
        SavedRule(start + i + 1, "ask_first", i, rule, True)
        for i, rule in enumerate(profile.boundary.ask_first)
    ]
    return listed


def list_rules(root: Root, name: str) -> tuple[RoleProfile, list[SavedRule]]:
    from sdd_git.roles.registry import find_role

    profile, _ = find_role(root, name, use_cache=False)
    return profile, saved_rules(profile)


def revoke(
    root: Root,
    name: str,
    number: int,
    how: str = "sdd role rules --revoke",
    shown: str | None = None,
) -> SavedRule:
    """Take rule `number` out of the role's file, atomically, as her own write. `shown`: the
    fingerprint of the rule she was shown as that number (her page); another rule there now is
    never taken out."""
    from sdd_git.roles.registry import find_role, repo_role_path
    from sdd_git.roles.roleedit import remove_rule_text
    from sdd_git.roles.trust import confirming
    from sdd_git.sink import person_write

    with person_write(root):
        profile, _ = find_role(root, name, use_cache=False)
        path = repo_role_path(root, name)
        if profile.path is None or profile.path != path or not path.is_file():
            raise UsageError(
                f"'{name}' has no role file in this product to take a rule out of",
                hint="a shipped role or a pack keeps its rules; copy it first with "
                f"`sdd role duplicate {name}`",
            )
        listed = saved_rules(profile)
        chosen = next((r for r in listed if r.number == number), None)
        if chosen is None:
            raise UsageError(
                f"{name} has no rule {number}"
                + (f": its rules are numbered 1 to {len(listed)}" if listed else ": it has none"),
                hint=f"sdd role rules {name} lists them",
            )
        if shown is not None and chosen.fingerprint() != shown:
            raise UsageError(
                f"rule {number} of {name} is no longer the rule you were shown: the file "
                "changed since; nothing was revoked",
                hint="reload the page and revoke the rule again",
            )
        text = beneath.read_text(root.path, path)  # the product's own, no link followed
        new_text = remove_rule_text(text, path, chosen.section, chosen.index)
        with confirming(root, path, how):
            write_text_atomic(path, new_text)
        return chosen
