"""Release records: `memory/releases/R-n.md`, whose notes quote each change's words verbatim.

Generating a release never pushes or deploys. The git tag is tried; when it cannot be written,
the release still exists and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import GateError, NoSpecError, UsageError
from sdd_git.records import changes, decisions
from sdd_git.records.scenarios import ScenarioStatus, statuses
from sdd_git.root import Root
from sdd_git.sink import person_write
from sdd_git.yamlio import dump_yaml

_RELEASE_FILE = re.compile(r"^R-(\d{4,})\.md$")


@dataclass(frozen=True)
class TagOutcome:
    name: str | None
    written: bool
    reason: str | None  # why it was not written
    commit: str | None = None  # the commit the tag points at (HEAD when it was written)


@dataclass(frozen=True)
class Release:
    id: str
    path: Path
    changes: tuple[str, ...]
    tag: TagOutcome
    decision: str


def _next_release_id(root: Root) -> str:
    from sdd_git import beneath

    # Every name counts, a link too: a new release never takes the number of one already there.
    listed = beneath.entries(root.path, root.releases)
    names = [*listed.files, *listed.folders, *(w.split(" ", 1)[0] for w in listed.refused)]
    numbers = [int(m.group(1)) for n in names if (m := _RELEASE_FILE.match(n.rsplit("/", 1)[-1]))]
    return f"R-{max(numbers, default=0) + 1:04d}"


def _quote(words: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in words.splitlines() or [""])


def generate(
    root: Root,
    change_ids: list[str],
    tag: str | None,
    words: str | None = None,
    again: bool = False,
) -> Release:
    if not change_ids:
        raise UsageError(
            "name the changes to release", hint="sdd release generate CH-0001 [CH-0002 ...]"
        )
    if len(set(change_ids)) != len(change_ids):
        raise UsageError("a change is named twice")
    with person_write(root):
        packs = [changes.load(root, change_id) for change_id in change_ids]
        log = decisions.load(root)
        for pack in packs:
            _require_accepted_section(root, pack, log)
        if not again:
            _refuse_released_twice(log, [p.id for p in packs])
        all_statuses = {pack.id: statuses(pack.id, pack.folder, log) for pack in packs}
        for pack in packs:
            for status in all_statuses[pack.id]:
                reason = status.blocks_release
                if reason is not None:
                    raise GateError(
                        f"cannot release {pack.id}: {reason}; nothing was written",
                        hint=(
                            f"record a pass (sdd qa record {pack.id}/{status.scenario.id} pass "
                            f'"...") or accept the failure (sdd accept failure '
                            f'{pack.id}/{status.scenario.id} "WORDS")'
                        ),
                    )
        release_id = _next_release_id(root)
        decision_id = decisions.next_id(log.entries)
        outcome = _write_tag(root, tag, release_id) if tag else TagOutcome(None, False, None)
        at = decisions.now_iso()
        meta: dict[str, Any] = {
            "id": release_id,
            "changes": [p.id for p in packs],
            "decision": decision_id,
            "at": at,
            "tag": outcome.name,
            "tag_written": outcome.written,
        }
        if outcome.written:
            # sdd commits nothing, so the tag is on HEAD, which does not hold this file yet.
            meta["tag_commit"] = outcome.commit
        if outcome.reason:
            meta["tag_note"] = f"the tag was not written: {outcome.reason}"
        path = root.releases / f"{release_id}.md"
        decision_words = words if words and words.strip() else "\n".join(p.words for p in packs)
        # The release file first, then its decision: if either fails, neither (nor the tag) stays.
        try:
            write_text_atomic(
                path,
                "---\n"
                + dump_yaml(meta)
                + "---\n"
                + _notes(meta, packs, all_statuses, log, outcome),
            )
            decision = decisions.append(
                root, "release", decision_words, release=release_id, changes=[p.id for p in packs]
            )
        except BaseException:
            path.unlink(missing_ok=True)
            if outcome.written and outcome.name:
                _delete_tag(root, outcome.name)
            raise
        return Release(release_id, path, tuple(p.id for p in packs), outcome, decision.id)


def _refuse_released_twice(log: Any, change_ids: list[str]) -> None:
    """A second release of the same changes is a choice she makes on purpose, not by running
    the command twice."""
    for entry in log.active("release"):
        released = set(entry.fields.get("changes") or [])
        again = [c for c in change_ids if c in released]
        if again:
            raise UsageError(
                f"{', '.join(again)} already released in {entry.fields.get('release')} "
                f"({entry.id}); nothing was written",
                hint="to release them again on purpose: sdd release generate ... --again",
            )


def _require_accepted_section(root: Root, pack: changes.ChangePack, log: Any) -> None:
    """No release for a change whose spec has no accepted section: exit 4, nothing written."""
    from sdd_git.records.spec import read_spec

    spec = read_spec(root.spec_file(pack.spec))
    if any(log.section_acceptance(s.full_id, s.hash) for s in spec.sections):
        return
    raise NoSpecError(
        f"cannot release {pack.id}: its spec {pack.spec} has no accepted section; nothing was "
        "written",
        hint=f"accept its reading first: sdd accept reading {pack.id}",
    )


def _notes(
    meta: dict[str, Any],
    packs: list[changes.ChangePack],
    all_statuses: dict[str, list[ScenarioStatus]],
    log: decisions.DecisionLog,
    outcome: TagOutcome,
) -> str:
    body = [f"# Release {meta['id']}", ""]
    if outcome.reason:
        body += [f"The git tag {outcome.name} was not written: {outcome.reason}.", ""]
    for pack in packs:
        body += [f"## {pack.id}: {pack.title}", "", _quote(pack.words), ""]
        for status in all_statuses[pack.id]:
            if status.failure_accepted_by and status.result and status.result.result == "fail":
                accepted = log.by_id(status.failure_accepted_by)
                body += [
                    f"Known failure accepted ({status.scenario.id}, {status.scenario.title}):",
                    "",
                    _quote(accepted.words),
                    "",
                ]
    return "\n".join(body)


def _delete_tag(root: Root, name: str) -> None:
    import pygit2

    pygit2.Repository(str(root.path)).references.delete(f"refs/tags/{name}")


def _write_tag(root: Root, name: str, release_id: str) -> TagOutcome:
    import pygit2

    try:
        repo = pygit2.Repository(str(root.path))
    except pygit2.GitError as exc:
        return TagOutcome(name, False, f"no git repository here ({exc})")
    if not pygit2.reference_is_valid_name(f"refs/tags/{name}"):
        return TagOutcome(name, False, f"'{name}' is not a valid tag name")
    if f"refs/tags/{name}" in repo.references:
        return TagOutcome(name, False, f"a tag named '{name}' already exists")
    if repo.head_is_unborn:
        return TagOutcome(name, False, "the repository has no commit yet to tag")
    try:
        signature = repo.default_signature
        repo.create_tag(
            name,
            repo.head.target,
            pygit2.enums.ObjectType.COMMIT,
            signature,
            f"sdd release {release_id}\n",
        )
    except (pygit2.GitError, KeyError, ValueError) as exc:
        return TagOutcome(name, False, str(exc))
    return TagOutcome(name, True, None, str(repo.head.target))
