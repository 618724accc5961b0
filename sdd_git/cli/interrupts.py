"""Ctrl-C and SIGTERM end a command as KeyboardInterrupt, and are never lost.

Python cannot raise an exception inside a weakref callback or a `__del__` (the garbage collector
runs those at any moment): it prints "Exception ignored" and drops it. A signal whose
KeyboardInterrupt lands there would be lost, and `sdd` would go on as if never told to stop
(a run would keep working, and, in a run, every later signal would be ignored as a repeat).
So a dropped KeyboardInterrupt is sent again, as SIGINT from another thread, to be raised in the
main thread at its next safe point.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

_lost = False


def _unraisable(previous: Any) -> Any:
    def hook(info: Any) -> None:
        global _lost
        if isinstance(info.exc_value, KeyboardInterrupt):
            import os
            import threading

            _lost = True
            # From another thread, a moment later: raised in the hook, it would be dropped again.
            threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
            return
        previous(info)

    return hook


def keep_interrupts() -> None:
    """Install the hook (once, in `main`)."""
    if not getattr(sys.unraisablehook, "sdd_keeps_interrupts", False):
        hook = _unraisable(sys.unraisablehook)
        hook.sdd_keeps_interrupts = True
        sys.unraisablehook = hook


def was_lost() -> bool:
    """Whether an interrupt was dropped and is being sent again (then forgotten): a handler that
    ignores repeats must let this one through."""
    global _lost
    lost, _lost = _lost, False
    return lost
