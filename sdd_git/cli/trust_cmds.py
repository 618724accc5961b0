"""`sdd trust review | accept | forget | drop`: what arrived by git counts once she confirms it."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say


@click.group()
def trust() -> None:
    """What grants (settings, role rules, routines, decisions) counts only once you confirm it.

    A file that arrives by a merge, a pull or a copy is anyone's: review what it grants, in
    words, and confirm it. Events that waited on it then run."""


@trust.command("review")
@json_option
def trust_review(as_json: bool) -> None:
    """Each file you have not confirmed, what it grants in words, and what waits on it."""
    from sdd_git.events.confirm import review
    from sdd_git.trust.words import visible

    found = review(current_root())
    if as_json:
        emit_json([r.as_json() for r in found.items])
        return
    for note in found.notes:
        click.echo(f"note: {note}")
    if not found.items:
        click.echo("nothing waits for your confirmation")
    for reviewed in found.items:
        click.echo(visible(f"{reviewed.item.key}  ({reviewed.item.kind})"))
        if reviewed.commit:
            click.echo(visible(f"  from commit {reviewed.commit}, by {reviewed.author}"))
        for change in reviewed.item.changes:
            click.echo(f"  - {visible(change)}")
    if found.waiting:
        click.echo("")
        click.echo("waiting for you:")
        for entry in found.waiting:
            click.echo(visible(f"  {entry.id}: {entry.what}"))
            for item in entry.items:
                click.echo(visible(f"    waits on {item.get('name')} ({item.get('path')})"))
    if found.items:
        click.echo("")
        click.echo("confirm with: sdd trust accept PATH...  (or --all)")


@trust.command("accept")
@click.argument("paths", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Confirm every file `review` lists.")
def trust_accept(paths: tuple[str, ...], everything: bool) -> None:
    """Confirm files as `sdd trust review` shows them; what waited on them then runs."""
    from sdd_git.events.confirm import accept

    named = _named_or_all(paths, everything, "name the files to confirm, or give --all")
    confirmed, released = accept(current_root(), named)
    for item in confirmed:
        say(f"confirmed {item.words()}")
    if not confirmed:
        say("nothing waited for your confirmation")
    for entry in released:
        say(f"running again: {entry.what}")


@trust.command("forget")
@click.argument("paths", nargs=-1, required=True)
def trust_forget(paths: tuple[str, ...]) -> None:
    """Un-confirm: what the files grant stops counting until you confirm it again."""
    from sdd_git.events.confirm import forget

    for key in forget(current_root(), list(paths)):
        say(f"no longer confirmed: {key}")


@trust.command("drop")
@click.argument("ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Drop everything that waits.")
def trust_drop(ids: tuple[str, ...], everything: bool) -> None:
    """Drop events that wait for your confirmation: they never run."""
    from sdd_git.events.confirm import drop

    named = _named_or_all(ids, everything, "name what to drop, or give --all")
    for entry in drop(current_root(), named):
        say(f"dropped: {entry.what}")


def _named_or_all(named: tuple[str, ...], everything: bool, refusal: str) -> list[str] | None:
    """What she named, or None for --all; one of the two, never both or neither."""
    from sdd_git.errors import UsageError

    if bool(named) == everything:
        raise UsageError(refusal, hint="sdd trust review")
    return None if everything else list(named)
