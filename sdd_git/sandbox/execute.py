"""Run one shell command the way the wall requires: inside the chosen sandbox, with the child
environment the runner built, and with nothing left running after it.

Nothing outlives the command: under bubblewrap the command is in its own pid namespace, which the
kernel empties when it ends; everywhere else sdd is the child subreaper of what the command
starts, so a process that double-forks and calls setsid is still found and killed. Where the
sandbox is not bubblewrap (Landlock cannot keep the top of the product folder or HOME, and with
none nothing is kept), the tamper check puts the protected tree back after the command."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sdd_git import reaper
from sdd_git.sandbox import tamper
from sdd_git.sandbox.choose import Sandbox, current
from sdd_git.sandbox.policy import (
    PROTECTED_FILE_NAMES,
    RULE_FOLDERS,
    SHELL_START_FILES,
    Policy,
    dotenv_files,
    hooks_folder,
    policy_for,
    sdd_home,
    site_folders,
)
from sdd_git.settings import user_config_file

OUTPUT_HEAD_BYTES = 20 * 1024
OUTPUT_TAIL_BYTES = 30 * 1024  # head + tail: the 50 KB of output a command gives back
_LINGER_SECONDS = 2.0


@dataclass(frozen=True)
class Finished:
    code: int | None  # None when it timed out
    output: str
    output_bytes: int
    timed_out: bool
    lingering: bool  # processes it left behind were killed
    tampered: tuple[str, ...]  # protected paths it changed, put back (relative to the product)
    sandbox: str  # the sandbox's label
    lost: tuple[str, ...] = ()  # of those, the ones too large to keep, which could not be put back


class _Output:
    """A command's output as it streams: the first and the last bytes, and how many in all."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def drain(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            self.total += len(chunk)
            room = OUTPUT_HEAD_BYTES - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if chunk:
                self.tail += chunk
                if len(self.tail) > OUTPUT_TAIL_BYTES:
                    del self.tail[: len(self.tail) - OUTPUT_TAIL_BYTES]

    def text(self) -> str:
        shown = len(self.head) + len(self.tail)
        if shown >= self.total:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        head, tail = bytes(self.head), bytes(self.tail)
        # Cut at line ends, so that no secret is split in half past the mask.
        if b"\n" in head:
            head = head[: head.rindex(b"\n") + 1]
        if b"\n" in tail:
            tail = tail[tail.index(b"\n") + 1 :]
        cut = self.total - len(head) - len(tail)
        return (
            head.decode("utf-8", errors="replace")
            + f"[... {cut:,} bytes of output cut ...]\n"
            + tail.decode("utf-8", errors="replace")
        )


def protected_tree(policy: Policy, box: Sandbox) -> list[Path]:
    """What the tamper check watches. Under bubblewrap the kernel keeps every existing protected
    path; only a rule folder that did not exist yet could be made, so those are watched. Under
    anything weaker: the protected parts of the product, the person's git and sdd configuration
    in HOME (also where it does not exist yet)."""
    hooks = hooks_folder(policy.product)
    rule_folders = [policy.product / name for name in (*RULE_FOLDERS, *([hooks] if hooks else []))]
    if box.name == "bwrap":
        return [p for p in rule_folders if not os.path.lexists(p)]
    home = policy.home
    extra = [
        home / ".gitconfig",
        home / ".config" / "git",
        home / ".sdd",
        sdd_home(),
        user_config_file().parent,  # her user settings layer
        *(home / name for name in SHELL_START_FILES),
        home / ".local" / "bin",
        *installed_sdd(),
    ]
    dotenv = [policy.product / name for name in dotenv_files(policy.product)]
    kept = [*policy.read_only, *policy.kept]
    return list(dict.fromkeys([*kept, *rule_folders, *dotenv, *extra]))


def installed_sdd() -> list[Path]:
    """sdd's own code and entry points: a command that rewrites them runs in her next `sdd`."""
    import sdd_git

    found = [Path(sdd_git.__file__).resolve().parent, Path(sys.prefix) / "bin"]
    which = shutil.which("sdd")
    if which:
        found.append(Path(which))
    return found


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="sdd-scratch-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _launch(
    box: Sandbox, policy: Policy, command: str, env: Mapping[str, str], scratch: Path
) -> tuple[list[str], Callable[[], None] | None, dict[str, str], Callable[[], None]]:
    child_env = dict(env)
    shell = ["bash", "-c", command]
    if box.name == "bwrap":
        from sdd_git.sandbox import bwrap

        return bwrap.argv(box.binary, policy, shell), None, child_env, lambda: None
    child_env.update(HOME=str(scratch), TMPDIR=str(scratch))
    if box.name == "landlock":
        from sdd_git.sandbox import landlock

        prepared = landlock.prepare(policy)
        return shell, prepared.apply, child_env, prepared.close
    if box.name == "seatbelt":
        from sdd_git.sandbox import seatbelt

        return seatbelt.argv(policy, shell), None, child_env, lambda: None
    return shell, None, child_env, lambda: None


def run(
    product: Path,
    command: str,
    env: Mapping[str, str],
    *,
    network: bool,
    timeout: float,
) -> Finished:
    """Run `bash -c command` in the product folder inside the sandbox; wait for it, collect its
    output (head and tail), kill what it left running, and put back what it tampered with."""
    box = current()
    with _scratch() as scratch:
        rule_files_before = tamper.rule_files(product.resolve(), PROTECTED_FILE_NAMES)
        policy = policy_for(product, scratch, network, rule_files_before)
        watched = protected_tree(policy, box)
        site = site_folders() if box.name != "bwrap" else []
        before = tamper.take(watched, site)
        reaping = reaper.become_subreaper()
        argv, preexec, child_env, cleanup = _launch(box, policy, command, env, scratch)
        try:
            process = subprocess.Popen(
                argv,
                cwd=policy.product,
                env=child_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so a timeout stops all of it
                preexec_fn=preexec,  # Landlock is applied in the child, before exec
            )
        finally:
            cleanup()
        assert process.stdout is not None
        output = _Output()
        reader = threading.Thread(target=output.drain, args=(process.stdout,), daemon=True)
        reader.start()
        timed_out = False
        interrupted: BaseException | None = None
        try:
            code: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            reaper.kill_group(process.pid)
            process.wait()
            code = None
        except BaseException as exc:  # Ctrl-C or SIGTERM reached sdd, not the command's session
            # The command runs in its own session, so the signal never reaches it: it and all it
            # started are killed here, and the tamper check below still runs before sdd exits.
            interrupted = exc
            reaper.kill_group(process.pid)
            process.wait()
            code = None
        reaper.kill_group(process.pid)  # whatever it left in its group goes too
        lingering = reaper.end_descendants() if reaping else False
        reader.join(timeout=_LINGER_SECONDS)
        if reader.is_alive():
            lingering = True
            reader.join(timeout=_LINGER_SECONDS)
        process.stdout.close()
        tampered = tamper.changed(before, watched, site)
        lost = tamper.restore(before, tampered) if tampered else []
        tampered += _planted_rule_files(policy.product, rule_files_before)
        if interrupted is not None:
            raise interrupted
        shown = tuple(_shown(policy, name) for name in tampered)
        return Finished(
            code,
            output.text(),
            output.total,
            timed_out,
            lingering,
            shown,
            box.label,
            tuple(_shown(policy, name) for name in lost),
        )


def _planted_rule_files(product: Path, before: set[str]) -> list[str]:
    """A ROLE.md, SKILL.md or another agent's rule file (AGENTS.md, CLAUDE.md, .mcp.json...) the
    command made anywhere in the product: removed, and reported.
    No kernel rule can name every future path of a file by its name, so this is checked."""
    made = sorted(tamper.rule_files(product, PROTECTED_FILE_NAMES) - before)
    for name in made:
        with contextlib.suppress(OSError):
            os.unlink(name)
    return made


def _shown(policy: Policy, name: str) -> str:
    path = Path(name)
    return (
        path.relative_to(policy.product).as_posix() if path.is_relative_to(policy.product) else name
    )
