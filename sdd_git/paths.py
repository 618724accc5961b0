"""Paths as the person would type them."""

from __future__ import annotations

from pathlib import Path


def display(path: Path) -> str:
    """Relative to the working folder when the path is inside it, else as given."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
