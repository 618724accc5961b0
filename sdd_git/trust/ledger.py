"""`.sdd/local/trust.json`: the sha256 of each grant surface she wrote or confirmed.

The repository is not the person. A file that arrives by a merge, a pull, a checkout or a copy
grants nothing until this ledger holds the hash of its grant surface, recorded by a person
command (she wrote it) or by `sdd trust accept` (she read what it grants and said yes), as
direnv allows an `.envrc` of that exact content.

Two things keep the ledger hers even though it lives inside the product folder:
- its sha256 is anchored outside the product (`$SDD_HOME/trust/ROOT.sha256`, one small file
  per product folder, which no sandboxed command can write), so a `trust.json` that arrives by
  git (force-added past .gitignore), or is planted or replaced, matches no anchor and confirms
  nothing;
- it is read only when `.sdd/local` and the file are real (no links), hers, and writable by
  her alone (`sdd_git/statefolders.py`).

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
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git import lockfile, statefolders
from sdd_git.atomicfile import write_bytes_atomic
from sdd_git.recordjson import record_json
from sdd_git.root import Root

LEDGER_NAME = "trust.json"
SHOWN_NAME = "trust-shown.json"  # what she was shown for each confirmation
_VERSION = 1


def digest(surface: Any) -> str:
    """The sha256 of a surface's canonical JSON: sorted keys, no spaces, UTF-8."""
    return hashlib.sha256(canonical(surface).encode("utf-8")).hexdigest()


def canonical(surface: Any) -> str:
    return json.dumps(jsonable(surface), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def jsonable(value: Any) -> Any:
    """A YAML value as plain JSON, with nothing lost: a key that is not text (`on:` read as
    True, a number) and a value JSON has no word for (a date) keep their type in the text, so
    two different files never share a surface, and none breaks the hash."""
    if isinstance(value, dict):
        return {
            (k if isinstance(k, str) else f"{type(k).__name__}:{k!r}"): jsonable(v)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return {"yaml": type(value).__name__, "value": str(value)}


def ledger_path(root: Root) -> Path:
    return root.local / LEDGER_NAME


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

    def as_json(self) -> dict[str, Any]:
        return record_json(self)


class Ledger:
    """Her confirmations: each key's sha256. What she was shown for each (to say later what
    changed) is kept in a second file, read only when words are needed."""

    def __init__(
        self,
        entries: Mapping[str, Entry],
        problem: str | None = None,
        shown: Callable[[], Mapping[str, Any]] | None = None,
    ) -> None:
        self.entries = entries
        self.problem = problem  # why an existing ledger was not read (it confirms nothing)
        self._load_shown = shown
        self._shown: Mapping[str, Any] | None = None

    def confirmed(self, key: str, surface: Any) -> bool:
        return self.confirmed_digest(key, digest(surface))

    def confirmed_digest(self, key: str, sha256: str) -> bool:
        entry = self.entries.get(key)
        return entry is not None and hmac.compare_digest(entry.sha256, sha256)

    def before(self, key: str) -> Any:
        """The surface she last confirmed under `key`, or None."""
        if key not in self.entries:
            return None
        if self._shown is None:
            self._shown = self._load_shown() if self._load_shown is not None else {}
        return self._shown.get(key)


def anchor_path(root: Root) -> Path:
    """Where the sha256 of this product's ledger is kept, outside the product."""
    name = hashlib.sha256(str(root.path).encode("utf-8")).hexdigest()[:32]
    home = Path(os.environ.get("SDD_HOME") or str(Path.home() / ".sdd"))
    return home / "trust" / f"{name}.sha256"


def shown_path(root: Root) -> Path:
    return root.local / SHOWN_NAME


def _own_file(path: Path) -> tuple[bytes | None, str | None]:
    """The bytes of a regular file of hers alone, opened without following a link; (None,
    None) when it does not exist; (None, why) when it is not hers alone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"{path} could not be read ({exc.strerror})"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
            return None, f"{path} is not yours alone"
        return handle.read(), None


def _anchors(root: Root) -> list[str]:
    raw, _why = _own_file(anchor_path(root))
    return raw.decode("ascii", "replace").split() if raw else []


def _own_folder(folder: Path) -> str | None:
    """Why `folder` (.sdd/local) cannot hold her ledger, or None when it can."""
    found = statefolders.problem(folder)
    return None if found is None else found[0]


_memo: dict[str, tuple[tuple[int, ...], Ledger]] = {}


def _stamp(root: Root) -> tuple[int, ...] | None:
    """What changes with any write of the ledger or its anchor (each is replaced whole)."""
    try:
        a = os.stat(ledger_path(root), follow_symlinks=False)
        b = os.stat(anchor_path(root), follow_symlinks=False)
    except OSError:
        return None
    return tuple(
        getattr(i, f)
        for i in (a, b)
        for f in ("st_ino", "st_size", "st_mtime_ns", "st_ctime_ns", "st_mode", "st_uid")
    )


def read(root: Root) -> Ledger:
    """Her ledger; a missing one is empty. One that is not hers, or that matches no anchor,
    confirms nothing and says why (`problem`). Read once per process while it is unchanged: a
    hook-fired run checks several files against it."""
    why = _own_folder(root.local)
    if why is not None:
        return Ledger({}, why)
    stamp = _stamp(root)
    memo = _memo.get(str(root.path))
    if stamp is not None and memo is not None and memo[0] == stamp:
        return memo[1]
    found = _read(root)
    if stamp is not None and found.problem is None:
        _memo[str(root.path)] = (stamp, found)
    return found


def _read(root: Root) -> Ledger:
    path = ledger_path(root)
    raw, why = _own_file(path)
    if raw is None:
        return Ledger({}, why)
    anchors = _anchors(root)
    if not anchors or not hmac.compare_digest(anchors[0], hashlib.sha256(raw).hexdigest()):
        return Ledger({}, f"{path} was not written by sdd for this folder (its anchor differs)")
    try:
        body = json.loads(raw)["entries"]
        entries = {
            str(k): Entry(str(v["sha256"]), str(v["at"]), str(v["how"])) for k, v in body.items()
        }
    except (ValueError, KeyError, TypeError, AttributeError):
        return Ledger({}, f"{path} is not a trust ledger sdd wrote")
    expected = anchors[1] if len(anchors) > 1 else None

    def shown() -> Mapping[str, Any]:
        data, _ = _own_file(shown_path(root))
        if data is None or expected is None:
            return {}
        if not hmac.compare_digest(expected, hashlib.sha256(data).hexdigest()):
            return {}  # the words would lie: say less, never confirm more
        try:
            loaded = json.loads(data)
        except ValueError:
            return {}
        return loaded if isinstance(loaded, dict) else {}

    return Ledger(entries, None, shown)


@contextlib.contextmanager
def _writing(root: Root) -> Iterator[tuple[dict[str, Entry], dict[str, Any]]]:
    """The ledger's entries and shown surfaces to change, written back, anchored, atomically."""
    try:
        statefolders.ensure(root.local)
    except statefolders.StateFolderError as exc:
        raise statefolders.StateFolderError(
            f"cannot record what you confirmed: {exc.message}", hint=exc.hint
        ) from None
    with lockfile.hold(root.local / "locks" / "trust.lock", wait_seconds=10):
        current = _read(root)
        entries = dict(current.entries)
        shown = {k: current.before(k) for k in entries}
        yield entries, shown
        body = {k: e.as_json() for k, e in sorted(entries.items())}
        raw = (json.dumps({"version": _VERSION, "entries": body}) + "\n").encode("utf-8")
        kept = {k: shown.get(k) for k in sorted(entries)}
        said = (json.dumps(kept, ensure_ascii=False) + "\n").encode("utf-8")
        anchor = anchor_path(root)
        anchor.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # The anchor first: a crash between the writes leaves a ledger that matches no anchor,
        # which confirms nothing (she confirms again), never one that confirms what she did not.
        sums = f"{hashlib.sha256(raw).hexdigest()}\n{hashlib.sha256(said).hexdigest()}\n"
        write_bytes_atomic(anchor, sums.encode("ascii"))
        os.chmod(anchor, 0o600)
        for target, data in ((shown_path(root), said), (ledger_path(root), raw)):
            write_bytes_atomic(target, data)
            os.chmod(target, 0o600)


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record(root: Root, items: Iterable[tuple[str, Any]], how: str) -> None:
    """Confirm each (key, surface): she wrote it with `how`, or read it and said yes."""
    pairs = list(items)
    if not pairs:
        return
    moment = now()
    with _writing(root) as (entries, shown):
        for key, surface in pairs:
            entries[key] = Entry(digest(surface), moment, how)
            shown[key] = surface


def forget(root: Root, keys: Iterable[str]) -> list[str]:
    """Un-confirm; gives back the keys that were confirmed."""
    wanted = list(keys)
    with _writing(root) as (entries, _shown):
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
