"""What `sdd role runs` reads from what she typed (runner/runfilters.py)."""

from __future__ import annotations

import pytest

from sdd_git.errors import UsageError
from sdd_git.runner.runfilters import check_change, since_stamp


def test_since_takes_an_age_or_a_date() -> None:
    now = 1_800_000_000.0  # 2027-01-15T08:00:00Z
    assert since_stamp("30m", now) == "2027-01-15T07:30:00Z"
    assert since_stamp("12h", now) == "2027-01-14T20:00:00Z"
    assert since_stamp("7d", now) == "2027-01-08T08:00:00Z"
    assert since_stamp("2026-12-01") == "2026-12-01T00:00:00Z"
    assert since_stamp("2026-12-01T10:30") == "2026-12-01T10:30:00Z"


@pytest.mark.parametrize("given", ["yesterday", "7 days", "-3d", "2026-13-01", "7y", ""])
def test_since_refuses_what_is_neither_an_age_nor_a_date(given: str) -> None:
    with pytest.raises(UsageError, match="--since takes an age"):
        since_stamp(given)


def test_a_change_id_is_read_in_any_case_and_anything_else_refused() -> None:
    assert check_change("ch-0007") == "CH-0007"
    with pytest.raises(UsageError, match="--change takes a change id"):
        check_change("CH-7; drop table runs")
