"""Running roles: `sdd role run/runs/log/say/stop/memory`, and `sdd stops/allow/deny`."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from sdd_git.cli.complete import change_ids, role_names, run_ids, runs_or_roles, stop_ids
from sdd_git.cli.output import current_root, emit_json, json_option, say, shown_in_full, table
from sdd_git.cli.role_cmds import role
from sdd_git.root import Root


def _masked(root: Any, data: Any) -> Any:
    """`data` (text or a JSON document) with every secret within reach masked: what a model
    replied, or an error a server sent, may carry one to the person's screen and scripts."""
    from sdd_git.connectors.tokens import masker_for

    return json.loads(masker_for(root.path if root else Path.cwd())(json.dumps(data)))


# Events too long or too internal to show as progress: the prompt itself, and the run's start
# and resumption (the outcome line names the run).
_QUIET_EVENTS = ("message", "run_started", "run_resumed")
_LINES_ARGS = frozenset({"content", "command", "body", "message", "text", "task", "summary"})


def _progress(as_json: bool) -> Any:
    """What the runner calls with each event as it is written: one line on stderr, so a long
    provider call or command is visibly under way. With --json, nothing but the document."""
    if as_json:
        return None
    return _Progress()


class _Progress:
    """Each event as one line on stderr; in her terminal also the seconds a model takes, and
    its reply's text as it streams in (`wants_text`: the runner then asks for a stream)."""

    def __init__(self) -> None:
        from sdd_git.cli.ticker import Ticker

        self.ticker = Ticker()
        self.wants_text = self.ticker.on

    def __call__(self, event: dict[str, Any]) -> None:
        from sdd_git.runner.control import event_text

        self.ticker.stop()  # whatever comes next is the model's answer, or the run going on
        kind = event.get("event")
        if kind == "reply_text":
            say(f"  » {event.get('text', '')}")  # masked by the runner, a line at a time
            return
        if kind not in _QUIET_EVENTS:
            say(f"  · {event_text(event)}")  # already masked: it is the logged line
        if kind == "provider_call":
            self.ticker.start(f"waiting for {_role_name(event.get('role'))}'s model")


def _role_name(role: object) -> str:
    return role if isinstance(role, str) and role.replace("-", "").isalnum() else "the role"


@contextlib.contextmanager
def _signals_once() -> Iterator[None]:
    """The first Ctrl-C or SIGTERM interrupts the run; any later one is ignored until the run
    has killed the command it was running and ended its log. A second signal that also raised
    would cut that short and leave the run `running` forever, or a command's children alive."""
    import signal
    import threading

    from sdd_git.cli.interrupts import was_lost

    if threading.current_thread() is not threading.main_thread():
        yield  # signals can only be handled on the main thread (CliRunner in a thread)
        return
    fired = False

    def interrupt(signum: int, frame: object) -> None:
        nonlocal fired
        if not fired or was_lost():  # the first, or the first again (sdd_git.cli.interrupts)
            fired = True
            raise KeyboardInterrupt

    previous = {s: signal.signal(s, interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _render(outcome: Any, as_json: bool, root: Any) -> None:
    """The reply or the stop, in plain words (the events were shown as they happened)."""
    import dataclasses

    if as_json:
        emit_json(_masked(root, outcome.as_json()))
        if outcome.status == "failed":  # stderr says it too, as for any other error
            click.echo(f"error: {_masked(root, outcome.message)}", err=True)
        return
    message, reply, hint = _masked(root, [outcome.message, outcome.reply, outcome.hint])
    outcome = dataclasses.replace(outcome, message=message, reply=reply, hint=hint)
    stop = outcome.stop
    if stop is not None and stop.kind == "draft":
        click.echo(f"STOP {stop.id}: {stop.action}")
        click.echo(f"choose: sdd allow {stop.id}  |  sdd deny {stop.id}")
    elif stop is not None and stop.kind == "approval":
        click.echo(f"STOP {stop.id} ({stop.role} asks): {stop.action}")
        options = [f"sdd allow {stop.id}"]
        if "allow for this run" in stop.choices:
            options.append(f"sdd allow {stop.id} --for-run")
        if "always allow" in stop.choices:
            options.append(f"sdd allow {stop.id} --always")
        options.append(f"sdd deny {stop.id}")
        click.echo("choose: " + "  |  ".join(options))
        if stop.expires_at is not None:
            click.echo(f"expires: {stop.as_json()['expires_at']}")
    elif stop is not None:
        if outcome.reply:
            _echo_reply(outcome)
        click.echo(f"STOP {stop.id} ({stop.role}): {stop.action}")
        click.echo("choose: accept  |  correct  |  not yet")
    elif outcome.reply is not None:
        _echo_reply(outcome)
    elif outcome.status == "failed" or outcome.exit_code == 1:
        click.echo(f"error: {outcome.message}", err=True)
        if outcome.hint:
            click.echo(f"hint: {outcome.hint}", err=True)
    else:
        click.echo(outcome.message)
    if outcome.run_id:
        say(f"run {outcome.run_id}: {outcome.status}")


def _echo_reply(outcome: Any) -> None:
    click.echo(outcome.reply)
    if outcome.reply_id:
        # The id of the reply in the role's conversation: what --reply-to takes.
        say(f'reply {outcome.reply_id} (answer it with --reply-to {outcome.reply_id} --task "...")')


def _refuse_no_agent(command: str) -> None:
    """`sdd --no-agent ...` promises that no model is called: commands that would, refuse."""
    from sdd_git.errors import UsageError

    context = click.get_current_context()
    options = context.find_root().obj or {}
    if options.get("no_agent"):
        raise UsageError(
            f"{command} calls a model, and --no-agent was given",
            hint="drop --no-agent to run a role; person commands never call a model",
        )


@contextlib.contextmanager
def _json_errors(as_json: bool) -> Iterator[None]:
    """With --json, a refusal or an error is one JSON document on stdout too."""
    from sdd_git.errors import SddError

    try:
        yield
    except SddError as exc:
        if as_json:
            status = "refused" if exc.exit_code == 2 else "error"
            emit_json(
                _masked(
                    None,
                    {
                        "run": None,
                        "status": status,
                        "exit_code": exc.exit_code,
                        "message": exc.message,
                        "stop": None,
                        "reply": None,
                    },
                )
            )
        raise


@contextlib.contextmanager
def _wake_waits(root: Root, origin: str, wake: dict[str, str]) -> Iterator[None]:
    """A handoff's wake that meets a grant she has not confirmed waits for her (§13): kept,
    with the command that wakes it again once she confirms."""
    from sdd_git.trust.pending import WaitsForHer

    try:
        yield
    except WaitsForHer as waits:
        if origin == "role":
            import secrets

            from sdd_git.events.waiting import wait_wake

            sender = wake["sender"] or "another role"
            what = f"the handoff from {sender} to {wake['receiver']}"
            wait_wake(root, f"wake-{secrets.token_hex(4)}", what, wake, waits.items)
        raise


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _ask_inline(root: Any, outcome: Any) -> Any:
    """In a terminal, offer the stop's choices right away; `l` leaves it pending."""
    from sdd_git.runner.run import answer

    while outcome.stop is not None and outcome.stop.kind in ("approval", "draft"):
        offered = outcome.stop.choices
        keys = (
            "[o]nce, "
            + ("for this [r]un, " if "allow for this run" in offered else "")
            + ("[a]lways, " if "always allow" in offered else "")
        )
        answer_text = click.prompt(
            f"Allow {keys}[d]eny, or [l]ater?", default="l", show_default=False, err=True
        ).strip()
        choice = {
            "o": "allow_once",
            "r": "allow_for_run",
            "a": "always_allow",
            "d": "deny",
        }.get(answer_text[:1])
        if choice is None:
            break
        with _signals_once():
            outcome = answer(root, outcome.stop.id, choice, on_event=_progress(False))
        _render(outcome, False, root)
    return outcome


def _task_text(task: str) -> str:
    """`--task -` reads the task from stdin: long text, or text a shell would mangle."""
    from sdd_git.errors import UsageError

    if task != "-":
        return task
    text = sys.stdin.read().strip()
    if not text:
        raise UsageError(
            "--task - read no text from stdin",
            hint='pipe the task in (echo "Fix the /login route" | sdd role run NAME --task -)',
        )
    return text


@role.command("run")
@click.argument("name", shell_complete=role_names)
@click.option(
    "--task", required=True, help="The message: what to do, in your words (-: read from stdin)."
)
@click.option(
    "--with", "critic", metavar="CRITIC", help="A different role that critiques the draft."
)
@click.option("--change", metavar="CH", help="The change to work on (default: the only open one).")
@click.option("--attach", "attach", multiple=True, type=click.Path(path_type=Path))
@click.option("--as", "what", multiple=True, help="What each --attach is, in your words.")
@click.option("--reply-to", metavar="MSG", help="Reply to a message of the role's conversation.")
@click.option("--prompt-append", metavar="TEXT", help="Text layered after the role's disposition.")
@click.option(
    "--origin",
    type=click.Choice(("person", "role")),
    default="person",
    hidden=True,  # `role`: a run woken by another role's handoff; its stops expire
)
@click.option("--from", "sender", metavar="ROLE", hidden=True,
              help="With --origin role: the role whose handoff woke this run.")  # fmt: skip
@json_option
def role_run(
    name: str,
    task: str,
    critic: str | None,
    change: str | None,
    attach: tuple[Path, ...],
    what: tuple[str, ...],
    reply_to: str | None,
    prompt_append: str | None,
    origin: str,
    sender: str | None,
    as_json: bool,
) -> None:
    """Give a role a task; it works until it replies or stops for you (exit 3)."""
    from sdd_git.errors import UsageError
    from sdd_git.runner.conversation import Attachment
    from sdd_git.runner.run import RunRequest, start
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    _refuse_no_agent("sdd role run")
    task = _task_text(task)
    if len(attach) != len(what):
        raise UsageError(
            "each --attach needs its own --as saying what the file is",
            hint='--attach logs/march.log --as "the March server log"',
        )
    root = current_root()
    request = RunRequest(
        author=name,
        task=task,
        critic=critic,
        change=change,
        attachments=tuple(Attachment(p, w) for p, w in zip(attach, what, strict=True)),
        reply_to=reply_to,
        prompt_append=prompt_append,
        origin=origin,
        handoff_from=sender if origin == "role" else None,
    )
    wake = {"receiver": name, "sender": sender or "", "reply_to": reply_to or "", "task": task}
    if change:
        wake["change"] = change
    with _json_errors(as_json), _signals_once(), _wake_waits(root, origin, wake):
        outcome = start(root, request, on_event=_progress(as_json))
    _render(outcome, as_json, root)
    if not as_json and _interactive():
        outcome = _ask_inline(root, outcome)
    sys.exit(outcome.exit_code)


@role.command("runs")
@click.argument("name", required=False, shell_complete=role_names)
@click.option("-n", "limit", type=click.IntRange(min=1), metavar="N", help="At most N runs.")
@click.option("--since", metavar="AGE|DATE", help="Runs started since: 30m, 12h, 7d, 2026-12-01.")
@click.option("--status", metavar="S", help="Only runs in this state: done, stopped, failed, ...")
@click.option("--search", metavar="TEXT", help="Runs whose words hold every word of TEXT.")
@click.option("--change", metavar="CH", shell_complete=change_ids, help="Runs on this change.")
@click.option("--reindex", is_flag=True, help="Build the runs index again from the logs.")
@json_option
def role_runs(
    name: str | None,
    limit: int | None,
    since: str | None,
    status: str | None,
    search: str | None,
    change: str | None,
    reindex: bool,
    as_json: bool,
) -> None:
    """Past runs (newest first), from .sdd/role-runs/ through the runs index.

    --search reads the task, what was said, each tool call's arguments, stops and rejections;
    case does not matter, and a word finds the words it starts."""
    from sdd_git.runner import runfilters, runindex
    from sdd_git.runner.history import STATUS_WORDS

    filters = runfilters.Filters(
        role=name,
        limit=limit,
        since=runfilters.since_stamp(since) if since is not None else None,
        status=status,
        search=runfilters.check_search(search) if search is not None else None,
        change=runfilters.check_change(change) if change is not None else None,
    )
    root = current_root()
    if reindex:
        say(f"indexed {runindex.reindex(root)} run(s) from .sdd/role-runs/")
    found = runindex.query(root, filters)
    narrowed = filters != runfilters.Filters(role=name, limit=limit)
    if shown_in_full(found, as_json, lambda r: r.as_json(), _no_runs(narrowed)):
        return
    table(
        [
            (
                r.run,
                ",".join(r.roles),
                STATUS_WORDS.get(r.status, r.status),
                r.started,
                " ".join(r.task.split())[:60],
            )
            for r in found
        ],
        ("RUN", "ROLES", "STATUS", "STARTED", "TASK"),
    )


def _no_runs(narrowed: bool) -> str:
    return "no run matches" if narrowed else "no runs yet"


@role.command("log")
@click.argument("run_id", metavar="RUN", shell_complete=run_ids)
@json_option
def role_log(run_id: str, as_json: bool) -> None:
    """One run's log, event by event, and what its provider calls used."""
    from sdd_git.runner.control import event_text
    from sdd_git.runner.history import run_usage
    from sdd_git.runner.runlog import log_path, read_events

    events = read_events(log_path(current_root(), run_id))
    if as_json:
        emit_json(events)  # each reply event holds its usage; `sdd role runs --json` sums it
        return
    for event in events:
        click.echo(f"{event.get('seq'):>4} {event.get('ts')} {event_text(event)}")
    usage = run_usage(events)
    if usage.calls:
        click.echo(usage.words())


@role.command("say")
@click.argument("name", shell_complete=role_names)
@click.argument("text")
def role_say(name: str, text: str) -> None:
    """Another instruction to the role's run in progress, read between provider calls."""
    from sdd_git.runner.control import say as deliver
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    run_id = deliver(current_root(), name, text)
    say(f"delivered to {run_id}; the role reads it before its next provider call")


@role.command("stop")
@click.argument("target", metavar="RUN|NAME", shell_complete=runs_or_roles)
def role_stop(target: str) -> None:
    """ "Stop now": end the run's turn. What is done stays done."""
    from sdd_git.runner.control import stop_now
    from sdd_git.sink import refuse_inside_run

    refuse_inside_run()
    run_id = stop_now(current_root(), target)
    say(f"asked {run_id} to stop now; completed actions stay")


@role.command("memory")
@click.argument("name", shell_complete=role_names)
@click.option("--forget", type=int, metavar="N", help="Forget memory item N.")
@click.option("--edit", is_flag=True, help="Open the memory in $EDITOR.")
def role_memory(name: str, forget: int | None, edit: bool) -> None:
    """Read or correct a role's memory. Memory never changes the spec or a QA result."""
    from sdd_git.runner import conversation
    from sdd_git.sink import refuse_inside_run

    root = current_root()
    if forget is not None:
        refuse_inside_run()
        removed = conversation.forget(root, name, forget)
        say(f"forgot: {removed['note']}")
        return
    if edit:
        refuse_inside_run()
        saved = conversation.edit_memory(
            root, name, lambda text: click.edit(text, extension=".yaml")
        )
        say(f"{name} remembers {saved} item(s)")
        return
    items = conversation.memory(root, name)
    if not items:
        say(f"{name} remembers nothing yet")
    for number, item in enumerate(items, start=1):
        click.echo(f"{number}. {item['note']}  ({item.get('at', '')})")


@click.group("stops", invoke_without_command=True)
@json_option
@click.pass_context
def stops_command(context: click.Context, as_json: bool) -> None:
    """The stops waiting for you (`sdd stops show STOP`: everything one of them would do)."""
    if context.invoked_subcommand is not None:
        return
    import time

    from sdd_git.routines import notrun
    from sdd_git.runner import stops

    root = current_root()
    pending = stops.pending(root)
    not_run = notrun.waiting(root)  # routines that could not run: no approval, but hers to read
    now = time.time()
    if as_json:
        emit_json(
            [{**s.as_json(), "expired": s.expired(now)} for s in pending]
            + [n.as_stop_json() for n in not_run]
        )
        return
    _say_what_waits_on_trust(root)
    if not pending and not not_run:
        say("no stops are waiting")
        return
    for stop in pending:
        state = " (expired)" if stop.expired(now) else ""
        click.echo(f"{stop.id}  {stop.role}  {stop.kind}{state}  from {stop.origin}: {stop.action}")
    for item in not_run:
        click.echo(f"{item.id}  {item.role}  could not run  from routine: {item.action}")


@stops_command.command("dismiss")
@click.argument("item_id", metavar="ID")
def stops_dismiss_command(item_id: str) -> None:
    """Dismiss a routine that could not run (it leaves `sdd stops`; its run log stays)."""
    from sdd_git.routines import notrun

    dismissed = notrun.dismiss(current_root(), item_id)
    say(f"dismissed: {dismissed.name} did not run for event {dismissed.event.get('id')}")


def _say_what_waits_on_trust(root: Root) -> None:
    """Events and wakes that wait for her confirmation (§13): not stops, but hers to answer."""
    from sdd_git.events.waiting import entries

    waiting = entries(root)
    if not waiting:
        return
    click.echo("waiting for your confirmation (sdd trust review):")
    for entry in waiting:
        names = ", ".join(str(i.get("name")) for i in entry.items)
        click.echo(f"  {entry.id}: {entry.what}, waits on {names}")


@stops_command.command("show")
@click.argument("stop_id", metavar="STOP", shell_complete=stop_ids)
@json_option
def stops_show_command(stop_id: str, as_json: bool) -> None:
    """Everything a stop would do: its action, and every input whole (a file's whole content)."""
    from sdd_git.routines import notrun
    from sdd_git.runner import stops
    from sdd_git.runner.words import visible

    root = current_root()
    item = notrun.find(root, stop_id) if stop_id.startswith("run-") else None
    if item is not None:  # a routine that could not run: what, why, and what she can do
        if as_json:
            emit_json(item.as_stop_json())
        else:
            click.echo(f"{item.id}  {item.role}  could not run  from routine")
            click.echo(item.action)
        return
    stop = stops.load(root, stop_id)
    if as_json:
        emit_json(stop.as_json())
        return
    click.echo(f"{stop.id}  {stop.role}  {stop.kind}  from {stop.origin}  (run {stop.run})")
    click.echo(stop.action)
    if stop.sandbox:
        click.echo(f"sandbox: {stop.sandbox}")
    for key, value in stop.args.items():
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        click.echo(f"--- {visible(key, keep_newlines=False)} ({len(text):,} characters) ---")
        # Only text that holds lines keeps them: a path or a name with a newline in it is
        # shown on one line, escaped, so no part of it reads as a line of sdd's own.
        click.echo(visible(text, keep_newlines=key in _LINES_ARGS))
    click.echo(f"choices: {', '.join(stop.choices) or 'none'}")


@click.command("allow")
@click.argument("stop_id", metavar="STOP", shell_complete=stop_ids)
@click.option("--always", is_flag=True, help="Also save the rule: same tool, same inputs.")
@click.option(
    "--for-run",
    is_flag=True,
    help="Also let the same tool with the same inputs run again in this run only; nothing is "
    "saved.",
)
@click.option(
    "--prefix",
    metavar="WORDS",
    help='With --always: save a command-prefix rule instead ("npm test": any plain command '
    "beginning with those words, in a working sandbox); the stop's command must be one.",
)
@json_option
def allow_command(
    stop_id: str, always: bool, for_run: bool, prefix: str | None, as_json: bool
) -> None:
    """Run exactly the action the stop names, then continue the run."""
    from sdd_git.errors import UsageError
    from sdd_git.runner.run import answer

    with _json_errors(as_json):
        if always and for_run:
            raise UsageError("--always and --for-run are two answers: give one")
        if prefix is not None and not always:
            raise UsageError("--prefix saves a rule: give it with --always")
        if prefix is not None and not prefix.split():
            raise UsageError('--prefix needs words, e.g. --prefix "npm test"')
    root = current_root()
    choice = "always_allow" if always else "allow_for_run" if for_run else "allow_once"
    words = tuple(prefix.split()) if prefix is not None else None
    _answer(root, stop_id, choice, as_json, answer, words)


@click.command("deny")
@click.argument("stop_id", metavar="STOP", shell_complete=stop_ids)
@json_option
def deny_command(stop_id: str, as_json: bool) -> None:
    """Apply nothing, and continue the run with the denial."""
    from sdd_git.runner.run import answer

    _answer(current_root(), stop_id, "deny", as_json, answer)


def _answer(
    root: Any,
    stop_id: str,
    choice: str,
    as_json: bool,
    answer: Any,
    prefix: tuple[str, ...] | None = None,
) -> None:
    from sdd_git.runner import stops

    _refuse_no_agent(f"sdd {'deny' if choice == 'deny' else 'allow'}")
    with _json_errors(as_json), _signals_once():
        _refuse_not_run(root, stop_id)
        stops.load(root, stop_id)  # an unknown stop is refused before anything is shown
        outcome = answer(root, stop_id, choice, on_event=_progress(as_json), prefix=prefix)
    if outcome.status == "expired":
        import dataclasses

        # CONTRACT §10: answering a stop that expired is an error (exit 1); its action never ran.
        outcome = dataclasses.replace(outcome, exit_code=1)
    _render(outcome, as_json, root)
    if not as_json and _interactive():
        outcome = _ask_inline(root, outcome)
    sys.exit(outcome.exit_code)


def _refuse_not_run(root: Root, item_id: str) -> None:
    """A routine that could not run asks for no approval: it says how to fire it again."""
    from sdd_git.errors import UsageError
    from sdd_git.routines import notrun

    item = notrun.find(root, item_id) if item_id.startswith("run-") else None
    if item is not None:
        raise UsageError(
            f"{item.name} did not run ({item.reason}); there is nothing to allow or deny",
            hint=f"once that is fixed, fire it again: {item.refire}; or dismiss it: sdd stops "
            f"dismiss {item.id}",
        )


@click.command("work")
@click.argument("change_id", metavar="CH", shell_complete=change_ids)
@click.option("--task", help="What to do, in your words (default: the change's accepted spec).")
@click.option("--status", is_flag=True, help="Draw the network tree and each node's state.")
@json_option
def work_command(change_id: str, task: str | None, status: bool, as_json: bool) -> None:
    """Route a change by what is accepted, and run it (exit 3: a stop or a plan waits)."""
    from sdd_git.network.drive import Finished, tree_lines
    from sdd_git.network.drive import status as network_status
    from sdd_git.network.work import work

    root = current_root()
    if status:
        nodes = network_status(root, change_id)
        if as_json:
            emit_json({"change": change_id, "nodes": [n.as_json() for n in nodes]})
        else:
            click.echo("\n".join(tree_lines(nodes)) or f"{change_id} has no plan")
        return
    _refuse_no_agent("sdd work")
    quiet = as_json or not sys.stderr.isatty()
    with _json_errors(as_json), _signals_once():
        outcome = work(
            root,
            change_id,
            _task_text(task) if task else None,
            _progress(as_json),
            None if quiet else (lambda text: click.echo(text, err=True)),
        )
    if isinstance(outcome, Finished):
        if as_json:
            emit_json(
                {
                    "status": outcome.status,
                    "exit_code": outcome.exit_code,
                    "message": outcome.message,
                    "nodes": [n.as_json() for n in outcome.nodes],
                }
            )
        else:
            click.echo("\n".join(tree_lines(outcome.nodes)))
            say(outcome.message)
        sys.exit(outcome.exit_code)
    _render(outcome, as_json, root)
    if not as_json and _interactive():
        outcome = _ask_inline(root, outcome)
    sys.exit(outcome.exit_code)
