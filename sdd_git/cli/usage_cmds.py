"""`sdd usage`: the tokens the run logs' replies report, summed by role, day or change."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say, table


@click.command("usage")
@click.option(
    "--by",
    type=click.Choice(("role", "day", "change")),
    default="role",
    show_default=True,
    help="Sum by the role that called the model, the UTC day of the reply, or the run's change.",
)
@click.option("--since", metavar="AGE|DATE", help="Runs started since: 30m, 12h, 7d, 2026-12-01.")
@json_option
def usage(by: str, since: str | None, as_json: bool) -> None:
    """Tokens the models reported, from the run logs (through the runs index).

    Input counts every prompt token, read from the provider's cache or not; the cache columns
    say how many of them were read from it and written to it."""
    from sdd_git.runner import runindex
    from sdd_git.runner.history import Usage
    from sdd_git.runner.runfilters import since_stamp

    cutoff = since_stamp(since) if since is not None else None
    totals = runindex.usage(current_root(), by, cutoff)
    if as_json:
        emit_json([t.as_json() for t in totals])
        return
    if not totals:
        say("no run has logged token usage yet (the scripted provider reports none)")
        return
    rows = [(t.key or "(no change)", t.runs, t.usage) for t in totals]
    total = sum((t.usage for t in totals), start=Usage())
    # A run counts once per role and per day it used: summed, only its change is its own.
    rows.append(("total", sum(t.runs for t in totals) if by == "change" else 0, total))
    table(
        [
            (
                key,
                f"{runs:,}" if runs or key != "total" else "",
                f"{u.calls:,}",
                f"{u.input_tokens:,}",
                f"{u.cached_input_tokens:,}",
                f"{u.cache_write_input_tokens:,}",
                f"{u.output_tokens:,}",
            )
            for key, runs, u in rows
        ],
        (by.upper(), "RUNS", "CALLS", "INPUT", "CACHE READ", "CACHE WRITE", "OUTPUT"),
    )
