"""Every role sdd knows: built-ins, repo roles, user packs, packages' packs, shipped templates.

Built-ins always win a name. After them, the first source to name a role wins, in this order:
the repo (`.sdd/roles/`), other hosts' agent files in the product (`.claude/agents/*.md`,
`.github/agents/*.agent.md`, see `hostagents.py`), user packs (`$SDD_HOME/roles/`), packs
carried by installed packages (entry point group `sdd_git.roles`) and the templates shipped
with sdd. A malformed pack is skipped with a one-line warning; it never breaks the registry.

What a role file grants (its level, rules, model, `hidden`, ...) counts only once her trust
ledger holds it (CONTRACT §13, see `trust.py`): until then the role loads with no always_allow
rule and is never hidden, and no run of it starts.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from sdd_git import beneath
from sdd_git.errors import RecordError
from sdd_git.paths import display
from sdd_git.roles.cache import RoleCache
from sdd_git.roles.hostagents import HOST_SOURCES, agent_files, file_stem, identity
from sdd_git.roles.profile import RoleProfile
from sdd_git.roles.templates import shipped_dir
from sdd_git.roles.trust import PACK_SOURCES, apply_ledger, key_for, ledger_for
from sdd_git.root import Root
from sdd_git.trust.ledger import Ledger

ENTRY_POINT_GROUP = "sdd_git.roles"

EXECUTOR = RoleProfile(
    name="executor",
    label="Executor",
    job="Does one task itself, start to finish, and hands no part of it to another role.",
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
    job="Splits a large task into parts, gives each to another role, and checks what comes back.",
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


def _any_role_entry_points() -> bool:
    """Whether an installed distribution declares the group, without importing importlib.metadata.

    That import costs about 20 ms, more than listing 1,000 cached roles; reading each
    distribution's entry_points.txt costs a millisecond or two.
    """
    marker = f"[{ENTRY_POINT_GROUP}]"
    for folder in sys.path:
        try:
            entries = os.scandir(folder or ".")
        except OSError:
            continue
        with entries:
            for entry in entries:
                if entry.name.endswith((".dist-info", ".egg-info")):
                    try:
                        with open(
                            os.path.join(entry.path, "entry_points.txt"), encoding="utf-8"
                        ) as f:
                            if marker in f.read():
                                return True
                    except OSError:
                        continue
    return False


def _entry_point_texts(warnings: list[str]) -> Iterator[tuple[str, str]]:
    if not _any_role_entry_points():
        return
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


def _text(where: str | Path) -> str:
    return display(where) if isinstance(where, Path) else where


def _cap(
    profile: RoleProfile, cap: float | None, where: str | Path, warnings: list[str]
) -> RoleProfile:
    if cap is not None and profile.delegation == "allow" and profile.level > cap:
        warnings.append(
            f"warning: {_text(where)}: {profile.name} grants itself delegation allow at level "
            f"{profile.level_text}, above roles.max_grantable_delegation {cap:g}: loaded as deny"
        )
        return dataclasses.replace(profile, delegation="deny")
    return profile


def _problem_line(exc: RecordError) -> str:
    """One line for a file that did not load: its first problem, or the error itself."""
    problems = getattr(exc, "problems", None)
    return problems[0].render() if problems else exc.message


def _load(
    cache: RoleCache,
    key: str,
    path: Path | str,
    source: str,
    warnings: list[str],
    text: str | None = None,
    within: Path | None = None,
) -> RoleProfile | None:
    """A role from a file (`path`) or, for a package's pack, from `text` named by `path`.
    `within`: the product, for its own files (read with no link followed)."""
    try:
        if isinstance(path, Path):
            try:
                folder = None if source in HOST_SOURCES else path.parent.name
                profile, notes = cache.file_profile(key, path, source, folder, within)
            except (FileNotFoundError, NotADirectoryError):
                return None  # a folder without a ROLE.md is not a role
        else:
            profile, notes = cache.text_profile(key, (text or "").encode(), None, source, None)
    except (RecordError, OSError) as exc:
        line = _problem_line(exc) if isinstance(exc, RecordError) else str(exc.strerror)
        shown = (
            line
            if isinstance(path, Path) and isinstance(exc, RecordError)
            else f"{_text(path)}: {line}"
        )
        warnings.append(f"warning: skipped {shown}")
        return None
    if source != "template":
        warnings.extend(notes)
    return profile


def _ledger(root: Root | None, warnings: list[str]) -> Ledger | None:
    found = ledger_for(root)
    if found is not None and found.problem:
        warnings.append(f"warning: {found.problem}: nothing in this repo counts as confirmed")
    return found


class _Gathering:
    """The roles chosen so far, offered source by source in the order in which they win."""

    def __init__(
        self,
        root: Root | None,
        cache: RoleCache,
        warnings: list[str],
        progress: Progress | None = None,
    ) -> None:
        self.root = root
        self.progress = progress
        self.cache = cache
        self.warnings = warnings
        self.cap = cache.roles_config(root).max_grantable_delegation if root is not None else None
        self.chosen: dict[str, RoleProfile] = {r.name: r for r in BUILTINS}
        self.ledgers: list[
            Ledger | None
        ] = []  # her ledger, read once when the first file is offered
        self.broken: set[str] = set()  # a name whose file did not load: no later source stands in

    def offer(self, profile: RoleProfile | None, where: str | Path) -> None:
        if profile is None:
            if isinstance(where, Path):
                self.broken.add(where.parent.name)
            return
        if profile.name in self.broken:
            return
        if profile.name in BUILTIN_NAMES:
            self.warnings.append(
                f"warning: ignored {_text(where)}: '{profile.name}' is a built-in role "
                "and cannot be shadowed"
            )
            return
        if profile.name not in self.chosen:
            key = key_for(self.root, profile, where)
            if key is not None:
                if not self.ledgers:
                    self.ledgers.append(_ledger(self.root, self.warnings))
                profile = apply_ledger(profile, key, self.ledgers[0])
            self.chosen[profile.name] = _cap(profile, self.cap, where, self.warnings)

    def offer_files(self, base: Path, source: str, within: Path | None = None) -> None:
        names = _role_folders(base, within, self.warnings)
        folder = str(base)
        for done, name in enumerate(names, 1):
            if self.progress is not None:
                self.progress(done, len(names))
            path = Path(os.path.join(folder, name, "ROLE.md"))
            key = f"{source}:{name if source == 'repo' else path}"
            # Paths are shown only in warnings: making 3,000 of them relative costs more than
            # the whole listing.
            self.offer(_load(self.cache, key, path, source, self.warnings, within=within), path)

    def offer_agent_files(self, root: Root) -> None:
        # Another host's agent files, read where they are; a repo role of the same name (the
        # copy `sdd role add` makes) runs in place of one.
        for path, source in agent_files(root.path):
            key = f"{source}:{path}"
            profile = _load(self.cache, key, path, source, self.warnings, within=root.path)
            if profile is None:
                self.broken.add(identity(file_stem(path)))
            else:
                self.offer(profile, path)


def _role_folders(base: Path, within: Path | None, warnings: list[str]) -> list[str]:
    # os-level listing and string paths: pathlib's glob and sorting cost more than the
    # rest of listing 1,000 roles.
    if within is None:
        try:
            return sorted(n for n in os.listdir(base) if not n.startswith("."))
        except OSError:
            return []
    # The product's own roles: a role folder that is a link (or lies behind one) is
    # skipped and said, never followed.
    try:
        listed = beneath.entries(within, base)
    except beneath.Refused as exc:
        warnings.append(f"warning: skipped the repo's roles: {exc.message}")
        return []
    warnings.extend(f"warning: skipped {why}" for why in listed.refused)
    return [n for n in listed.folders if not n.startswith(".")]


# Told (done, of) as each role file of a folder is read, for a listing long enough to show.
Progress = Callable[[int, int], None]


def load_registry(
    root: Root | None, repo: bool = True, progress: Progress | None = None
) -> Registry:
    """Every role; `repo=False` leaves out the repo's own roles, to find what they shadow."""
    cache = RoleCache(root)
    warnings: list[str] = []
    gathering = _Gathering(root, cache, warnings, progress)
    if root is not None and repo:
        gathering.offer_files(root.sdd / "roles", "repo", root.path)
    if root is not None:
        gathering.offer_agent_files(root)
    gathering.offer_files(sdd_home() / "roles", "user")
    for where, text in _entry_point_texts(warnings):
        gathering.offer(_load(cache, f"package:{where}", where, "package", warnings, text), where)
    gathering.offer_files(shipped_dir(), "template")
    cache.save(prune=True)
    from sdd_git.roles import view

    # Her pins and hides of the roles whose file is not the repo's own (roles/view.py).
    return Registry(view.load(root).apply_all(gathering.chosen.values()), tuple(warnings))


def find_pack(root: Root | None, name: str) -> RoleProfile | None:
    """The pack named `name` (user or package), with its trust, even where a repo role of the
    same name shadows it (as the copy made when she saves a rule for a pack does)."""
    found = load_registry(root, repo=False).get(name)
    return found if found is not None and found.source in PACK_SOURCES else None


def find_role(
    root: Root | None, name: str, use_cache: bool = True
) -> tuple[RoleProfile, list[str]]:
    """One role by name, reading as little as it can (a repo of 1,000 roles reads one file).

    `use_cache=False` parses the repo's file itself: what a run enforces comes from the file.
    """
    for builtin in BUILTINS:
        if builtin.name == name:
            from sdd_git.roles import view

            return view.load(root).apply(builtin), []
    if root is not None:
        path = repo_role_path(root, name)
        if os.path.lexists(path):
            # A link is refused here with its words, never followed, and no other source
            # stands in for a name whose repo file is refused.
            cache = RoleCache(root if use_cache else None)
            profile, warnings = cache.file_profile(f"repo:{name}", path, "repo", name, root.path)
            cap = cache.roles_config(root).max_grantable_delegation
            profile = apply_ledger(profile, key_for(root, profile), ledger_for(root))
            profile = _cap(profile, cap, display(path), warnings)
            cache.save(prune=False)
            return profile, warnings
    registry = load_registry(root)
    found = registry.get(name)
    if found is None:
        named = (f"/{name}/", f"/{name}.", f"'{name}'")  # a repo role, an agent file, a name
        trouble = [w for w in registry.warnings if any(n in w for n in named)]
        if trouble:
            raise RecordError(
                f"role '{name}' did not load: {trouble[0].removeprefix('warning: ')}",
                hint="fix the file; `sdd role validate PATH` lists every problem",
            )
        raise RecordError(
            f"no role '{name}'",
            hint="`sdd role list --all` shows every role; `sdd role create NAME --job ...` adds",
        )
    return found, [w for w in registry.warnings if name in w]
