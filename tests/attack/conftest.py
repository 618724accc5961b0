"""The adversarial suite: every route a role might take through the wall (see harness.py)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "attack: an adversarial route through the wall (tests/attack/)"
    )
