"""What a role file grants, and whether she confirmed it (CONTRACT §13).

A role's *grant surface* is what lets it do more: `level`, delegation, `spawnableRoles`,
`produces`, `scope`, `skills`, `model`, `boundary`, `hidden` and a host file's `tools:`. Its
body, `job` and `label` are shown to her but grant nothing, so editing them needs no
confirmation. The surface of every role file that is not shipped with sdd (repo roles, other
hosts' agent files, user packs, packages' packs) counts only while her ledger holds its hash.

Until then the profile is loaded as it would run with nothing granted by the file: no
always_allow rule, and never hidden from `sdd role list`. A run of it is refused
(`runner/trusted.py`) until she confirms what it grants."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from sdd_git import beneath
from sdd_git.roles.profile import Boundary, RoleProfile, RulesTrust
from sdd_git.root import Root
from sdd_git.trust import ledger as trust_ledger
from sdd_git.trust.ledger import Ledger
from sdd_git.trust.pending import Unconfirmed
from sdd_git.trust.words import mapping_changes, role_changes

# Shipped with sdd, or built in: they count as shipped.
SHIPPED_SOURCES = frozenset({"builtin", "template"})
# Files outside the product that can carry a role (the person's own packs, packages' packs).
PACK_SOURCES = frozenset({"user", "package"})


def surface(profile: RoleProfile) -> dict[str, Any]:
    """The grant surface of a profile as parsed, before any trust is applied."""
    rules = profile.trust.rules if profile.trust is not None else profile.boundary.always_allow
    return {
        "level": profile.level,
        **profile.shared_fields(),
        "hidden": profile.trust.hidden if profile.trust is not None else profile.hidden,
        "boundary": {
            "always_allow": [r.as_dict() for r in rules],
            "ask_first": [r.as_dict() for r in profile.boundary.ask_first],
        },
        "tools": list(profile.tools) if profile.tools is not None else None,
    }


def grant_digest(profile: RoleProfile) -> str:
    """The sha256 of the profile's grant surface, as her ledger records it."""
    return profile.grant_sha256 or trust_ledger.digest(surface(profile))


def key_for(root: Root | None, profile: RoleProfile, where: Path | str | None = None) -> str | None:
    """The ledger's key for a role's file: its path in the product, the absolute path of a
    user pack, or the entry point that carries a package's pack. None: shipped with sdd."""
    place = where if where is not None else profile.path
    if profile.source == "builtin" or place is None:
        return None
    if profile.source == "template":
        # Shipped with sdd, unless it lies in the product: where the product is sdd's own
        # checkout, its templates/ is the product's, and anyone's by a pull request.
        in_product = root is not None and str(place).startswith(str(root.path) + os.sep)
        if not in_product:
            return None
    text = str(place)
    if isinstance(place, str) and not text.startswith("/"):
        return text  # an entry point
    # Strings, not pathlib: listing 1,000 roles makes this key 1,000 times.
    if root is not None:
        inside = str(root.path) + os.sep
        if text.startswith(inside) and ".." not in text:
            return text[len(inside) :].replace(os.sep, "/")
    return os.path.abspath(text)


def apply_ledger(profile: RoleProfile, key: str | None, ledger: Ledger | None) -> RoleProfile:
    """The profile as sdd acts on it: whole when confirmed (or shipped, or on a CI engine,
    `ledger` None), else with nothing its file grants in passing, and `trust` saying so.
    A confirmed profile comes back as it was: `trust` None, as for a shipped one (see
    `confirmed`)."""
    if key is None or ledger is None:
        return profile
    sha = grant_digest(profile)
    entry = ledger.entries.get(key)
    rules = profile.boundary.always_allow
    if entry is not None and entry.sha256 == sha:
        return profile  # confirmed: whole, as written (`trust` stays None)
    state = "changed" if entry is not None else "untrusted"
    trust = RulesTrust(state, key, rules, sha, None, surface(profile), profile.hidden)
    return dataclasses.replace(
        profile,
        boundary=Boundary((), profile.boundary.ask_first),
        hidden=False,
        trust=trust,
    )


def confirmed(profile: RoleProfile) -> bool:
    """Whether what the role's file grants counts (confirmed, shipped, or a CI engine)."""
    return profile.trust is None or profile.trust.counts


def ledger_for(root: Root | None) -> Ledger | None:
    """Her ledger, or None where the ledger is not consulted (no root, or a CI engine)."""
    if root is None or trust_ledger.on_ci_engine():
        return None
    return trust_ledger.read(root)


def file_surface(
    path: Path, source: str = "repo", within: Path | None = None
) -> dict[str, Any] | None:
    """The grant surface of the role file at `path` as it is now; None when there is none
    (missing, or a file that does not load: it grants nothing)."""
    from sdd_git.errors import RecordError
    from sdd_git.roles.rolefile import read_role

    try:
        folder = path.parent.name if source == "repo" else None
        return surface(read_role(path, source, folder_name=folder, within=within).profile)
    except (RecordError, OSError):
        return None


@contextlib.contextmanager
def confirming(root: Root, path: Path, how: str, source: str = "repo") -> Iterator[None]:
    """Around a person command's write of a role file: what it grants afterwards is hers, as
    long as what it granted before was hers too (or the file is new). See
    `ledger.record_written`."""
    existed = path.is_file()
    inside = beneath.within(root.path, path)
    before = file_surface(path, source, inside) if existed else None
    yield
    after = file_surface(path, source, inside)
    key = key_for(root, dataclasses.replace(_stub, path=path, source=source))
    if key is not None:
        trust_ledger.record_written(root, key, before, after, how, existed=existed)


def confirm(root: Root, profile: RoleProfile, how: str) -> None:
    """Record that she confirmed the role's grant surface, as it was shown to her."""
    key = key_for(root, profile)
    if key is not None:
        trust_ledger.record(root, [(key, surface(profile))], how)


_stub = RoleProfile(name="x", label="x", job="x", level=0, delegation="deny", description="")


def role_item(profile: RoleProfile, ledger: Ledger | None) -> Unconfirmed | None:
    """The role's file when she has not confirmed what it grants (as loaded with `ledger`)."""
    trust = profile.trust
    if ledger is None or trust is None or trust.counts:
        return None
    before = ledger.before(trust.source)
    changes = role_changes(before, trust.surface)
    return Unconfirmed(
        trust.source,
        "role",
        f"role {profile.name}",
        tuple(changes) or ("what it grants changed",),
        trust.surface,
        profile.path,
    )


def skill_items(root: Root, names: Iterable[str], ledger: Ledger | None) -> list[Unconfirmed]:
    """The product's skills among `names` (None: every one) whose front matter she has not
    confirmed, wherever the product keeps them (`.sdd/skills/`, `.agents/`, `.claude/`,
    `.github/skills/`): a run is offered them from all of those."""
    from sdd_git.roles.skills import discover, front_matter

    if ledger is None:
        return []
    catalog = discover(root.path)
    wanted = list(names)
    found: list[Unconfirmed] = []
    for name in wanted:
        skill = catalog.get(name)
        if skill is None:
            continue
        path = skill.path
        key = (
            path.relative_to(root.path).as_posix() if path.is_relative_to(root.path) else str(path)
        )
        front = front_matter(path, beneath.within(root.path, path))
        if ledger.confirmed(key, front):
            continue
        changes = mapping_changes(ledger.before(key) or {}, front)
        item = Unconfirmed(
            key, "skill", f"skill {name}", tuple(changes) or ("it changed",), front, path
        )
        found.append(item)
    return found


def all_skill_names(root: Root) -> list[str]:
    from sdd_git.roles.skills import discover

    return sorted(discover(root.path).skills)
