"""Which pack rules the person has confirmed: `.sdd/trust.yaml`, written by `sdd role trust`.

A pack in `$SDD_HOME/roles/` or one carried by an installed package can hold
`boundary.always_allow` rules, and whatever could write those files could otherwise grant a role
the right to act without asking. So a pack's `always_allow` rules count only while
`.sdd/trust.yaml` (a person-owned file that roles cannot write) holds her confirmation of
exactly those rules: the role's name, the pack's source, and the sha256 of the canonical JSON of
the list. When the pack's rules change, the hash no longer matches and they stop counting until
she trusts them again. `ask_first` rules only make a role ask more, so they always count.

Rules in `.sdd/roles/` count as written (she wrote them, or `sdd allow --always` did), and the
templates shipped with sdd count as shipped: only packs are checked here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from sdd_git.errors import RecordError, UsageError
from sdd_git.paths import display
from sdd_git.roles.profile import Boundary, RoleProfile, Rule, RulesTrust
from sdd_git.root import Root

# Another host's agent file in the product (`.claude/agents/`, `.github/agents/`) is a pack too:
# it arrives with a clone or a pull, and anything that could write it could grant a rule.
PACK_SOURCES = frozenset({"user", "package", "claude", "copilot"})
TRUST_FILE = "trust.yaml"
_HEADER = (
    "# The always_allow rules of role packs that you confirmed with `sdd role trust NAME`.\n"
    "# A pack's rules count only while their sha256 matches; written by sdd, kept in .sdd/,\n"
    "# where no role can write.\n"
)


def trust_path(root: Root) -> Path:
    return root.sdd / TRUST_FILE


def rules_sha256(rules: tuple[Rule, ...]) -> str:
    """The sha256 of the rules' canonical JSON: sorted keys, no spaces, UTF-8."""
    canonical = json.dumps(
        [rule.as_dict() for rule in rules],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def source_of(where: Path | str) -> str:
    """How a pack is named in the trust file: its file's absolute path, or its entry point."""
    return os.path.abspath(where) if isinstance(where, Path) else where


@dataclass(frozen=True)
class TrustEntry:
    role: str
    source: str
    always_allow_sha256: str
    at: str
    confirmed: str  # her confirmation: "answered y" or "--yes"

    def as_dict(self) -> dict[str, str]:
        return dataclasses.asdict(self)


def read_entries(root: Root | None) -> list[TrustEntry]:
    """The recorded confirmations; a missing file is none. A broken file is an error."""
    if root is None:
        return []
    path = trust_path(root)
    if not path.exists():
        return []
    from sdd_git.yamlio import read_list  # YAML only when there is a pack rule to check

    entries = []
    for index, item in enumerate(read_list(path)):
        fields = ("role", "source", "always_allow_sha256")
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in fields):
            raise RecordError(
                f"{display(path)}: entry {index + 1} needs role, source and always_allow_sha256",
                hint="fix or remove that entry, then run `sdd role trust NAME` again",
            )
        entries.append(
            TrustEntry(
                item["role"],
                item["source"],
                item["always_allow_sha256"],
                str(item.get("at", "")),
                str(item.get("confirmed", "")),
            )
        )
    return entries


def apply_trust(profile: RoleProfile, where: Path | str, entries: list[TrustEntry]) -> RoleProfile:
    """The profile as a run sees it: a pack's always_allow rules only when she trusted them."""
    rules = profile.boundary.always_allow
    if profile.source not in PACK_SOURCES or not rules:
        return profile
    source = source_of(where)
    digest = rules_sha256(rules)
    mine = [e for e in entries if e.role == profile.name and e.source == source]
    match = next((e for e in mine if e.always_allow_sha256 == digest), None)
    if match is not None:
        trust = RulesTrust("trusted", source, rules, digest, match.at or None)
        return dataclasses.replace(profile, trust=trust)
    trust = RulesTrust("changed" if mine else "untrusted", source, rules, digest)
    return dataclasses.replace(
        profile, boundary=Boundary((), profile.boundary.ask_first), trust=trust
    )


def write_trust(root: Root, profile: RoleProfile, confirmed: str) -> TrustEntry:
    """Record that she confirmed the rules she was shown (`profile.trust`), replacing an earlier
    confirmation for the same role and source. The hash recorded is that of the rules shown, so
    a pack changed while she read them stays untrusted. The caller holds `person_write`."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.yamlio import dump_yaml

    trust = profile.trust
    if trust is None:
        raise UsageError(f"role '{profile.name}' has no pack rules to trust")
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    entry = TrustEntry(profile.name, trust.source, trust.sha256, at, confirmed)
    kept = [e for e in read_entries(root) if (e.role, e.source) != (entry.role, entry.source)]
    text = _HEADER + dump_yaml([e.as_dict() for e in [*kept, entry]])
    write_text_atomic(trust_path(root), text)
    return entry


def untrusted_rules(profile: RoleProfile, text: str) -> tuple[Rule, ...]:
    """The always_allow rules that a copy of this role's file `text` into the repo must leave
    out: once copied, a rule counts as hers, so a pack's rules come along only if she trusted
    them and the file still holds exactly those rules."""
    from sdd_git.roles.rolefile import parse_role

    if profile.source not in PACK_SOURCES:
        return ()
    rules = parse_role(text, profile.path, profile.source).profile.boundary.always_allow
    trust = profile.trust
    if not rules or (trust is not None and trust.counts and trust.sha256 == rules_sha256(rules)):
        return ()
    return rules
