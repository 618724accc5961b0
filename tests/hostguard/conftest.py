from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.hostguard.guardrun import furnish


@pytest.fixture
def product(root: Root) -> Path:
    return furnish(root)
