"""Her review of what waits for her confirmation (`sdd trust review | accept | forget | drop`).

Everything in the product that grants and that her ledger does not hold, each said in words
with where it came from when git knows (the last commit that touched it, and its author), and
everything that waits on it: events whose routines did not run, handoffs whose receiver did not
wake. Accepting confirms what `review` shows at that moment, then lets what waited run."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sdd_git.errors import UsageError
from sdd_git.events import waiting
from sdd_git.root import Root
from sdd_git.trust import ledger as trust_ledger
from sdd_git.trust.pending import Unconfirmed, ledger_for, product_item, settings_items
from sdd_git.trust.words import visible

OLD_TRUST_FILE = ".sdd/trust.yaml"


@dataclass(frozen=True)
class Reviewed:
    item: Unconfirmed
    commit: str | None = None  # the last commit that touched the file, short
    author: str | None = None

    def as_json(self) -> dict[str, object]:
        return {**self.item.as_json(), "commit": self.commit, "author": self.author}

    def words(self) -> str:
        where = ""
        if self.commit:
            where = f" (last changed in commit {self.commit}, by {self.author})"
        return visible(f"{self.item.words()}{where}")


@dataclass(frozen=True)
class Review:
    items: tuple[Reviewed, ...]
    waiting: tuple[waiting.Waiting, ...]
    notes: tuple[str, ...] = field(default=())


def unconfirmed(root: Root) -> list[Unconfirmed]:
    """Every grant in the product her ledger does not hold (none on a CI engine)."""
    from sdd_git.records import decisions
    from sdd_git.roles.registry import load_registry
    from sdd_git.roles.trust import all_skill_names, role_item, skill_items
    from sdd_git.routines.routine import load_routines, pending_item
    from sdd_git.trust.words import entry_words

    ledger = ledger_for(root)
    if ledger is None:
        return []
    found: list[Unconfirmed] = []
    found += settings_items(root, ledger)
    item = product_item(root, ledger)
    if item is not None:
        found.append(item)
    from sdd_git.errors import RecordError

    try:
        profiles = load_registry(root).roles
    except RecordError:
        profiles = ()  # settings that do not load: said as the settings' own item above
    for profile in profiles:
        role = role_item(profile, ledger)
        if role is not None:
            found.append(role)
    routines, _problems = load_routines(root)
    for routine in routines:
        pending = pending_item(root, routine, ledger)
        if pending is not None:
            found.append(pending)
    found += skill_items(root, all_skill_names(root), ledger)
    if root.decisions.is_file():
        log = decisions.load(root)
        ids = [e.id for e in log.entries]
        for entry in log.entries:
            if entry.id not in log.unconfirmed:
                continue
            twice = ids.count(entry.id) > 1
            accepts = _what_it_accepts(root, entry)
            found.append(
                Unconfirmed(
                    decisions.ledger_key(entry.id),
                    "decision",
                    f"decision {entry.id}",
                    (
                        ("its id appears twice in memory/decisions.yaml: fix the file first",)
                        if twice
                        else (
                            f"a decision you have not confirmed: {entry_words(entry.as_dict())}; "
                            "until you do, it opens no gate",
                            *accepts,
                        )
                    ),
                    None if twice else entry.as_dict(),
                    root.decisions,
                )
            )
    return found


def _what_it_accepts(root: Root, entry: Any) -> tuple[str, ...]:
    """For an accept-section decision, the text that confirming it accepts, whole: a yes to a
    merged decision is a yes to words she must see first."""
    from sdd_git.errors import RecordError
    from sdd_git.records.spec import read_spec

    section = entry.get("section")
    if entry.kind != "accept-section" or not isinstance(section, str) or "#" not in section:
        return ()
    spec_id, section_id = section.split("#", 1)
    try:
        spec = read_spec(root.specs / f"{spec_id}.md")
    except (RecordError, OSError):
        return (f"{section} does not exist now: confirming it accepts nothing",)
    for each in spec.sections:
        if each.id == section_id:
            if each.hash != entry.get("hash"):
                return (
                    f"its hash matches no text of {section} now: confirming it accepts nothing",
                )
            return (f"confirming it accepts {section} as it reads now: {shown_text(each.text)}",)
    return (f"{section} does not exist now: confirming it accepts nothing",)


def shown_text(text: str) -> str:
    from sdd_git.trust.words import shown

    return shown(text.strip())


def _provenance(root: Root, item: Unconfirmed) -> Reviewed:
    path = item.key.split("#", 1)[0]
    if path.startswith("/") or " " in path:
        return Reviewed(item)
    try:
        done = subprocess.run(
            # Only reads the history: no hook, pager, filter or fsmonitor runs for `log -1`.
            ["git", "--no-pager", "-c", "core.fsmonitor=", "log", "-1", "--format=%h%x00%an",
             "--", path],
            cwd=root.path, capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return Reviewed(item)
    commit, _, author = done.stdout.strip().partition("\0")
    return (
        Reviewed(item, commit or None, author or None) if done.returncode == 0 else Reviewed(item)
    )


def review(root: Root) -> Review:
    notes: list[str] = []
    ledger = trust_ledger.read(root)
    if ledger.problem:
        notes.append(f"{ledger.problem}: nothing counts as confirmed until you confirm it again")
    if (root.path / OLD_TRUST_FILE).exists():
        notes.append(
            f"{OLD_TRUST_FILE} grants nothing any more (a tracked file is anyone's): your "
            "confirmations are kept outside git now; you may delete it"
        )
    if trust_ledger.on_ci_engine():
        notes.append("this is a CI engine: it is the trust anchor here, and no ledger is read")
    items = tuple(_provenance(root, i) for i in unconfirmed(root))
    return Review(items, tuple(waiting.entries(root)), tuple(notes))


def _matches(item: Unconfirmed, wanted: str) -> bool:
    clean = wanted.strip().removeprefix("./")
    if item.key.startswith("/") and item.path is not None:  # her user file, by any spelling
        import os

        return os.path.realpath(os.path.expanduser(clean)) == os.path.realpath(item.path)
    return (
        item.key == clean
        or item.key.split("#", 1)[0] == clean.rstrip("/")
        or (item.path is not None and clean.endswith("/") and item.key.startswith(clean))
    )


def accept(
    root: Root, paths: Iterable[str] | None
) -> tuple[list[Unconfirmed], list[waiting.Waiting]]:
    """Confirm the files named (None: every one), as `review` shows them now; then what waited
    on them runs. A name that matches nothing is an error, and nothing is confirmed."""
    from sdd_git.sink import person_write
    from sdd_git.trust.state import refuse_tracked_state

    refuse_tracked_state(root, "confirming")  # what would run then must be sdd's own state
    items = unconfirmed(root)
    if paths is None:
        chosen = items
    else:
        wanted = list(paths)
        chosen = []
        for name in wanted:
            hits = [i for i in items if _matches(i, name)]
            if not hits:
                raise UsageError(
                    f"{name} has nothing waiting for your confirmation",
                    hint="`sdd trust review` lists what does",
                )
            chosen += [h for h in hits if h not in chosen]
    refused = [i for i in chosen if i.surface is None]
    if refused:
        raise UsageError(
            f"cannot confirm {refused[0].name}: {refused[0].changes[0]}",
            hint="fix the file, then run `sdd trust review` again",
        )
    with person_write(root):
        trust_ledger.record(root, [(i.key, i.surface) for i in chosen], "sdd trust accept")
    released = waiting.release(root) if chosen or paths is None else []
    return chosen, released


def forget(root: Root, paths: Iterable[str]) -> list[str]:
    """Un-confirm: the files named count again only once she confirms them."""
    from sdd_git.sink import person_write

    wanted = [p.strip().removeprefix("./") for p in paths]
    with person_write(root):
        keys = [
            k
            for k in trust_ledger.read(root).entries
            if any(k == w or k.split("#", 1)[0] == w for w in wanted)
        ]
        if not keys:
            raise UsageError(
                f"you have not confirmed {', '.join(wanted)}", hint="nothing was changed"
            )
        return trust_ledger.forget(root, keys)


def drop(root: Root, ids: list[str] | None) -> list[waiting.Waiting]:
    from sdd_git.sink import person_write
    from sdd_git.trust.state import refuse_tracked_state

    refuse_tracked_state(root, "dropping what waits")
    with person_write(root):
        dropped = waiting.drop(root, ids)
    if ids is not None and not dropped:
        raise UsageError(f"nothing waits under {', '.join(ids)}", hint="`sdd trust review`")
    return dropped
