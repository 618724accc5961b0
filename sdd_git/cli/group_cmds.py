"""`sdd group`: talk to the roles of one change, or of one connection spec, at once."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say


@click.group()
def group() -> None:
    """Groups: the roles of one change or one connection spec (local, never committed)."""


@group.command("create")
@click.argument("name")
@click.option("--change", metavar="CH", help="The roles of this change.")
@click.option("--connection", metavar="SPEC", help="The owners of this connection spec.")
def create(name: str, change: str | None, connection: str | None) -> None:
    """Create group NAME of one change (--change) or one connection spec (--connection)."""
    from sdd_git.network import groups

    made = groups.create(current_root(), name, change=change, connection=connection)
    say(f"group {made.name} of {made.source}: {', '.join(made.members)}")
    for role in made.unknown:
        say(f"left out: {role} is named in the record, and there is no such role")
    click.echo(made.name)


@group.command("say")
@click.argument("name")
@click.argument("text")
def group_say(name: str, text: str) -> None:
    """Put your message into the conversation of each member of group NAME."""
    from sdd_git.network import groups

    message, found = groups.say(current_root(), name, text)
    reached = [m["role"] for m in message["to"]]
    say(f"sent to {len(reached)} member(s) of {found.name}: {', '.join(reached) or 'none'}")
    click.echo(message["id"])


@group.command("show")
@click.argument("name")
@json_option
def show(name: str, as_json: bool) -> None:
    """The group's members and its messages."""
    from sdd_git.network import groups

    found = groups.load(current_root(), name)
    if as_json:
        emit_json(found.as_json())
        return
    click.echo(f"group {found.name} of {found.source}")
    click.echo(f"members: {', '.join(found.members) or 'none'}")
    for role in found.unknown:
        click.echo(f"left out: {role} (no such role)")
    for message in found.messages:
        text = " ".join(str(message.get("text", "")).split())
        click.echo(f"{message.get('id')} {message.get('at')} {message.get('from')}: {text}")
    if not found.messages:
        say(f'no messages yet: sdd group say {found.name} "..."')
