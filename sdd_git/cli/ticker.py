"""An elapsed-time line while the model thinks: in her terminal, a provider call that takes a
while shows `· waiting for builder's model: 12 s`, rewritten in place each second, and gone
when the answer comes. Without a terminal nothing is printed (logs and CI stay as they were).

The line is written to the interpreter's own stderr, not through sdd's visible stream: its text
is fixed here, and the carriage return and erase that rewrite it are the point."""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

_FIRST = 1.0  # seconds before the line appears: a quick answer shows nothing at all
_EVERY = 1.0
_ALL: list[Ticker] = []


def stop_all() -> None:
    """Every line still ticking goes: an error, an interruption or the result is printed next."""
    for ticker in _ALL:
        ticker.stop()


class Ticker:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.__stderr__
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown = False
        _ALL.append(self)

    @property
    def on(self) -> bool:
        stream = self.stream
        return stream is not None and stream.isatty()

    def start(self, what: str) -> None:
        self.stop()
        if not self.on:
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, args=(what, self._stop), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        if self._shown and self.stream is not None:
            self.stream.write("\r\x1b[K")  # the line goes: the next one takes its place
            self.stream.flush()
        self._shown = False

    def _tick(self, what: str, stop: threading.Event) -> None:
        began = time.monotonic()
        if stop.wait(_FIRST):
            return
        while True:
            seconds = int(time.monotonic() - began)
            if self.stream is None:
                return
            self.stream.write(f"\r\x1b[K  · {what}: {seconds} s")
            self.stream.flush()
            self._shown = True
            if stop.wait(_EVERY):
                return
