"""The adversarial suite: every route a role might take through the wall (see harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "attack: an adversarial route through the wall (tests/attack/)"
    )


# Routes through `sdd guard` the attack of issue 24 found and this session did not close. Each is
# a test that asserts the refusal; it is marked a strict xfail, so the run shows every one as
# open, and closing one fails the run until its line leaves the list. Issue 24 is not resolved
# while this list holds a line.
_OPEN_ROUTES = Path(__file__).with_name("guard_open_routes.txt")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    open_routes = set(_OPEN_ROUTES.read_text(encoding="utf-8").splitlines())
    for item in items:
        if item.nodeid in open_routes:
            item.add_marker(
                pytest.mark.xfail(strict=True, reason="a route through sdd guard still open")
            )
