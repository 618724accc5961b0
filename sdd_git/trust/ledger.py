"""`.sdd/local/trust.json`: the sha256 of each grant surface she wrote or confirmed.

The repository is not the person. A file that arrives by a merge, a pull, a checkout or a copy
grants nothing until this ledger holds the hash of its grant surface, recorded by a person
command (she wrote it) or by `sdd trust accept` (she read what it grants and said yes), as
direnv allows an `.envrc` of that exact content.

Two things keep the ledger hers even though it lives inside the product folder:
- it is sealed with a key kept outside the product (`$SDD_HOME/trust.key`, 0600, hidden from
  sandboxed commands), so a `trust.json` that arrives by git (force-added past .gitignore) or
  is planted by a command fails its seal and confirms nothing;
- it is read only when `.sdd/local` and the file are real (no links), hers, and writable by
  her alone.

Each entry keeps the surface she confirmed beside its hash, so that a later change can be said
as a change of meaning ("always-allow gains ...") rather than of bytes.

On a CI engine the engine is the trust anchor (the workflow runs the default branch's content)
and the ledger is not consulted: see `on_ci_engine`."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import lockfile
from sdd_git.atomicfile import write_bytes_atomic
from sdd_git.root import Root

LEDGER_NAME = "trust.json"
KEY_NAME = "trust.key"
_VERSION = 1


def digest(surface: Any) -> str:
    """The sha256 of a surface's canonical JSON: sorted keys, no spaces, UTF-8."""
    return hashlib.sha256(canonical(surface).encode("utf-8")).hexdigest()


def canonical(surface: Any) -> str:
    return json.dumps(surface, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def ledger_path(root: Root) -> Path:
    return root.local / LEDGER_NAME


def key_path() -> Path:
    home = os.environ.get("SDD_HOME") or str(Path.home() / ".sdd")
    return Path(home) / KEY_NAME


def on_ci_engine() -> bool:
    """Whether sdd runs on a CI engine, which is then the trust anchor. Read from the variables
    the engines set themselves; nothing in the repository can set them on her machine."""
    env = os.environ
    flags = ("GITHUB_ACTIONS", "GITLAB_CI", "CI", "TF_BUILD", "BUILDKITE")
    if any(env.get(name, "").strip().lower() in ("true", "1", "yes") for name in flags):
        return True
    return bool(env.get("JENKINS_URL") and env.get("BUILD_ID"))


@dataclass(frozen=True)
class Entry:
    sha256: str
    at: str
    how: str  # the person command that recorded it, or "sdd trust accept"
    surface: Any  # what she confirmed, for saying later what changed

    def as_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "at": self.at, "how": self.how, "surface": self.surface}


@dataclass(frozen=True)
class Ledger:
    entries: Mapping[str, Entry]
    problem: str | None = None  # why an existing ledger was not read (it then confirms nothing)

    def confirmed(self, key: str, surface: Any) -> bool:
        entry = self.entries.get(key)
        return entry is not None and hmac.compare_digest(entry.sha256, digest(surface))

    def confirmed_digest(self, key: str, sha256: str) -> bool:
        entry = self.entries.get(key)
        return entry is not None and hmac.compare_digest(entry.sha256, sha256)

    def before(self, key: str) -> Any:
        """The surface she last confirmed under `key`, or None."""
        entry = self.entries.get(key)
        return None if entry is None else entry.surface


def _key(create: bool) -> bytes | None:
    path = key_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = secrets.token_bytes(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            return _key(create=False)  # another process made it meanwhile
        with os.fdopen(fd, "wb") as handle:
            handle.write(key.hex().encode())
            handle.flush()
            os.fsync(handle.fileno())
        return key
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None  # a key others could read or write seals nothing
        try:
            return bytes.fromhex(handle.read(200).decode().strip())
        except ValueError:
            return None


def _seal(key: bytes, body: str) -> str:
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def _own_folder(folder: Path) -> str | None:
    """Why `folder` (.sdd/local) cannot hold her ledger, or None when it can."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder of its own (a link, or a file)"
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return f"{folder} is not yours alone (another user owns it or may write in it)"
    return None


def read(root: Root) -> Ledger:
    """Her ledger; a missing one is empty. One that is not hers, or whose seal does not match,
    confirms nothing and says why (`problem`)."""
    path = ledger_path(root)
    why = _own_folder(root.local)
    if why is not None:
        return Ledger({}, why)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return Ledger({})
    except OSError as exc:
        return Ledger({}, f"{path} could not be read ({exc.strerror})")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return Ledger({}, f"{path} is not yours alone")
        raw = handle.read()
    try:
        data = json.loads(raw)
        body = data["entries"]
        seal = data["seal"]
        if not isinstance(body, str) or not isinstance(seal, str):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        return Ledger({}, f"{path} is not a trust ledger sdd wrote")
    key = _key(create=False)
    if key is None or not hmac.compare_digest(_seal(key, body), seal):
        return Ledger({}, f"{path} was not written by sdd for you (its seal does not match)")
    try:
        items = json.loads(body)
        entries = {
            str(k): Entry(str(v["sha256"]), str(v["at"]), str(v["how"]), v.get("surface"))
            for k, v in items.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return Ledger({}, f"{path} is damaged")
    return Ledger(entries)


@contextlib.contextmanager
def _writing(root: Root) -> Iterator[dict[str, Entry]]:
    """The ledger's entries to change, written back sealed and atomically on success."""
    why = _own_folder(root.local)
    if why is not None:
        from sdd_git.errors import RecordError

        raise RecordError(
            f"cannot record what you confirmed: {why}",
            hint="remove .sdd/local (sdd keeps only local state there) and run the command again",
        )
    root.local.mkdir(parents=True, exist_ok=True)
    with lockfile.hold(root.local / "locks" / "trust.lock", wait_seconds=10):
        current = read(root)
        entries = dict(current.entries)
        yield entries
        key = _key(create=True)
        if key is None:
            from sdd_git.errors import RecordError

            raise RecordError(
                f"cannot seal the trust ledger: {key_path()} is not a key of yours alone",
                hint=f"remove {key_path()}; sdd makes a new one (you then confirm again)",
            )
        body = json.dumps({k: e.as_json() for k, e in sorted(entries.items())}, ensure_ascii=False)
        text = json.dumps({"version": _VERSION, "entries": body, "seal": _seal(key, body)})
        write_bytes_atomic(ledger_path(root), text.encode("utf-8") + b"\n")
        os.chmod(ledger_path(root), 0o600)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record(root: Root, items: Iterable[tuple[str, Any]], how: str) -> None:
    """Confirm each (key, surface): she wrote it with `how`, or read it and said yes."""
    pairs = list(items)
    if not pairs:
        return
    moment = now()
    with _writing(root) as entries:
        for key, surface in pairs:
            entries[key] = Entry(digest(surface), moment, how, surface)


def forget(root: Root, keys: Iterable[str]) -> list[str]:
    """Un-confirm; gives back the keys that were confirmed."""
    wanted = list(keys)
    with _writing(root) as entries:
        gone = [k for k in wanted if entries.pop(k, None) is not None]
    return gone


def record_written(
    root: Root, key: str, before: Any, after: Any, how: str, *, existed: bool = True
) -> bool:
    """A person command rewrote the file under `key`, from surface `before` to `after`. It
    counts as hers when the file is new, or when what it granted before was already confirmed:
    a person command never confirms in passing what a merge brought (`sdd role hide` of a
    merged role leaves its rules waiting for her review). Says whether it was recorded."""
    if after is None:
        return False
    if existed and not read(root).confirmed(key, before):
        return False
    record(root, [(key, after)], how)
    return True
