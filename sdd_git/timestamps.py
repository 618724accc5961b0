"""The one timestamp form sdd writes (UTC, to the second, `2026-01-02T03:04:05Z`) read back."""

from __future__ import annotations

import time

STAMP_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def epoch(stamp: str) -> float:
    """Seconds since the epoch of a `STAMP_FORMAT` time; a ValueError for any other text."""
    import calendar

    return float(calendar.timegm(time.strptime(stamp, STAMP_FORMAT)))
