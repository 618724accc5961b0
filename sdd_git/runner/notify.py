"""Telling her a stop waits: `approvals.notify: [COMMAND, ...]` in her settings.

Each COMMAND is a list of words (`[notify-send, "sdd: a stop waits"]`) or one line of words split
as a shell would split it, but never given to a shell: nothing in the stop's words can become
code. What the stop is reaches the command only in its environment (`SDD_STOP`, `SDD_STOP_TEXT`,
...), never in its arguments: a word of hers like `osascript -e '... {action}'` would hand the
model's text to a script language.

The command is hers, so it runs as sdd does, outside every sandbox, with the short list of
variables a child of sdd gets (sdd_git.childenv) and those a desktop notification needs; it is
started and not waited for, so a slow or stuck notifier never holds the run. It runs only from
a settings layer she confirmed (CONTRACT §13): a command that arrives by a merge runs nothing."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from sdd_git.root import Root
from sdd_git.runner.stops import Stop

# A desktop notification reaches her session through these; nothing in them is a secret.
DESKTOP = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_TYPE",
    "XAUTHORITY",
    "__CF_USER_TEXT_ENCODING",
)
GIVE_UP_SECONDS = 60.0  # a notifier still running then is stopped: it was not going to help


def start_waiting(root: Root, stop: Stop) -> None:
    """A new stop: saved where `sdd stops` and her page find it, then told to her. Every place
    that raises a stop comes here, so none of them forgets to tell her."""
    from sdd_git.runner.stops import save

    save(root, stop)
    announce(root, stop)


def announce(root: Root, stop: Stop) -> None:
    """Start each of her notify commands for a stop that now waits for her. Never raises: a
    notifier that cannot run is said on stderr, and the stop waits as it would without one."""
    try:
        commands = _commands(root)
    except _NotRun as why:
        _say(str(why))
        return
    if not commands:
        return
    env = stop_environment(root, stop)
    for said in commands:
        try:
            words = _outside_product(said, root, env)
        except _NotRun as why:
            _say(str(why))
            continue
        try:
            child = subprocess.Popen(
                list(words),
                env=env,
                cwd=root.path,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # her Ctrl-C on the run is not meant for it
            )
        except OSError as exc:
            _say(
                f"your notify command `{shlex.join(said)}` could not start: "
                f"{exc.strerror or exc}; check approvals.notify in your settings"
            )
            continue
        threading.Thread(target=_reap, args=(child,), daemon=True).start()


def stop_environment(root: Root, stop: Stop) -> dict[str, str]:
    from sdd_git.childenv import allowed_environment
    from sdd_git.runner.words import visible

    env = allowed_environment(os.environ)
    env.update({name: os.environ[name] for name in DESKTOP if name in os.environ})
    action = _text(visible(stop.action, keep_newlines=True))
    answer = (
        f"sdd allow {stop.id} or sdd deny {stop.id}"
        if stop.kind in ("approval", "draft")
        else "sdd stops says how to answer"
    )
    env.update(
        {
            "SDD_STOP": stop.id,
            "SDD_STOP_RUN": stop.run,
            "SDD_STOP_ROLE": stop.role,
            "SDD_STOP_KIND": stop.kind,
            "SDD_STOP_ACTION": action,
            "SDD_STOP_CHOICES": ", ".join(stop.choices),
            "SDD_STOP_EXPIRES": stop.as_json()["expires_at"] or "",
            "SDD_STOP_TEXT": f"{stop.role} waits for you: {action} ({answer})",
            "SDD_PRODUCT": str(root.path),
        }
    )
    return env


class _NotRun(Exception):
    """Her notify setting cannot be run as it is; the message says where and why."""


def _commands(root: Root) -> list[tuple[str, ...]]:
    from sdd_git.settings import settings

    found = settings(root)
    approvals = found.get("approvals")
    if not isinstance(approvals, dict) or approvals.get("notify") in (None, []):
        return []
    where = found.where("approvals", "notify")
    if not _confirmed(root, found.origin("approvals", "notify")):
        raise _NotRun(
            f"approvals.notify in {where} is not confirmed by you, so it was not run; "
            "`sdd trust review` shows it"
        )
    value = approvals["notify"]
    if not isinstance(value, list):
        value = [value]
    commands = []
    for each in value:
        words = _words(each)
        if not words:
            raise _NotRun(
                f"approvals.notify in {where}: each command is a list of words or one line of "
                f"words, not {each!r}; nothing was run"
            )
        commands.append(words)
    return commands


def _outside_product(words: tuple[str, ...], root: Root, env: dict[str, str]) -> tuple[str, ...]:
    """Her command with its program found outside the product folder. It runs outside every
    sandbox, and a role can write any file of the product (`node_modules/.bin`, an activated
    `.venv/bin`, a `bin/` a relative PATH entry names): a program found there would be the
    model's code run as her. The child's own PATH leaves those folders out too."""
    from sdd_git.connectors.mcp_command import inside, path_outside

    product = root.path.resolve()
    env["PATH"] = path_outside(env.get("PATH", os.defpath), product)
    program = words[0]
    if os.sep in program or (os.altsep is not None and os.altsep in program):
        where = Path(program) if os.path.isabs(program) else root.path / program
        if inside(where, product):
            raise _NotRun(
                f"your notify command `{program}` is a file inside the product, which a role "
                "can change, so it was not run; install it outside the product and name its "
                "full path in approvals.notify"
            )
        return words
    found = shutil.which(program, path=env["PATH"])
    if found is None:
        raise _NotRun(
            f"your notify command `{shlex.join(words)}` could not start: `{program}` is not on "
            "your PATH outside the product folder (a role can write files inside it); install "
            "it there, or name its full path in approvals.notify"
        )
    return (found, *words[1:])


def _words(each: object) -> tuple[str, ...] | None:
    if isinstance(each, str):
        try:
            words = shlex.split(each)
        except ValueError:
            return None
    elif isinstance(each, list) and all(isinstance(w, str) for w in each):
        words = list(each)
    else:
        return None
    if not words or not words[0].strip() or any("\0" in w for w in words):
        return None
    return tuple(words)


def _confirmed(root: Root, layer: object) -> bool:
    """Whether the settings layer naming the commands is hers as it stands now (on a CI engine
    the engine is the trust anchor, as for every other setting)."""
    from sdd_git.settings import Layer
    from sdd_git.trust.pending import ledger_for, settings_items

    if not isinstance(layer, Layer):
        return False
    ledger = ledger_for(root)
    if ledger is None:
        return True
    return all(item.key != layer.key for item in settings_items(root, ledger))


def _text(value: str) -> str:
    # An environment value cannot hold NUL; the stop's words never need one.
    return value.replace("\0", "")


def _reap(child: subprocess.Popen[bytes]) -> None:
    try:
        child.wait(timeout=GIVE_UP_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _say(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)
