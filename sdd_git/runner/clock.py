"""Time, injectable: stop expiry is tested with a clock that tests move, not with sleeps."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def __call__(self) -> float: ...


def system_clock() -> float:
    return time.time()


def parse_duration(text: object, default_seconds: float) -> float:
    """`10m`, `90s`, `1h` or a number of seconds."""
    if text is None:
        return default_seconds
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    value = str(text).strip().lower()
    units = {"s": 1, "m": 60, "h": 3600}
    try:
        if value and value[-1] in units:
            return float(value[:-1]) * units[value[-1]]
        return float(value)
    except ValueError:
        return default_seconds
