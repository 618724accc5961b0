"""The `real_model` suite: runs against a real local model server (issue 11)."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "real_model: runs against a real model server at SDD_REAL_MODEL_URL "
        "(start one: python3 .ci/model-server start)",
    )
