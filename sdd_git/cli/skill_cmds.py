"""Skills: folders with a SKILL.md (the Agent Skills standard)."""

from __future__ import annotations

import click


@click.group("skill")
def skill() -> None:
    """Skills: folders with a SKILL.md (the Agent Skills standard)."""
