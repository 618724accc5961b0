"""Parsed role files and settings, keyed by the sha256 of their bytes.

Listing 1,000 roles then stats the files and reads the cache's JSON shards, and imports no YAML
parser at all (see `sdd_git/parsecache.py`). A changed file has a new fingerprint.

The cache serves listings. A role run must parse its role files itself (`find_role(...,
use_cache=False)`): the boundary it enforces never comes from a file outside the repo's history.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sdd_git import beneath
from sdd_git.config import RolesConfig, roles_config
from sdd_git.parsecache import ParseCache, fingerprint, stamp_of
from sdd_git.paths import display
from sdd_git.roles.profile import Boundary, RoleProfile, Rule
from sdd_git.roles.trust import grant_digest
from sdd_git.root import Root


class RoleCache(ParseCache):
    """Role profiles and the roles settings, in `.sdd/local/cache/roles/`."""

    def __init__(self, root: Root | None) -> None:
        super().__init__(root.local / "cache" / "roles" if root is not None else None)

    def _hit(self, key: str, digest: str) -> Any:
        return self.get(key, digest)

    def _store(self, key: str, digest: str, value: Any) -> None:
        self.put(key, digest, value)

    def file_profile(
        self, key: str, path: Path, source: str, folder_name: str | None, within: Path | None
    ) -> tuple[RoleProfile, list[str]]:
        """The role file at `path`, checked by its stat fingerprint instead of its bytes.

        Any write changes a file's ctime, which no tool can set back, so (inode, size, mtime,
        ctime) changes with every edit. A file changed in the last two seconds is not cached:
        a second write within the clock's tick could otherwise keep the same fingerprint.

        `within`: the product holding the file. It is then read with no link followed, and a
        link or special file is refused (`beneath.Refused`) before any cached entry counts.
        """
        if within is None:
            stamp, settled = fingerprint(path)
            return self._profile(
                key, stamp, path.read_bytes, path, source, folder_name, store=settled
            )
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            beneath.read_bytes(within, path)  # raises, naming the link or special file
        stamp, settled = stamp_of(info)

        def read() -> bytes:
            from sdd_git.yamlio import MAX_YAML_BYTES, capped

            return capped(beneath.read_bytes(within, path, MAX_YAML_BYTES + 1), path)

        return self._profile(key, stamp, read, path, source, folder_name, store=settled)

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
        # An entry from before grant digests were kept is parsed again, once.
        if cached is not None and isinstance(cached.get("grant"), str):
            with contextlib.suppress(KeyError, TypeError, ValueError):
                grant = cached.get("grant")
                profile = _profile_from(
                    cached["profile"], path, source, grant if isinstance(grant, str) else None
                )
                return profile, _render(cached, path)
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
            "grant": grant_digest(parsed.profile),
            "warnings": [[w.line, w.key, w.message] for w in parsed.warnings],
            "where": parsed.warnings[0].path if parsed.warnings else key,
        }
        if store:
            self._store(key, fingerprint, value)
        return parsed.profile, _render(value, path)

    def roles_config(self, root: Root) -> RolesConfig:
        from sdd_git.settings import layer_files

        # The cache is keyed by the bytes of every layer (her user file, the product's, the
        # local one): any change to one reads the settings again.
        hashed = hashlib.sha256()
        for _name, path, within in layer_files(root):
            try:
                raw = beneath.read_bytes(within, path) if within is not None else path.read_bytes()
            except OSError:
                raw = b"\0missing"
            hashed.update(hashlib.sha256(raw).digest())
        digest = hashed.hexdigest()
        cached = self._hit("config", digest)
        if isinstance(cached, list) and len(cached) == 2:
            cap = cached[1]
            return RolesConfig(int(cached[0]), None if cap is None else float(cap))
        config = roles_config(root)
        self._store(
            "config", digest, [config.default_depth_cutoff, config.max_grantable_delegation]
        )
        return config


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


def _profile_from(
    data: dict[str, Any], path: Path | None, source: str, grant: str | None = None
) -> RoleProfile:
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
            always_allow=tuple(Rule.from_dict(r) for r in boundary["always_allow"]),
            ask_first=tuple(Rule.from_dict(r) for r in boundary["ask_first"]),
        ),
        deferred_tools=data["deferred_tools"],
        tools=None if data["tools"] is None else tuple(data["tools"]),
        grant_sha256=grant,
    )
