"""`sdd watch`: the watcher, in the foreground, detached, stopped, or asked how it is."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say


@click.command("watch")
@click.option("--detach", is_flag=True, help="Run in the background; log: .sdd/local/watch.log.")
@click.option("--stop", "stop_it", is_flag=True, help="Stop the running watcher and wait for it.")
@click.option("--status", "show_status", is_flag=True, help="Say whether a watcher is running.")
@click.option(
    "--grace",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="On stop, seconds a routine in progress may take to finish (its event stays pending "
    "otherwise).",
)
@json_option
def watch(detach: bool, stop_it: bool, show_status: bool, grace: float, as_json: bool) -> int:
    """Watch refs, build results, routine, role and skill files, and schedules; run the routines
    that listen. One watcher per repository; Ctrl-C or SIGTERM stops it."""
    from sdd_git.errors import UsageError
    from sdd_git.events import watchprocess

    if sum((detach, stop_it, show_status)) > 1:
        raise UsageError("choose one of --detach, --stop and --status")
    if as_json and not show_status:
        raise UsageError("--json goes with --status")
    root = current_root()
    if show_status:
        current = watchprocess.status(root)
        if as_json:
            emit_json(current.as_json())
        elif current.running:
            click.echo(f"watching: {current.holder}")
        else:
            click.echo("not watching: no watcher runs for this repository")
        return 0 if current.running else 1
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    if stop_it:
        pid = watchprocess.stop(root)
        say("no watcher was running" if pid is None else f"stopped the watcher (pid {pid})")
        return 0
    if detach:
        pid = watchprocess.detach(root, grace=grace)
        say(f"watching in the background (pid {pid}); log: {watchprocess.log_path(root)}")
        say("stop it with: sdd watch --stop")
        return 0
    return watchprocess.run_watcher(root, grace=grace)
