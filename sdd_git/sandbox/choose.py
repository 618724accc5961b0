"""Which sandbox holds a command on this machine, chosen once per process.

`SDD_SANDBOX` picks one: `auto` (the default: the strongest that works), `bwrap`, `landlock`,
`seatbelt` or `none`. A named one that does not work here gives `none`, saying why, never a
weaker one in silence."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import lru_cache

NO_SANDBOX_WARNING = "no sandbox: this command runs with all your rights"


@dataclass(frozen=True)
class Sandbox:
    name: str  # "bwrap", "landlock", "seatbelt" or "none"
    why: str = ""  # for "none": why there is none
    binary: str = ""  # bwrap's path

    @property
    def working(self) -> bool:
        return self.name != "none"

    @property
    def label(self) -> str:
        """As the run log and every stop name it: `bwrap`, `landlock`, or `none: <why>`."""
        return self.name if self.working else f"none: {self.why}"


def _bwrap() -> Sandbox | str:
    from sdd_git.sandbox import bwrap

    binary, why = bwrap.probe()
    return Sandbox("bwrap", binary=binary) if binary else why


def _landlock() -> Sandbox | str:
    from sdd_git.sandbox import landlock

    abi = landlock.abi()
    return Sandbox("landlock") if abi > 0 else "this kernel has no Landlock"


def _seatbelt() -> Sandbox | str:
    return (
        Sandbox("seatbelt")
        if os.path.exists("/usr/bin/sandbox-exec")
        else "sandbox-exec is not on this Mac"
    )


@lru_cache(maxsize=1)
def current() -> Sandbox:
    wanted = (os.environ.get("SDD_SANDBOX") or "auto").strip().lower()
    if wanted == "none":
        return Sandbox("none", why="SDD_SANDBOX=none")
    if sys.platform == "darwin":
        order = {"auto": (_seatbelt,), "seatbelt": (_seatbelt,)}
    elif sys.platform.startswith("linux"):
        order = {"auto": (_bwrap, _landlock), "bwrap": (_bwrap,), "landlock": (_landlock,)}
    else:
        return Sandbox("none", why=f"sdd has no sandbox for {sys.platform}")
    tries = order.get(wanted)
    if tries is None:
        return Sandbox("none", why=f"SDD_SANDBOX={wanted} is not a sandbox sdd has here")
    reasons = []
    for attempt in tries:
        found = attempt()
        if isinstance(found, Sandbox):
            return found
        reasons.append(found)
    return Sandbox("none", why="; ".join(reasons))
