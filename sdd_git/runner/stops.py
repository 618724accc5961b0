"""Pending stops: `.sdd/local/stops/<id>.json`, one per question waiting for the person."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sdd_git import statefolders
from sdd_git.errors import RecordError
from sdd_git.root import Root

APPROVAL_CHOICES = ("allow once", "allow for this run", "always allow", "deny")
ASK_FIRST_CHOICES = ("allow once", "deny")
READING_CHOICES = ("accept", "correct", "not yet")
PLAN_CHOICES = ("accept", "correct", "not yet")
ORIGINS = ("person", "routine", "event", "role")


@dataclass(frozen=True)
class Stop:
    id: str
    run: str
    role: str
    kind: str  # "approval", "draft", "reading" or "plan"
    action: str  # in the person's words
    choices: tuple[str, ...]
    origin: str
    created_at: float
    expires_at: float | None
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    call_id: str | None = None
    change: str | None = None
    sandbox: str | None = None  # the sandbox a command would run in, as the run log names it

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["choices"] = list(self.choices)
        data["created_at"] = iso(self.created_at)
        data["expires_at"] = iso(self.expires_at) if self.expires_at is not None else None
        return data


def new_stop_id() -> str:
    import secrets  # lazily: `sdd role runs` reads stops, and never makes one

    return f"stop-{secrets.token_hex(3)}"


def stops_folder(root: Root) -> Path:
    return root.local / "stops"


def _path(root: Root, stop_id: str) -> Path:
    if not stop_id.replace("-", "").isalnum():
        raise RecordError(f"'{stop_id}' is not a stop id", hint="`sdd stops` lists the stops")
    return stops_folder(root) / f"{stop_id}.json"


def save(root: Root, stop: Stop) -> None:
    from sdd_git.atomicfile import write_text_atomic

    data = asdict(stop)
    data["choices"] = list(stop.choices)
    write_text_atomic(_path(root, stop.id), json.dumps(data, ensure_ascii=False, indent=2))


def load(root: Root, stop_id: str) -> Stop:
    path = _path(root, stop_id)
    try:
        data = json.loads(statefolders.read_text(path))
    except (FileNotFoundError, NotADirectoryError):
        raise RecordError(
            f"no pending stop {stop_id}",
            hint="`sdd stops` lists the pending stops; a stop already answered is gone",
        ) from None
    except ValueError:
        raise RecordError(f"{path}: this stop file is not JSON") from None
    try:
        data["choices"] = tuple(str(c) for c in data.get("choices", ()))
        stop = Stop(**data)
        float(stop.created_at)
        if stop.expires_at is not None:
            float(stop.expires_at)
    except (TypeError, ValueError, AttributeError):
        raise RecordError(
            f"{path}: this stop file is damaged",
            hint=f"`sdd role stop {data.get('run', 'RUN')}` closes its run; the log keeps it",
        ) from None
    return stop


def pending(root: Root) -> list[Stop]:
    folder = stops_folder(root)
    statefolders.check(folder)
    if not folder.is_dir():
        return []
    from sdd_git.trust.state import tracked_state

    # A stop file git tracks came with the repository: nobody here raised it.
    tracked = {p.rsplit("/", 1)[-1] for p in tracked_state(root) if "/stops/" in p}
    found = []
    for path in sorted(folder.glob("stop-*.json")):
        if path.name in tracked:
            continue
        try:
            stop = load(root, path.stem)
        except (RecordError, TypeError):
            continue
        if stop.kind == "reading" and _reading_answered(root, stop):
            remove(root, stop.id)
            continue
        if stop.kind == "plan" and _plan_answered(root, stop):
            remove(root, stop.id)
            continue
        found.append(stop)
    return sorted(found, key=lambda s: s.created_at)


def _reading_answered(root: Root, stop: Stop) -> bool:
    """A reading stop is answered by the person's own commands: accepting the reading, or
    correcting it (its text is then no longer the text the stop asked about)."""
    from sdd_git.records import changes, decisions
    from sdd_git.records.spec import read_spec

    try:
        pack = changes.load(root, stop.change or "")
        section = read_spec(root.spec_file(pack.spec)).section("S1")
    except RecordError:
        return True
    if section.hash != stop.args.get("hash"):
        return True
    return decisions.load(root).section_acceptance(section.full_id, section.hash) is not None


def _plan_answered(root: Root, stop: Stop) -> bool:
    """A plan stop is answered by accepting the plan, or by editing it (her correction: the
    file is then no longer the plan the stop asked about, and waits for her acceptance)."""
    from sdd_git.records import changes
    from sdd_git.records.plan import plan_accepted, plan_hash

    try:
        pack = changes.load(root, stop.change or "")
    except RecordError:
        return True
    path = pack.folder / "plan.yaml"
    if not path.exists() or plan_hash(path) != stop.args.get("hash"):
        return True
    return plan_accepted(root, pack.id) is not None


def remove(root: Root, stop_id: str) -> None:
    _path(root, stop_id).unlink(missing_ok=True)


def iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
