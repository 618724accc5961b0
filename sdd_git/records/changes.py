"""Change packs: `changes/CH-n/change.yaml`, with the spec each one owns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.errors import RecordError, UsageError
from sdd_git.paths import display
from sdd_git.records.ids import CHANGE_ID
from sdd_git.root import Root

STAGES = ("reading", "build", "verify", "release", "done")
KINDS = ("feature", "connection", "bug")
_SPEC_FILE = re.compile(r"^SPEC-(\d{4,})\.md$")


@dataclass(frozen=True)
class ChangePack:
    id: str
    title: str
    words: str
    kind: str
    stage: str
    spec: str
    path: Path  # the change.yaml file
    happened: str | None = None
    expected: str | None = None
    source: str | None = None  # the tracker issue it was started from (`sdd change new --from`)
    # She corrected the reading: her words stay the reading, and a role's later draft is only a
    # proposal beside it, until she takes one (`sdd correct reading CH --proposal`).
    corrected: bool = False

    @property
    def folder(self) -> Path:
        return self.path.parent

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "words": self.words,
            "kind": self.kind,
            "stage": self.stage,
            "spec": self.spec,
        }
        if self.kind == "bug":
            data["happened"] = self.happened
            data["expected"] = self.expected
        if self.source:
            data["source"] = self.source
        if self.corrected:
            data["corrected"] = True
        return data


def parse_change_id(text: str) -> str:
    if not CHANGE_ID.match(text):
        raise UsageError(
            f"{text!r} is not a change id",
            hint="a change id looks like CH-0001 (`sdd change list`)",
        )
    return text


def load(root: Root, change_id: str) -> ChangePack:
    path = root.change_dir(parse_change_id(change_id)) / "change.yaml"
    if not path.exists():
        raise RecordError(
            f"no change {change_id} (no {display(path)})",
            hint="`sdd change list` shows the change packs of this product",
        )
    return _from_file(path)


def _from_file(path: Path) -> ChangePack:
    from sdd_git.yamlio import read_mapping  # only on a cache miss: a warm listing reads no YAML

    data = read_mapping(path, path.parents[2])  # ROOT/changes/CH-0001/change.yaml
    folder_id = path.parent.name
    fields: dict[str, str] = {}
    for key in ("id", "words", "kind", "stage", "spec"):
        value = data.get(key)
        if not isinstance(value, str) or not value:
            raise RecordError(
                f"{display(path)}: key '{key}' is missing or not text",
                hint=f"add '{key}: ...' to the change pack (it is written by `sdd change new`)",
            )
        fields[key] = value
    if fields["id"] != folder_id:
        raise RecordError(
            f"{display(path)}: key 'id' is {fields['id']} but the folder is {folder_id}",
            hint=f"set 'id: {folder_id}'",
        )
    if fields["stage"] not in STAGES:
        raise RecordError(
            f"{display(path)}: key 'stage' is {fields['stage']!r}; "
            f"it must be one of {', '.join(STAGES)}"
        )
    if fields["kind"] not in KINDS:
        raise RecordError(
            f"{display(path)}: key 'kind' is {fields['kind']!r}; "
            f"it must be one of {', '.join(KINDS)}"
        )
    title = data.get("title")
    happened, expected = data.get("happened"), data.get("expected")
    source = data.get("source")
    return ChangePack(
        id=fields["id"],
        title=title if isinstance(title, str) and title else _title_from(fields["words"]),
        words=fields["words"],
        kind=fields["kind"],
        stage=fields["stage"],
        spec=fields["spec"],
        path=path,
        happened=happened if isinstance(happened, str) else None,
        expected=expected if isinstance(expected, str) else None,
        source=source if isinstance(source, str) else None,
        corrected=data.get("corrected") is True,
    )


def list_all(root: Root) -> list[ChangePack]:
    """Every change pack; unchanged files come from the parse cache, so 1,000 packs list fast."""
    import os

    from sdd_git.parsecache import ParseCache, fingerprint

    try:
        names = sorted(n for n in os.listdir(root.changes) if CHANGE_ID.match(n))
    except OSError:
        return []
    cache = ParseCache(root.local / "cache" / "changes")
    packs = []
    for name in names:
        path = Path(os.path.join(root.changes, name, "change.yaml"))
        try:
            stamp, settled = fingerprint(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        cached = cache.get(name, stamp)
        if isinstance(cached, dict):
            try:
                packs.append(ChangePack(path=path, **cached))
                continue
            except TypeError:
                pass  # an entry of another shape: parse the file again
        pack = _from_file(path)
        if settled:
            cache.put(
                name,
                stamp,
                {**pack.as_dict(), "happened": pack.happened, "expected": pack.expected},
            )
        packs.append(pack)
    cache.save(prune=True)
    return packs


def _title_from(words: str) -> str:
    line = " ".join(words.split())
    return line if len(line) <= 60 else line[:57].rstrip() + "..."


def _next_number(folder: Path, pattern: re.Pattern[str]) -> int:
    if not folder.is_dir():
        return 1
    numbers = [int(m.group(1)) for entry in folder.iterdir() if (m := pattern.match(entry.name))]
    return max(numbers, default=0) + 1


def create(
    root: Root,
    words: str,
    *,
    title: str | None = None,
    bug: bool = False,
    happened: str | None = None,
    expected: str | None = None,
    source: str | None = None,
) -> ChangePack:
    """A new change pack and its spec with an empty `S1 Reading`, from the person's words.
    `source`: the tracker issue whose words these are (`jira:ABC-12`), named in change.yaml."""
    if not words.strip():
        raise UsageError(
            "the change needs the person's words",
            hint='sdd change new "what you need, in your words"',
        )
    if bug and not (happened and happened.strip() and expected and expected.strip()):
        raise UsageError(
            "a bug keeps what happened and what was expected",
            hint='add both: --happened "WHAT HAPPENED" --expected "WHAT YOU EXPECTED"',
        )
    if not bug and (happened or expected):
        raise UsageError("--happened and --expected belong to a bug", hint="add --bug")
    # Imported here: `sdd change list`, the hot path, needs none of the writing machinery.
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.records.spec import new_spec_text
    from sdd_git.sink import person_write
    from sdd_git.yamlio import dump_yaml

    with person_write(root):
        change_id = f"CH-{_next_number(root.changes, CHANGE_ID):04d}"
        spec_id = f"SPEC-{_next_number(root.specs, _SPEC_FILE):04d}"
        pack = ChangePack(
            id=change_id,
            title=title.strip() if title and title.strip() else _title_from(words),
            words=words,
            kind="bug" if bug else "feature",
            stage="reading",
            spec=spec_id,
            path=root.change_dir(change_id) / "change.yaml",
            happened=happened if bug else None,
            expected=expected if bug else None,
            source=source,
        )
        meta: dict[str, Any] = {
            "id": spec_id,
            "title": pack.title,
            "kind": pack.kind,
            "change": change_id,
            "words": words,
            "scope": "product",
        }
        if bug:
            meta["happened"] = happened
            meta["expected"] = expected
        # The spec first: a change pack never points at a spec that is not there.
        spec_path = root.spec_file(spec_id)
        write_text_atomic(spec_path, new_spec_text(meta))
        try:
            write_text_atomic(pack.path, dump_yaml(pack.as_dict()))
        except BaseException:
            spec_path.unlink(missing_ok=True)
            raise
    return pack


def set_stage(pack: ChangePack, stage: str) -> ChangePack:
    """Write a new stage into change.yaml (caller holds the lock), keeping the person's comments."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.yamlio import edit_mapping

    write_text_atomic(pack.path, edit_mapping(pack.path, {"stage": stage}, pack.path.parents[2]))
    return _from_file(pack.path)


def set_corrected(pack: ChangePack, corrected: bool) -> ChangePack:
    """Say in change.yaml whether the reading holds her own correction (caller holds the lock)."""
    from sdd_git.atomicfile import write_text_atomic
    from sdd_git.yamlio import edit_mapping

    write_text_atomic(
        pack.path, edit_mapping(pack.path, {"corrected": corrected}, pack.path.parents[2])
    )
    return _from_file(pack.path)


def only_open(root: Root) -> ChangePack:
    open_packs = [p for p in list_all(root) if p.stage != "done"]
    if len(open_packs) == 1:
        return open_packs[0]
    if not open_packs:
        raise RecordError("there is no open change", hint='start one with sdd change new "WORDS"')
    names = ", ".join(p.id for p in open_packs)
    raise UsageError(
        f"more than one change is open ({names})", hint="name the change: sdd next CH-0001"
    )
