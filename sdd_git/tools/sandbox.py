"""The kernel's wall under the guard: `run_command` runs inside bubblewrap where it exists, with
the person's record, sdd's own files and git's folder mounted read-only, and no network unless
the stop named it. The parser may miss a route; a read-only mount does not."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

READ_ONLY = ("memory", "changes", ".sdd", ".git")


@lru_cache(maxsize=1)
def availability() -> str:
    """ "bubblewrap", or why it is unavailable (recorded in every run log)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return "unavailable: bwrap (bubblewrap) is not installed"
    try:
        probe = subprocess.run(
            [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "true"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable: bwrap failed to start ({exc})"
    if probe.returncode != 0:
        reason = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else "no reason"
        return f"unavailable: bwrap cannot make a sandbox here ({reason})"
    return "bubblewrap"


def prefix(root: Path, network: bool) -> list[str]:
    """The argv that runs a command in the sandbox, or [] when there is no sandbox."""
    if availability() != "bubblewrap":
        return []
    argv = [
        shutil.which("bwrap") or "bwrap",
        "--bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--die-with-parent",
    ]  # fmt: skip
    for name in READ_ONLY:
        for path in {root / name, (root / name).resolve()}:
            if path.exists():
                argv += ["--ro-bind", str(path), str(path)]
    if not network:
        argv.append("--unshare-net")
    return [*argv, "--"]
