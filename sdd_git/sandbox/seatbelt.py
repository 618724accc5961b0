"""Seatbelt: the macOS sandbox, as an SBPL profile for `/usr/bin/sandbox-exec -p`. Closed by
default; reads allowed everywhere except the hidden credential paths; writes only beneath the
product folder and the scratch folder (and a few devices), never beneath a read-only path; no
network unless the policy says network.

Rule order matters: when several rules match one operation, the last one in the profile decides.
Sources: the precedence tests public sandbox projects run against sandbox-exec ("allow child, then
deny parent: the child is denied; deny parent, then allow child: the child is allowed"), and the
profile generators built on it (nono sorts its rules broadest first for that reason; sx and the
community SBPL references state "last match wins"). OpenAI Codex's seatbelt.rs sidesteps order with
`(require-not ...)` inside its write allow. So the profile lists the broad read allow, then the
write allow, then the read-only write denials, then the hidden-path denials last.

Seatbelt matches the path a file really has, links resolved (/tmp is /private/tmp), so a path
whose real spelling differs is written in both spellings.
"""

from __future__ import annotations

import os
from pathlib import Path

from sdd_git.sandbox.policy import Policy

SANDBOX_EXEC = "/usr/bin/sandbox-exec"

# What ordinary programs need beyond files; the same ground as OpenAI Codex's
# seatbelt_base_policy.sbpl, itself taken from Chromium's common.sb.
_BASE = """\
(version 1)
(deny default)

; Children inherit the profile; a signal reaches only the command's own processes.
(allow process-exec)
(allow process-fork)
(allow signal (target self))
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))

(allow sysctl-read)
(allow user-preference-read)
(allow mach-host*)
; User and group lookups (getpwuid), power assertions, the system log.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership")
  (global-name "com.apple.PowerManagement.control")
  (global-name "com.apple.system.logger")
  (global-name "com.apple.system.notification_center"))
; Python's multiprocessing locks.
(allow ipc-posix-sem)
(allow ipc-posix-shm)
; openpty() and the terminal the command was started from.
(allow pseudo-tty)
"""

# Name resolution and TLS trust, only when the command may use the network.
_NETWORK = """\
(allow network*)
(allow mach-lookup
  (global-name "com.apple.SystemConfiguration.DNSConfiguration")
  (global-name "com.apple.SystemConfiguration.configd")
  (global-name "com.apple.dnssd.service")
  (global-name "com.apple.trustd")
  (global-name "com.apple.trustd.agent"))
"""

_DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/dtracehelper",
)


def _checked(path: str | Path) -> str:
    text = os.fspath(path)
    # A NUL ends the path the kernel sees; a line break has no escape every SBPL reader honours.
    if "\0" in text or "\n" in text or "\r" in text:
        raise ValueError(f"a sandbox path cannot hold a NUL or a line break: {text!r}")
    return text


def quote(path: str | Path) -> str:
    """An SBPL string literal that reads back as exactly this path."""
    text = _checked(path)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _spellings(path: Path) -> list[str]:
    written = os.path.normpath(os.path.abspath(_checked(path)))
    real = os.path.realpath(path)
    return [written] if real == written else [written, real]


def _filters(path: Path, kind: str) -> list[str]:
    return [f"({kind} {quote(spelling)})" for spelling in _spellings(path)]


def _hidden_filters(path: Path) -> list[str]:
    # A folder hides everything beneath it; a file only itself.
    return _filters(path, "subpath" if not os.path.isfile(path) else "literal")


def _rule(action: str, operations: str, filters: list[str]) -> str:
    return f"({action} {operations}\n  " + "\n  ".join(filters) + ")\n"


def profile(policy: Policy) -> str:
    """The whole SBPL profile for one command."""
    out = [_BASE]
    out.append("\n; Reads: everywhere, but for the hidden paths denied at the end.\n")
    out.append("(allow file-read*)\n")
    out.append("\n; Writes: the product folder and the scratch folder, and a few devices.\n")
    writable = _filters(policy.product, "subpath") + _filters(policy.scratch, "subpath")
    writable += [f"(literal {quote(device)})" for device in _DEVICES]
    writable.append('(regex #"^/dev/ttys[0-9]+$")')
    out.append(_rule("allow", "file-write*", writable))
    terminals = [f"(literal {quote(device)})" for device in ("/dev/tty", "/dev/ptmx")]
    out.append(_rule("allow", "file-ioctl", [*terminals, '(regex #"^/dev/ttys[0-9]+$")']))
    if policy.read_only or policy.kept:
        out.append("\n; Read-only inside the product: after the write allow, so it wins.\n")
        kept = (*policy.read_only, *policy.kept)
        denied = [item for path in kept for item in _filters(path, "subpath")]
        out.append(_rule("deny", "file-write*", denied))
    if policy.hidden:
        out.append("\n; Last of all, so that no allow above reaches a credential file.\n")
        hidden = [item for path in policy.hidden for item in _hidden_filters(path)]
        out.append(_rule("deny", "file-read* file-write*", hidden))
    out.append("\n; Network.\n")
    out.append(_NETWORK if policy.network else "(deny network*)\n")
    return "".join(out)


def argv(policy: Policy, command: list[str]) -> list[str]:
    """The argv that runs `command` under the profile."""
    return [SANDBOX_EXEC, "-p", profile(policy), *command]
