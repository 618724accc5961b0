"""The model provider: which key goes where, a check, the models."""

from __future__ import annotations

import click


@click.group("provider")
def provider() -> None:
    """The model provider: which key goes where, a check, the models."""
