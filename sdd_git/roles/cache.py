"""Parsed role files and settings, keyed by the sha256 of their bytes.

Listing 1,000 roles then stats the files and reads one JSON document, and imports no YAML
parser at all. A changed file has a new fingerprint and is parsed again.

The cache serves listings. A role run must parse its role files itself (`find_role(...,
use_cache=False)`): the boundary it enforces never comes from a file outside the repo's history.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdd_git.config import RolesConfig, roles_config
from sdd_git.paths import display
from sdd_git.roles.profile import Boundary, RoleProfile, Rule
from sdd_git.root import Root

_VERSION = 4
_RACY_NS = 2_000_000_000


_SHARDS = 16


def shard_of(key: str) -> int:
    return zlib.crc32(key.encode()) % _SHARDS


class RoleCache:
    """Entries live in 16 shard files, so showing one role reads a sixteenth of the cache."""

    def __init__(self, root: Root | None) -> None:
        self.folder = root.local / "cache" / "roles" if root is not None else None
        self.shards: dict[int, dict[str, Any]] = {}
        self.used: set[str] = set()
        self.dirty: set[int] = set()

    def _shard(self, number: int) -> dict[str, Any]:
        if number not in self.shards:
            entries: Any = {}
            if self.folder is not None:
                try:
                    data = json.loads((self.folder / f"{number:02d}.json").read_text("utf-8"))
                    if isinstance(data, dict) and data.get("version") == _VERSION:
                        entries = data.get("entries")
                except (OSError, ValueError):
                    pass
            self.shards[number] = entries if isinstance(entries, dict) else {}
        return self.shards[number]

    def entries(self) -> dict[str, Any]:
        """Every cached entry (tests and tools look inside; the code goes by key)."""
        merged: dict[str, Any] = {}
        for number in range(_SHARDS):
            merged.update(self._shard(number))
        return merged

    def _hit(self, key: str, digest: str) -> Any:
        self.used.add(key)
        entry = self._shard(shard_of(key)).get(key)
        if isinstance(entry, dict) and entry.get("sha") == digest:
            return entry.get("value")
        return None

    def _store(self, key: str, digest: str, value: Any) -> None:
        number = shard_of(key)
        self._shard(number)[key] = {"sha": digest, "value": value}
        self.dirty.add(number)

    def file_profile(
        self, key: str, path: Path, source: str, folder_name: str | None
    ) -> tuple[RoleProfile, list[str]]:
        """The role file at `path`, checked by its stat fingerprint instead of its bytes.

        Any write changes a file's ctime, which no tool can set back, so (inode, size, mtime,
        ctime) changes with every edit. A file changed in the last two seconds is not cached:
        a second write within the clock's tick could otherwise keep the same fingerprint.
        """
        info = os.stat(path)
        fingerprint = f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
        fresh = time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) < _RACY_NS
        return self._profile(
            key, fingerprint, path.read_bytes, path, source, folder_name, store=not fresh
        )

    def text_profile(
        self, key: str, raw: bytes, path: Path | None, source: str, folder_name: str | None
    ) -> tuple[RoleProfile, list[str]]:
        """The role in `raw` (a pack carried by a package), checked by the sha256 of its bytes."""
        digest = hashlib.sha256(raw).hexdigest()
        return self._profile(key, digest, lambda: raw, path, source, folder_name, store=True)

    def _profile(
        self,
        key: str,
        fingerprint: str,
        read: Callable[[], bytes],
        path: Path | None,
        source: str,
        folder_name: str | None,
        store: bool,
    ) -> tuple[RoleProfile, list[str]]:
        cached = self._hit(key, fingerprint)
        if cached is not None:
            with contextlib.suppress(KeyError, TypeError, ValueError):
                return _profile_from(cached["profile"], path, source), _render(cached, path)
        from sdd_git.roles.rolefile import parse_role

        raw = read()

        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            from sdd_git.errors import RecordError

            where = display(path) if path else key
            raise RecordError(f"{where}: not UTF-8 text ({exc.reason})") from None
        parsed = parse_role(text, path, source, folder_name)
        value = {
            "profile": _profile_to(parsed.profile),
            "warnings": [[w.line, w.key, w.message] for w in parsed.warnings],
            "where": parsed.warnings[0].path if parsed.warnings else key,
        }
        if store:
            self._store(key, fingerprint, value)
        return parsed.profile, _render(value, path)

    def roles_config(self, root: Root) -> RolesConfig:
        try:
            raw = root.config.read_bytes()
        except OSError:
            return RolesConfig()
        digest = hashlib.sha256(raw).hexdigest()
        cached = self._hit("config", digest)
        if isinstance(cached, list) and len(cached) == 2:
            cap = cached[1]
            return RolesConfig(int(cached[0]), None if cap is None else float(cap))
        config = roles_config(root)
        self._store(
            "config", digest, [config.default_depth_cutoff, config.max_grantable_delegation]
        )
        return config

    def save(self, prune: bool) -> None:
        """Write the shards that changed; with `prune`, drop entries this scan did not see."""
        if self.folder is None:
            return
        if prune:
            for number in range(_SHARDS):
                shard = self._shard(number)
                stale = set(shard) - self.used
                for key in stale:
                    del shard[key]
                if stale:
                    self.dirty.add(number)
        from sdd_git.atomicfile import write_text_atomic

        for number in sorted(self.dirty):
            document = {"version": _VERSION, "entries": self.shards[number]}
            with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
                text = json.dumps(document, separators=(",", ":"))
                write_text_atomic(self.folder / f"{number:02d}.json", text)
        self.dirty.clear()


def _render(value: dict[str, Any], path: Path | None) -> list[str]:
    if not value.get("warnings"):
        return []
    where = display(path) if path else str(value.get("where"))
    out = []
    for line, key, message in value.get("warnings", []):
        named = f" key '{key}':" if key else ""
        out.append(f"warning: {where}:{line}:{named} {message}")
    return out


def _profile_to(profile: RoleProfile) -> dict[str, Any]:
    data = profile.as_dict()
    data.pop("path")
    data.pop("source")
    return data


def _profile_from(data: dict[str, Any], path: Path | None, source: str) -> RoleProfile:
    boundary = data["boundary"]
    spawnable = data["spawnable_roles"]
    return RoleProfile(
        name=data["name"],
        label=data["label"],
        job=data["job"],
        level=float(data["level"]),
        delegation=data["delegation"],
        description=data["description"],
        source=source,
        path=path,
        spawnable_roles=tuple(spawnable) if spawnable is not None else None,
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
