"""`sdd connect`, `sdd disconnect`, `sdd connectors`, `sdd drafts`, `sdd send`: the person's
connectors and the chat drafts roles leave for her."""

from __future__ import annotations

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say, shown_in_full, table


@click.command("connect")
@click.argument("name")
@click.option(
    "--token-from",
    metavar="gh|glab|env:VAR",
    help="Borrow the token: `gh auth token`, glab's stored token, or a variable.",
)
@click.option("--base-url", metavar="URL", help="Where the service answers (its API root).")
def connect_command(name: str, token_from: str | None, base_url: str | None) -> None:
    """Sign connector NAME in: the token goes to the OS keyring, never to the repository."""
    from sdd_git.connectors.accounts import connect

    def ask(prompt: str) -> str:
        import sys

        from sdd_git.errors import UsageError

        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            # Hidden input needs a terminal: without one, getpass warns and reads the pipe.
            raise UsageError(
                f"there is no terminal to ask for the token of {name} on; nothing was stored",
                hint=f"give it with --token-from: sdd connect {name} --token-from env:VARIABLE "
                "(or --token-from gh, --token-from glab)",
            )
        return str(click.prompt(prompt, hide_input=True, default="", show_default=False, err=True))

    done = connect(current_root(), name, token_from=token_from, base_url=base_url, ask=ask)
    if done.config_added:
        say(f"added connectors.{name} to .sdd/config.yaml (no token in it)")
    say(f"{name} is signed in: its token is kept in {done.keyring} (service sdd-git, user {name})")
    if done.note:
        say(f"note: {done.note}")
    say(f"a role reads it when a task names @{name}; `sdd connectors` shows every status")


@click.command("disconnect")
@click.argument("name")
def disconnect_command(name: str) -> None:
    """Remove connector NAME's token from the OS keyring."""
    from sdd_git.connectors.accounts import disconnect

    done = disconnect(current_root(), name)
    say(f"removed the token of {name}" if done.removed else f"no token was stored for {name}")
    if done.note:
        say(f"note: {done.note}")


@click.command("connectors")
@json_option
def connectors_command(as_json: bool) -> None:
    """List the connectors: configured or not, signed in or not."""
    from sdd_git.connectors.accounts import statuses

    rows = statuses(current_root())
    if as_json:
        emit_json(rows)
        return
    table([(r["name"], r["kind"], r["status"]) for r in rows], ("NAME", "KIND", "STATUS"))
    for row in rows:
        if row.get("sandbox_warning"):
            say(f"note: {row['sandbox_warning']}")


@click.command("drafts")
@json_option
@click.option("--all", "include_sent", is_flag=True, help="Also the drafts already sent.")
def drafts_command(as_json: bool, include_sent: bool) -> None:
    """The chat messages roles drafted for you to send."""
    from sdd_git.connectors.drafts import list_drafts, shown_channel
    from sdd_git.runner.words import visible

    found = list_drafts(current_root(), include_sent=include_sent)
    empty = "no drafts waiting; a role's chat message lands here, and you send it with sdd send"
    if shown_in_full(found, as_json, lambda d: d.as_json(), empty):
        return
    for draft in found:
        # A role wrote the text and the channel: shown with every control character escaped,
        # so no terminal code in them can redraw her screen or hide where it goes.
        state = f" (sent {draft.sent_at})" if draft.status == "sent" else ""
        where = visible(shown_channel(draft.channel), keep_newlines=False)
        click.echo(
            f"{draft.id}  {draft.connector} {where}  from {visible(draft.role, False)}{state}"
        )
        for line in draft.text.split("\n") or [""]:
            click.echo(f"    {visible(line, keep_newlines=False)}")


@click.command("send")
@click.argument("draft_id", metavar="DRAFT")
def send_command(draft_id: str) -> None:
    """Post a draft to its channel: yours to send, never a role's."""
    from sdd_git.connectors.drafts import send, shown_channel
    from sdd_git.runner.words import visible

    sent = send(current_root(), draft_id)
    where = visible(shown_channel(sent.channel), keep_newlines=False)
    say(f"sent {sent.id} to {where} on {sent.connector}")
    if sent.sent:  # the service's words: escaped, as a role's are
        say(f"  {sent.connector} said: {visible(sent.sent, keep_newlines=False)}")
    click.echo(sent.id)
