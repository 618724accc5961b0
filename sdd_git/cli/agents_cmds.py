"""`sdd agents install HOST`: the files another agent tool reads; it creates no role."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, say

# Kept here, not imported from hoststubs, so `sdd --help` stays free of the core's imports.
HOSTS = ("copilot", "claude", "grok", "ollama", "kilo", "codex")


@click.group()
def agents() -> None:
    """Point another agent tool (Copilot, Claude Code, Codex, Grok, Kilo, ...) at sdd."""


@agents.command("install")
@click.argument("host", type=click.Choice(HOSTS))
@click.option(
    "--dry-run", is_flag=True, help="Print each file as it would be written; write nothing."
)
def install(host: str, dry_run: bool) -> None:
    """Write what HOST reads: AGENTS.md, and CLAUDE.md, settings or setup steps where it needs them.

    A file you wrote keeps its content: sdd adds one marked section, or merges its keys.
    """
    from sdd_git.hoststubs import install as run

    report = run(current_root(), host, dry_run=dry_run)
    for note in report.notes:
        say(note)
    if dry_run:
        for planned in report.files:
            if planned.action == "unchanged":
                say(f"unchanged: {planned.path}")
                continue
            click.echo(f"==> {planned.path} (would {planned.action}) <==")
            click.echo(planned.text, nl=not planned.text.endswith("\n"))
        say(f"dry run: nothing was written. {report.reads}")
        return
    for path in report.written:
        click.echo(path)
    if report.unchanged:
        say(f"already up to date: {', '.join(report.unchanged)}")
    say(f"{report.reads}.")
    say(f"installed for {host}; no role was created")
