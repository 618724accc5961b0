"""A role's profile: what a ROLE.md says, normalized, plus where it came from."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NAME_PATTERN = re.compile(r"^[a-z0-9-]{1,40}\Z")  # \Z: `$` would let a final newline through
PRODUCES = ("reading", "scenario", "code", "release-notes", "plan", "review", "other")
DELEGATION = ("allow", "deny")
SOURCES = ("builtin", "repo", "claude", "copilot", "user", "package", "template")


@dataclass(frozen=True)
class Rule:
    """A boundary rule: a tool, and the exact inputs it matches (None: every call of the tool);
    or, for run_command in always_allow, a `prefix` of literal words with the `match` and
    `not_match` examples checked when the file is read. `saved`: when and from which stop
    `sdd allow --always` saved it (None: written by hand)."""

    tool: str
    inputs: dict[str, Any] | None = None
    prefix: tuple[str, ...] | None = None
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = ()
    saved: dict[str, str] | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"tool": self.tool}
        if self.inputs is not None:
            data["inputs"] = self.inputs
        if self.prefix is not None:
            data["prefix"] = list(self.prefix)
            data["match"] = list(self.match)
            data["not_match"] = list(self.not_match)
        if self.saved is not None:
            data["saved"] = dict(self.saved)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        """A rule as `as_dict` wrote it (the role cache)."""
        prefix = data.get("prefix")
        return cls(
            data["tool"],
            data.get("inputs"),
            tuple(prefix) if prefix is not None else None,
            tuple(data.get("match") or ()),
            tuple(data.get("not_match") or ()),
            data.get("saved"),
        )


def rule_words(rule: Rule) -> str:
    """A rule in plain words, as the person is asked about it: `run_command with command "ls"`."""
    if rule.prefix is not None:
        return (
            f"{rule.tool} with a command that is exactly one plain command beginning with "
            f"{json.dumps(' '.join(rule.prefix), ensure_ascii=False)}, in a working sandbox"
        )
    if rule.inputs is None:
        return f"{rule.tool}, whatever its inputs"
    if not rule.inputs:
        return f"{rule.tool} with no inputs"
    shown = ", ".join(
        f"{key} {json.dumps(value, ensure_ascii=False, sort_keys=True)}"
        for key, value in rule.inputs.items()
    )
    return f"{rule.tool} with {shown}"


@dataclass(frozen=True)
class Boundary:
    always_allow: tuple[Rule, ...] = ()
    ask_first: tuple[Rule, ...] = ()

    def as_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "always_allow": [r.as_dict() for r in self.always_allow],
            "ask_first": [r.as_dict() for r in self.ask_first],
        }


TRUST_STATES = ("trusted", "untrusted", "changed")


@dataclass(frozen=True)
class RulesTrust:
    """Whether the person confirmed what a role file grants (see `roles/trust.py`).

    Every role file not shipped with sdd has one once loaded with her ledger. While `state` is
    not "trusted", the profile's boundary holds no always_allow rule and the role is not
    hidden; `rules` and `surface` keep what the file says, so that it can be shown and confirmed.
    """

    state: str  # one of TRUST_STATES; "changed": she confirmed another surface of this file
    source: str  # the ledger's key: the file's path in the product, a pack's path, an entry point
    rules: tuple[Rule, ...]
    sha256: str  # of the role's grant surface, as recorded when she confirms it
    at: str | None = None  # when she confirmed it (state "trusted" only)
    surface: dict[str, Any] | None = None  # what the file grants, as shown to her
    hidden: bool = False  # what the file says of `hidden` (which counts once confirmed)

    @property
    def counts(self) -> bool:
        return self.state == "trusted"

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "source": self.source,
            "always_allow": [r.as_dict() for r in self.rules],
            "sha256": self.sha256,
            "at": self.at,
            "surface": self.surface,
        }


@dataclass(frozen=True)
class RoleProfile:
    name: str
    label: str
    job: str
    level: float
    delegation: str
    description: str
    source: str = "repo"
    path: Path | None = None
    spawnable_roles: tuple[str, ...] | None = None
    # None: the file does not say (read and draft tools only; see runner/state.py).
    produces: str | None = "other"
    scope: str | None = None
    skills: tuple[str, ...] = ()
    # this role's provider settings, or the name of a model alias (`sonnet`) that her settings'
    # `models:` (or sdd's built-in ones) resolve when the role runs
    model: dict[str, Any] | str | None = None
    pinned: bool = False
    hidden: bool = False
    boundary: Boundary = field(default_factory=Boundary)
    deferred_tools: bool | None = None
    trust: RulesTrust | None = None  # a pack's always_allow rules and whether they count
    # The tools the role is offered: None is every tool. sdd's own `tools:` key, or another
    # host's allowlist mapped onto sdd's tools (see `roles/hostagents.py`).
    tools: tuple[str, ...] | None = None
    # The sha256 of the file's grant surface (roles/trust.py), kept with the parsed profile in
    # the role cache so that listing 1,000 roles checks her ledger without hashing each again.
    grant_sha256: str | None = field(default=None, compare=False)

    @property
    def level_shown(self) -> int | float:
        """The level as she writes it: 10, not 10.0."""
        return int(self.level) if float(self.level).is_integer() else self.level

    @property
    def level_text(self) -> str:
        return str(self.level_shown)

    def shared_fields(self) -> dict[str, Any]:
        """The keys as_dict and her ledger's grant surface (roles/trust.py) write alike."""
        return {
            "delegation": self.delegation,
            "spawnable_roles": list(self.spawnable_roles)
            if self.spawnable_roles is not None
            else None,
            "produces": self.produces,
            "scope": self.scope,
            "skills": list(self.skills),
            "model": self.model,
        }

    def as_dict(self) -> dict[str, Any]:
        # A literal, not a loop over fields: listing 1,000 roles builds one per role.
        return {
            "name": self.name,
            "label": self.label,
            "job": self.job,
            "level": int(self.level) if float(self.level).is_integer() else self.level,
            **self.shared_fields(),
            "pinned": self.pinned,
            "hidden": self.hidden,
            "boundary": self.boundary.as_dict(),
            "deferred_tools": self.deferred_tools,
            "tools": list(self.tools) if self.tools is not None else None,
            "source": self.source,
            "path": str(self.path) if self.path else None,
            "description": self.description,
            "trust": self.trust.as_dict() if self.trust is not None else None,
        }
