"""Parsed files, cached by fingerprint in gitignored JSON shards under `.sdd/local/cache/`.

Listing 1,000 roles or change packs then stats the files and reads a few JSON documents instead
of parsing 1,000 YAML documents. A file's fingerprint is (inode, size, mtime, ctime): any write
changes the ctime, which no tool can set back. A file changed within the last two seconds is not
cached, since a second write in the same clock tick could keep its fingerprint. Entries live in
16 shards, so looking up one file reads a sixteenth of the cache.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import zlib
from pathlib import Path
from typing import Any

from sdd_git import statefolders

SHARDS = 16
VERSION = 3  # 3: a host agent file keeps its model alias (`model: sonnet`)
RACY_NS = 2_000_000_000


def shard_of(key: str) -> int:
    return zlib.crc32(key.encode()) % SHARDS


def fingerprint(path: Path | str) -> tuple[str, bool]:
    """The file's fingerprint, and whether it is settled enough to cache (raises OSError)."""
    return stamp_of(os.stat(path))


def stamp_of(info: os.stat_result) -> tuple[str, bool]:
    """`fingerprint` of a status already taken (`lstat`, where a link must not be followed)."""
    stamp = f"{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
    settled = time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) >= RACY_NS
    return stamp, settled


class ParseCache:
    def __init__(self, folder: Path | None) -> None:
        state = statefolders.state_folder_of(folder) if folder is not None else None
        if state is not None and statefolders.problem(state) is not None:
            # A linked or shared `.sdd/local` is refused where state is written; a cache only
            # costs time, so it goes without one, and never reads what another planted there.
            folder = None
        self.folder = folder  # None: a cache that remembers nothing
        self.shards: dict[int, dict[str, Any]] = {}
        self.used: set[str] = set()
        self.dirty: set[int] = set()

    def _shard(self, number: int) -> dict[str, Any]:
        if number not in self.shards:
            entries: Any = {}
            if self.folder is not None:
                with contextlib.suppress(OSError, ValueError):
                    data = json.loads((self.folder / f"{number:02d}.json").read_text("utf-8"))
                    if isinstance(data, dict) and data.get("version") == VERSION:
                        entries = data.get("entries")
            self.shards[number] = entries if isinstance(entries, dict) else {}
        return self.shards[number]

    def entries(self) -> dict[str, Any]:
        """Every cached entry (tests look inside; the code goes by key)."""
        merged: dict[str, Any] = {}
        for number in range(SHARDS):
            merged.update(self._shard(number))
        return merged

    def get(self, key: str, stamp: str) -> Any:
        """The value stored for `key` under this fingerprint, or None."""
        self.used.add(key)
        entry = self._shard(shard_of(key)).get(key)
        if isinstance(entry, dict) and entry.get("sha") == stamp:
            return entry.get("value")
        return None

    def put(self, key: str, stamp: str, value: Any) -> None:
        number = shard_of(key)
        self._shard(number)[key] = {"sha": stamp, "value": value}
        self.dirty.add(number)

    def save(self, prune: bool) -> None:
        """Write the shards that changed; with `prune`, drop entries this scan did not see."""
        if self.folder is None:
            return
        if prune:
            for number in range(SHARDS):
                shard = self._shard(number)
                stale = set(shard) - self.used
                for key in stale:
                    del shard[key]
                if stale:
                    self.dirty.add(number)
        if not self.dirty:
            return  # a warm listing writes nothing, and imports nothing to write with
        from sdd_git.atomicfile import write_text_atomic

        for number in sorted(self.dirty):
            document = {"version": VERSION, "entries": self.shards[number]}
            with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
                text = json.dumps(document, separators=(",", ":"))
                write_text_atomic(self.folder / f"{number:02d}.json", text)
        self.dirty.clear()
