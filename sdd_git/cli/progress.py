"""A progress bar for long CLI work, in her terminal only, and only once the work has proved
long: a listing that a warm cache answers at once shows nothing, and one that reads a thousand
role files for the first time shows how far it is. Without a terminal nothing is printed.

Drawn on the interpreter's own stderr (as `sdd_git.cli.ticker` is): its text is sdd's own, and
the carriage returns that redraw it are the point."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

_AFTER = 0.3  # seconds of work before a bar is worth showing
_WIDTH = 30


class SlowBar:
    def __init__(self, what: str, stream: TextIO | None = None) -> None:
        self.what = what
        self.stream = stream if stream is not None else sys.__stderr__
        self.began = time.monotonic()
        # SDD_PROGRESS_AFTER (seconds) moves the threshold: 0 shows every bar, as a test needs.
        self.after = float(os.environ.get("SDD_PROGRESS_AFTER") or _AFTER)
        self.drawn = False
        self._last = -1

    def __call__(self, done: int, of: int) -> None:
        stream = self.stream
        if stream is None or of <= 0 or not stream.isatty():
            return
        if not self.drawn and time.monotonic() - self.began < self.after:
            return
        filled = _WIDTH * done // of
        if filled == self._last and done != of:
            return  # redraw only when the bar moves: a thousand writes would cost more
        self._last = filled
        bar = "#" * filled + "-" * (_WIDTH - filled)
        stream.write(f"\r\x1b[K  {self.what} [{bar}] {done}/{of}")
        stream.flush()
        self.drawn = True

    def done(self) -> None:
        """The bar goes: what the work prints takes its place."""
        if self.drawn and self.stream is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False
