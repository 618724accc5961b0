"""Every route of routes.py, played by the careless person (see harness.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.attack.harness import Route, play
from tests.attack.routes import CLASSES, ROUTES

pytestmark = pytest.mark.attack


def test_the_suite_has_enough_routes_in_every_class() -> None:
    ids = [r.id for r in ROUTES]
    assert len(ids) == len(set(ids)), "route ids must be unique"
    per_class = Counter(r.cls for r in ROUTES)
    assert set(per_class) == set(CLASSES)
    assert all(count >= 10 for count in per_class.values()), per_class
    assert len(ROUTES) >= 150, len(ROUTES)
    assert all(r.id.startswith(f"class{r.cls}-") for r in ROUTES)


@pytest.mark.parametrize("route", ROUTES, ids=[r.id for r in ROUTES])
def test_route(route: Route, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attack = play(route, tmp_path, monkeypatch)
    if attack.problems:
        pytest.fail(f"{route.id}: {route.what}\n  - " + "\n  - ".join(attack.problems))
