"""Her view of the role list: which roles she pinned or hid, for the roles whose file is not this
repo's own to edit (the built-ins, the templates shipped with sdd, user packs, packages' packs).

A repo role keeps `pinned` and `hidden` in its ROLE.md, as the contract says, and another host's
agent file gets the key beside its own. The others are kept here, in `.sdd/local/role-view.json`:

- not in the shipped template or the pack: those are sdd's, or shared by every product of hers
  (pinning the builder in one product must not pin it in all of them, or change sdd's files);
- in `.sdd/local/`, which is hers alone and never tracked: nothing that arrives by git (a merge,
  a clone) can hide a role from her, so what this file says needs no confirmation;
- only what she said: a name absent here keeps what its file says.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sdd_git import statefolders
from sdd_git.errors import RecordError
from sdd_git.roles.profile import RoleProfile
from sdd_git.root import Root

FLAGS = ("pinned", "hidden")
# Sources whose flags live here: their files are not the product's own to edit.
VIEWED_SOURCES = frozenset({"builtin", "template", "user", "package"})
_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class RoleView:
    flags: dict[str, dict[str, bool]]  # flag -> role name -> what she said

    def apply(self, profile: RoleProfile) -> RoleProfile:
        if profile.source not in VIEWED_SOURCES:
            return profile
        pinned = self.flags.get("pinned", {}).get(profile.name, profile.pinned)
        hidden = self.flags.get("hidden", {}).get(profile.name, profile.hidden)
        if (pinned, hidden) == (profile.pinned, profile.hidden):
            return profile
        return dataclasses.replace(profile, pinned=pinned, hidden=hidden)

    def apply_all(self, profiles: Iterable[RoleProfile]) -> tuple[RoleProfile, ...]:
        return tuple(self.apply(p) for p in profiles)


def view_path(root: Root) -> Path:
    return root.local / "role-view.json"


def load(root: Root | None) -> RoleView:
    """What she said of the roles; nothing when she said nothing (or the file is unreadable:
    a view is only a view, and never blocks a listing)."""
    if root is None:
        return RoleView({})
    path = view_path(root)
    try:
        raw = statefolders.read_bytes(path, _MAX_BYTES)
        if _tracked(root):
            return RoleView({})  # git wrote it (a merge, over hers): nobody's view
        data = json.loads(raw)
    except (OSError, ValueError, RecordError, RecursionError):  # deep nesting: not a view
        return RoleView({})
    if not isinstance(data, dict):
        return RoleView({})
    flags: dict[str, dict[str, bool]] = {}
    for flag in FLAGS:
        names = data.get(flag)
        if isinstance(names, dict):
            flags[flag] = {str(k): v for k, v in names.items() if isinstance(v, bool)}
    return RoleView(flags)


def _tracked(root: Root) -> bool:
    """Whether git tracks the view file: `.sdd/local/` is ignored, yet a pull request can
    force-add a file there, and a merge then writes it over hers. Asked only when the file is
    there (she pinned or hid something), so `sdd role list` pays for it only then."""
    from sdd_git.trust.state import tracked_state

    return f"{statefolders.STATE_FOLDERS[0]}/role-view.json" in tracked_state(root)


def set_flag(root: Root, name: str, flag: str, value: bool) -> Path:
    """Record her pin or hide of the role `name`. The caller holds the record's lock."""
    from sdd_git.atomicfile import write_text_atomic

    assert flag in FLAGS
    flags = {f: dict(names) for f, names in load(root).flags.items()}
    flags.setdefault(flag, {})[name] = value
    path = view_path(root)
    statefolders.make_folder(path.parent)
    write_text_atomic(path, json.dumps(flags, indent=2, sort_keys=True) + "\n")
    return path
