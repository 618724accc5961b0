"""Every role sdd knows: built-ins, repo roles, user packs, packages' packs, shipped templates.

Built-ins always win a name. After them, the first source to name a role wins, in this order:
the repo (`.sdd/roles/`), user packs (`$SDD_HOME/roles/`), packs carried by installed packages
(entry point group `sdd_git.roles`) and the templates shipped with sdd. A malformed pack is
skipped with a one-line warning; it never breaks the registry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.config import roles_config
from sdd_git.errors import RecordError
from sdd_git.roles.profile import Boundary, RoleProfile, Rule
from sdd_git.roles.rolefile import RoleFileError, parse_role
from sdd_git.roles.templates import shipped_dir
from sdd_git.root import Root
from sdd_git.yamlio import display

ENTRY_POINT_GROUP = "sdd_git.roles"
_CACHE_VERSION = 1

EXECUTOR = RoleProfile(
    name="executor",
    label="Executor",
    job="Do the task yourself, as the leaf of the work.",
    level=0,
    delegation="deny",
    description=(
        "You are the leaf: do the work yourself. You never spawn or delegate, and you never use "
        "your own tool's native subagent or Task feature; the runner cannot see or gate it."
    ),
    source="builtin",
    spawnable_roles=None,
    deferred_tools=True,
)
SUPERVISOR = RoleProfile(
    name="supervisor",
    label="Supervisor",
    job="Decompose the task, delegate the parts, and verify what comes back.",
    level=100,
    delegation="allow",
    description=(
        "Decompose, delegate, verify. Delegate only through sdd handoffs so the person sees each "
        "session; never use your own tool's native subagent or Task feature."
    ),
    source="builtin",
)
BUILTINS = (EXECUTOR, SUPERVISOR)
BUILTIN_NAMES = frozenset(r.name for r in BUILTINS)


@dataclass(frozen=True)
class Registry:
    roles: tuple[RoleProfile, ...]
    warnings: tuple[str, ...]

    def get(self, name: str) -> RoleProfile | None:
        return next((r for r in self.roles if r.name == name), None)


def sdd_home() -> Path:
    return Path(os.environ.get("SDD_HOME") or Path.home() / ".sdd")


def repo_role_path(root: Root, name: str) -> Path:
    return root.sdd / "roles" / name / "ROLE.md"


def _folders(base: Path) -> list[Path]:
    if not base.is_dir():
        return []
    # A dot folder is a half-made copy (or someone's backup), never a role.
    return sorted(p for p in base.glob("*/ROLE.md") if not p.parent.name.startswith("."))


def _entry_point_texts(warnings: list[str]) -> Iterator[tuple[str, str]]:
    from importlib.metadata import entry_points

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        where = f"entry point {entry.name} ({entry.value})"
        try:
            loaded = entry.load()
            value = loaded() if callable(loaded) else loaded
        except Exception as exc:  # a broken package must not break the registry
            warnings.append(f"warning: skipped {where}: it failed to load ({exc})")
            continue
        texts = [value] if isinstance(value, str) else value
        if not isinstance(texts, list | tuple) or not all(isinstance(t, str) for t in texts):
            warnings.append(f"warning: skipped {where}: it must yield ROLE.md text")
            continue
        for index, text in enumerate(texts):
            yield (where if len(texts) == 1 else f"{where} #{index + 1}"), text


def _cap(profile: RoleProfile, cap: float | None, where: str, warnings: list[str]) -> RoleProfile:
    if cap is not None and profile.delegation == "allow" and profile.level > cap:
        warnings.append(
            f"warning: {where}: {profile.name} grants itself delegation allow at level "
            f"{profile.level_text}, above roles.max_grantable_delegation {cap:g}: loaded as deny"
        )
        return dataclasses.replace(profile, delegation="deny")
    return profile


class _RepoCache:
    """Parsed repo roles keyed by the sha256 of the file: listing 1,000 roles reads no YAML."""

    def __init__(self, root: Root) -> None:
        self.path = root.local / "cache" / "roles.json"
        self.entries: dict[str, Any] = {}
        self.dirty = False
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("version") == _CACHE_VERSION:
                self.entries = data.get("roles", {})
        except (OSError, ValueError, AttributeError):
            pass

    def parse(self, path: Path, name: str) -> tuple[RoleProfile, list[str]]:
        raw = path.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        key = name
        cached = self.entries.get(key)
        if isinstance(cached, dict) and cached.get("sha") == digest:
            try:
                return _from_cache(cached["profile"], path), list(cached.get("warnings", []))
            except (KeyError, TypeError, ValueError):
                pass
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordError(f"{display(path)}: not UTF-8 text ({exc.reason})") from None
        parsed = parse_role(text, path, "repo", folder_name=name)
        warnings = [f"warning: {w.render()}" for w in parsed.warnings]
        self.entries[key] = {
            "sha": digest,
            "profile": _to_cache(parsed.profile),
            "warnings": warnings,
        }
        self.dirty = True
        return parsed.profile, warnings

    def save(self, live: set[str]) -> None:
        stale = set(self.entries) - live
        for key in stale:
            del self.entries[key]
        if not (self.dirty or stale):
            return
        from sdd_git.atomicfile import write_text_atomic

        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            write_text_atomic(
                self.path, json.dumps({"version": _CACHE_VERSION, "roles": self.entries})
            )


def _to_cache(profile: RoleProfile) -> dict[str, Any]:
    data = profile.as_dict()
    data.pop("path")
    return data


def _from_cache(data: dict[str, Any], path: Path) -> RoleProfile:
    boundary = data["boundary"]
    return RoleProfile(
        name=data["name"],
        label=data["label"],
        job=data["job"],
        level=float(data["level"]),
        delegation=data["delegation"],
        description=data["description"],
        source=data["source"],
        path=path,
        spawnable_roles=tuple(data["spawnable_roles"])
        if data["spawnable_roles"] is not None
        else None,
        produces=data["produces"],
        scope=data["scope"],
        skills=tuple(data["skills"]),
        model=data["model"],
        pinned=bool(data["pinned"]),
        hidden=bool(data["hidden"]),
        boundary=Boundary(
            always_allow=tuple(Rule(r["tool"], r.get("inputs")) for r in boundary["always_allow"]),
            ask_first=tuple(Rule(r["tool"], r.get("inputs")) for r in boundary["ask_first"]),
        ),
        deferred_tools=data["deferred_tools"],
    )


def load_registry(root: Root | None) -> Registry:
    cap = roles_config(root).max_grantable_delegation
    warnings: list[str] = []
    chosen: dict[str, RoleProfile] = {r.name: r for r in BUILTINS}

    def offer(profile: RoleProfile, where: str) -> None:
        if profile.name in BUILTIN_NAMES:
            warnings.append(
                f"warning: ignored {where}: '{profile.name}' is a built-in role "
                "and cannot be shadowed"
            )
            return
        if profile.name not in chosen:
            chosen[profile.name] = _cap(profile, cap, where, warnings)

    if root is not None:
        cache = _RepoCache(root)
        live: set[str] = set()
        for path in _folders(root.sdd / "roles"):
            name = path.parent.name
            live.add(name)
            try:
                profile, notes = cache.parse(path, name)
            except RecordError as exc:
                warnings.append(f"warning: skipped {exc.message}")
                continue
            warnings.extend(notes)
            offer(profile, display(path))
        cache.save(live)
    for source, base in (("user", sdd_home() / "roles"), ("template", shipped_dir())):
        if source == "template":
            for where, text in _entry_point_texts(warnings):
                _offer_text(text, where, None, "package", offer, warnings)
        for path in _folders(base):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                warnings.append(f"warning: skipped {display(path)}: {exc}")
                continue
            _offer_text(text, display(path), path, source, offer, warnings)
    return Registry(tuple(chosen.values()), tuple(warnings))


def _offer_text(
    text: str,
    where: str,
    path: Path | None,
    source: str,
    offer: Any,
    warnings: list[str],
) -> None:
    try:
        parsed = parse_role(
            text, path, source, folder_name=path.parent.name if path is not None else None
        )
    except RoleFileError as exc:
        first = exc.problems[0]
        shown = first.render() if path is not None else f"{where}: {first.render()}"
        warnings.append(f"warning: skipped {shown}")
        return
    warnings.extend(f"warning: {w.render()}" for w in parsed.warnings if source != "template")
    offer(parsed.profile, where)


def find_role(root: Root | None, name: str) -> tuple[RoleProfile, list[str]]:
    """One role by name, reading as little as it can (a repo of 1,000 roles reads one file)."""
    for builtin in BUILTINS:
        if builtin.name == name:
            return builtin, []
    if root is not None:
        path = repo_role_path(root, name)
        if path.is_file():
            parsed = parse_role(path.read_text(encoding="utf-8"), path, "repo", folder_name=name)
            warnings: list[str] = []
            profile = _cap(
                parsed.profile, roles_config(root).max_grantable_delegation, display(path), warnings
            )
            return profile, [f"warning: {w.render()}" for w in parsed.warnings] + warnings
    registry = load_registry(root)
    found = registry.get(name)
    if found is None:
        raise RecordError(
            f"no role '{name}'",
            hint="`sdd role list --all` shows every role; `sdd role create NAME --job ...` adds",
        )
    return found, [w for w in registry.warnings if name in w]
