"""`sdd`: the entry point. Subcommands are imported only when run, so `sdd --help` stays fast."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from sdd_git import __version__
from sdd_git.cli.spawned import SPAWNED
from sdd_git.cli.spawned import command as spawned_command

# name -> (module:attribute, one-line help). The help is here so listing commands imports nothing.
_COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("sdd_git.cli.root_cmds:init", "Make a folder an sdd root (runs git init if needed)."),
    "demo": ("sdd_git.cli.root_cmds:demo", "Walk the whole journey offline in a temporary folder."),
    "change": ("sdd_git.cli.change_cmds:change", "Start, list and show change packs."),
    "scenario": ("sdd_git.cli.change_cmds:scenario", "Add a scenario to a change by hand."),
    "accept": (
        "sdd_git.cli.decide_cmds:accept",
        "Accept a reading, section, scenario, plan or failure.",
    ),
    "correct": ("sdd_git.cli.decide_cmds:correct", "Correct a drafted reading in your own words."),
    "qa": ("sdd_git.cli.decide_cmds:qa", "Record a QA result for a scenario."),
    "decision": ("sdd_git.cli.decide_cmds:decision", "List or replace decisions."),
    "release": ("sdd_git.cli.decide_cmds:release", "Generate a release record from changes."),
    "next": (
        "sdd_git.cli.decide_cmds:next_stage",
        "Move a change one stage on when its gate holds.",
    ),
    "complete": (
        "sdd_git.cli.decide_cmds:complete",
        "Move a change to done when every gate holds.",
    ),
    "scope": (
        "sdd_git.cli.scope_cmds:scope",
        "Name the product's modules and services, and their owners.",
    ),
    "role": ("sdd_git.cli.run_cmds:role", "Create, list, run and share roles."),
    "group": ("sdd_git.cli.group_cmds:group", "Talk to the roles of a change or connection."),
    "work": (
        "sdd_git.cli.run_cmds:work_command",
        "Route a change by what is accepted, and run it.",
    ),
    "stops": ("sdd_git.cli.run_cmds:stops_command", "The stops waiting for your answer."),
    "allow": ("sdd_git.cli.run_cmds:allow_command", "Allow a stop's action (once, or --always)."),
    "deny": (
        "sdd_git.cli.run_cmds:deny_command",
        "Deny a stop's action; the run goes on without it.",
    ),
    "usage": (
        "sdd_git.cli.usage_cmds:usage",
        "Tokens the models used, from the run logs, by role, day or change.",
    ),
    "routine": (
        "sdd_git.cli.routine_cmds:routine",
        "Routines: a role's work fired by a merge, a failed build or a schedule.",
    ),
    "hooks": ("sdd_git.cli.hooks_cmds:hooks", "Install, remove and show sdd's git hooks."),
    "watch": ("sdd_git.cli.watch_cmds:watch", "Watch refs, build results and schedules."),
    "agents": ("sdd_git.cli.agents_cmds:agents", "Install host-agent stubs (creates no role)."),
    "guard": (
        "sdd_git.cli.guard_cmd:guard",
        "Check another agent's tool call before it runs (a host's pre-tool-use hook).",
    ),
    "skill": ("sdd_git.cli.skill_cmds:skill", "List, show and validate skills (SKILL.md)."),
    "provider": ("sdd_git.cli.provider_cmds:provider", "Show, check and list the model provider."),
    "connect": (
        "sdd_git.cli.connector_cmds:connect_command",
        "Sign a connector in (GitHub, Jira, Slack...); the token goes to the OS keyring.",
    ),
    "disconnect": (
        "sdd_git.cli.connector_cmds:disconnect_command",
        "Remove a connector's token from the OS keyring.",
    ),
    "connectors": (
        "sdd_git.cli.connector_cmds:connectors_command",
        "List the connectors: configured or not, signed in or not.",
    ),
    "drafts": (
        "sdd_git.cli.connector_cmds:drafts_command",
        "Chat messages roles drafted for you to send.",
    ),
    "send": ("sdd_git.cli.connector_cmds:send_command", "Post a draft to its channel."),
    "config": (
        "sdd_git.cli.config_cmds:config",
        "Show your settings merged from their three files, and where each value is from.",
    ),
    "keys": (
        "sdd_git.cli.keys_cmds:keys",
        "Keep model keys in the OS keyring, each for one host.",
    ),
    "trust": (
        "sdd_git.cli.trust_cmds:trust",
        "Review and confirm what arrived by git before it counts.",
    ),
    "page": (
        "sdd_git.cli.page_cmds:page",
        "Open her page in the browser (an extra: pip install 'sdd-git[page]').",
    ),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in SPAWNED:
            return spawned_command(cmd_name)
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, _, attribute = target[0].partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_text) for name, (_, help_text) in _COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sdd")
@click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False),
    help="Run as if sdd was started in DIR.",
)
@click.option("--no-agent", is_flag=True, help="Never call a model (person commands never do).")
@click.pass_context
def cli(ctx: click.Context, directory: str | None, no_agent: bool) -> None:
    """sdd: AI roles in your git repository, behind a record only you write.

    Person commands (accept, correct, qa, decision, release, next, complete, change new) are
    yours alone: a role can never run them.
    """
    if directory is not None:
        try:
            os.chdir(directory)
        except OSError as exc:
            raise click.UsageError(f"cannot change to {directory}: {exc.strerror}") from None
    ctx.obj = {"no_agent": no_agent}


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM ends like Ctrl-C: logs closed, locks released


def main(argv: list[str] | None = None) -> None:
    # Everything sdd prints reaches her terminal as text: a control, bidirectional or zero-width
    # character from a file, a merge or a model is written out as an escape (`\u202e`), in
    # JSON too, where that escape reads back as the same character.
    if os.environ.get("_SDD_COMPLETE"):
        # Shell completion: click writes the items as bytes for the shell to read, and the
        # items are ids sdd_git.cli.complete keeps to a safe shape. Set but empty, click runs
        # the command as usual: then its output is shown as text like any other.
        _main(argv)
        return
    from sdd_git.shown_text import visible_stream

    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = visible_stream(sys.stdout), visible_stream(sys.stderr)
    try:
        _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None) -> None:
    import signal

    from sdd_git.cli.interrupts import keep_interrupts
    from sdd_git.errors import SddError

    signal.signal(signal.SIGTERM, _terminated)
    keep_interrupts()
    started_in = os.getcwd()
    try:
        try:
            result = cli.main(args=argv, prog_name="sdd", standalone_mode=False)
        except SddError as exc:
            _stop_tickers()
            if not _asked_and_confirmed(exc):
                raise
            # She read what changed and said yes: the command runs again, once, on what she
            # confirmed (nothing of it ran the first time).
            os.chdir(started_in)
            result = cli.main(args=argv, prog_name="sdd", standalone_mode=False)
        finally:
            _stop_tickers()
    except SddError as exc:
        _fail(exc.message, exc.hint, exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else "", err=True)
        sys.exit(2)
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "sdd"
        _fail(exc.format_message() + _dash_text(exc, argv), f"see '{command} --help'", 2)
    except click.ClickException as exc:
        _fail(exc.format_message(), None, exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        click.echo("interrupted; completed actions stay", err=True)
        sys.exit(130)
    except OSError as exc:
        if os.environ.get("SDD_DEBUG"):
            raise
        where = f" ({exc.filename})" if exc.filename else ""
        _fail(
            f"{exc.strerror or exc}{where}", "nothing was half written; fix the cause and retry", 1
        )
    else:
        sys.exit(result if isinstance(result, int) else 0)


def _stop_tickers() -> None:
    """An elapsed-time line still ticking goes before anything else is printed."""
    ticker = sys.modules.get("sdd_git.cli.ticker")
    if ticker is not None:
        ticker.stop_all()


def _dash_text(exc: click.UsageError, argv: list[str] | None) -> str:
    """For an unknown "option" that is really her text (`sdd change new "-5 dollars..."`):
    how to pass it, for every command. Empty for a misspelt option click can name."""
    if not isinstance(exc, click.NoSuchOption) or exc.possibilities:
        return ""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" in args:
        return ""
    text = next((a for a in args if a.startswith(exc.option_name)), None)
    if text is None:
        return ""
    rest = list(args)
    rest.remove(text)
    example = " ".join(["sdd", *(_quoted(a) for a in rest), "--", _quoted(text)])
    return f" (to pass text that starts with '-', put -- before it: {example})"


def _quoted(text: str) -> str:
    import shlex

    if text and not any(c in text for c in '"$`\\!') and shlex.quote(text) != text:
        return f'"{text}"'  # as she would type it
    return shlex.quote(text)


def _asked_and_confirmed(exc: Exception) -> bool:
    """A command stopped on grants she has not confirmed (`WaitsForHer`): in her terminal she
    is shown what changed, in words, and asked y/N (CONTRACT §13). Elsewhere nobody is asked,
    and the command exits 3 with the hint to review."""
    pending = sys.modules.get("sdd_git.trust.pending")  # loaded: it raised the error
    if pending is None or not isinstance(exc, pending.WaitsForHer):
        return False
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    from pathlib import Path

    from sdd_git.root import find_root

    click.echo(exc.message, err=True)
    click.echo("Confirm this? It counts as yours from now on. [y/N] ", err=True, nl=False)
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        click.echo("nothing was confirmed, and nothing ran", err=True)
        return False
    pending.confirm(find_root(Path.cwd()), exc.items, "answered y in the terminal")
    click.echo("confirmed", err=True)
    return True


def _fail(message: str, hint: str | None, code: int) -> Any:
    # An error can quote anything (a file, a server's answer, an argument), so it is masked with
    # every secret in reach. The masker is built here, only when an error is printed, so that
    # `sdd --help` and `sdd role list` import nothing for it.
    from pathlib import Path

    from sdd_git.connectors.tokens import masker_for
    from sdd_git.errors import SddError
    from sdd_git.root import find_root

    try:
        here = Path.cwd()
        product = find_root(here).path
    except SddError:
        product = here  # outside a root: the .env files of the current folder
    except OSError:  # the current folder was removed
        product = Path(".")
    mask = masker_for(product)
    click.echo(f"error: {mask(message)}", err=True)
    if hint:
        click.echo(f"hint: {mask(hint)}", err=True)
    sys.exit(code)
