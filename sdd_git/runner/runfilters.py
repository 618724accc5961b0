"""What `sdd role runs` and `sdd usage` narrow their runs to, read from what she typed: an
age or a date, a change id, words to search for. A value that is none of these is refused
before anything is read (exit 2), in words, with a hint."""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass

from sdd_git.errors import UsageError


@dataclass(frozen=True)
class Filters:
    """What `sdd role runs` narrows the list to; None is no narrowing."""

    role: str | None = None
    limit: int | None = None
    since: str | None = None  # a `2026-01-02T03:04:05Z` time: runs started then or later
    status: str | None = None
    search: str | None = None
    change: str | None = None


_AGE = re.compile(r"(\d{1,7})([smhdw])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DATES = ("%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ")


def since_stamp(text: str, now: float | None = None) -> str:
    """`--since`: an age (`30m`, `12h`, `7d`, `2w`) or a UTC date (`2026-12-01`, with
    `T10:30` if she likes), as the log's own time form."""
    given = text.strip()
    age = _AGE.fullmatch(given.lower())
    if age:
        moment = (time.time() if now is None else now) - int(age[1]) * _UNIT[age[2]]
        return _stamp(moment)
    import calendar

    for form in _DATES:
        with contextlib.suppress(ValueError):
            return _stamp(calendar.timegm(time.strptime(given.upper(), form)))
    raise UsageError(
        f"--since takes an age such as 30m, 12h or 7d, or a date such as 2026-12-01; "
        f"'{text}' is neither",
        hint="sdd role runs --since 7d",
    )


def check_change(text: str) -> str:
    if re.fullmatch(r"CH-\d{1,9}", text.strip().upper()) is None:
        raise UsageError(
            f"--change takes a change id such as CH-0001; '{text}' is not one",
            hint="sdd change list shows the changes",
        )
    return text.strip().upper()


def check_search(text: str) -> str:
    if not text.strip():
        raise UsageError("--search needs words to look for", hint='sdd role runs --search "hotel"')
    return text


def _stamp(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
