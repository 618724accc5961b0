"""`sdd agents install HOST`: host stubs only; it creates no role."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, say

HOSTS = ("copilot", "claude", "grok", "ollama", "kilo")


@click.group()
def agents() -> None:
    """Host-agent stubs (sdd, sdd-planner, sdd-implementer, sdd-reviewer)."""


@agents.command("install")
@click.argument("host", type=click.Choice(HOSTS))
@click.option("--force", is_flag=True, help="Replace stub files that differ from sdd's.")
def install(host: str, force: bool) -> None:
    """Write the four host stubs for HOST in its own file convention."""
    from sdd_git.hoststubs import install as run

    report = run(current_root(), host, force)
    for path in report.written:
        click.echo(path)
    if report.unchanged:
        say(f"already up to date: {', '.join(report.unchanged)}")
    say(f"installed the {host} stubs; no role was created")
