"""`sdd init` and `sdd demo`."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from sdd_git.cli.output import say


@click.command()
@click.option("--product", metavar="NAME", help="The product's name (default: the folder's name).")
def init(product: str | None) -> None:
    """Make this folder an sdd root: memory/, changes/, .sdd/. Idempotent; commits nothing."""
    from sdd_git.records.person import init as init_root

    report = init_root(Path.cwd(), product)
    if report.inside is not None:
        say(
            f"note: this folder is a git repository of its own inside the sdd root "
            f"{report.inside}: it is a product of its own, and sdd commands here use it"
        )
    if report.git_initialized:
        say("ran git init")
    if report.created:
        say("created: " + ", ".join(report.created))
    else:
        say("already an sdd root; nothing to do")
    click.echo(str(report.root.path))


@click.command()
@click.option(
    "--dir",
    "folder",
    type=click.Path(file_okay=False),
    help="Use this (new) folder instead of a temp one.",
)
def demo(folder: str | None) -> None:
    """Walk the person's whole journey with no model, in a fresh folder, step by step."""
    from sdd_git.demo import run_demo

    target = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="sdd-demo-"))
    if target.exists() and any(target.iterdir()):
        raise click.UsageError(f"{target} is not empty; the demo needs a fresh folder")
    click.echo(f"sdd demo in {target.resolve()}")
    run_demo(target, click.echo)
