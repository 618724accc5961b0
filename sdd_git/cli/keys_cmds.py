"""`sdd keys set | list | remove NAME`: model keys in the OS keyring, each for one host."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say, table


@click.group("keys")
def keys() -> None:
    """Model keys in the OS keyring, each sent only to the host it is for."""


@keys.command("set")
@click.argument("name")
@click.option(
    "--for-url",
    "for_url",
    default=None,
    help="The provider URL the key is for (default: your configured provider's base_url).",
)
def set_command(name: str, for_url: str | None) -> None:
    """Keep a model key: read from a hidden prompt, or from stdin (never from the command)."""
    from sdd_git.records import modelkeys

    root = current_root()
    modelkeys.check_name(name)
    url = modelkeys.check_url(for_url) if for_url else modelkeys.default_url(root)
    modelkeys.require_keyring()  # before she types it
    import sys

    if sys.stdin.isatty():
        prompt = f"Key for {name} (hidden)"
        secret = str(
            click.prompt(prompt, hide_input=True, default="", show_default=False, err=True)
        )
    else:
        secret = sys.stdin.readline()  # a pipe: `pass show openai | sdd keys set openai`
    key, backend = modelkeys.set_key(root, name, secret, url)
    say(f"stored the key {key.name} for {key.host} in {backend}; it is sent to that host only")


@keys.command("list")
@json_option
def list_command(as_json: bool) -> None:
    """The keys kept: their names and hosts, never a key."""
    from sdd_git.records import modelkeys

    found = modelkeys.list_keys(current_root())
    if as_json:
        emit_json([item.as_json() for item in found])
        return
    if not found:
        say("no model keys are kept (sdd keys set NAME keeps one)")
        return
    rows = [
        (i.key.name, i.key.host, "stored" if i.stored else "missing from the keyring")
        for i in found
    ]
    table(rows, ("NAME", "HOST", "KEYRING"))


@keys.command("remove")
@click.argument("name")
def remove_command(name: str) -> None:
    """Delete a key from the keyring, and the host it was for from your settings."""
    from sdd_git.errors import UsageError
    from sdd_git.records import modelkeys

    if not modelkeys.remove_key(current_root(), name):
        raise UsageError(f"no model key {name} is kept", hint="sdd keys list")
    say(f"removed the key {name}")
