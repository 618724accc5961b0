"""A Ctrl-C or SIGTERM whose KeyboardInterrupt lands where Python cannot raise it (a weakref
callback, a `__del__`) is sent again, so `sdd` still stops: in any command, and in a run, whose
handler otherwise ignores every signal after the first."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

LOST_IN_A_CALLBACK = """
import os, signal, time, weakref
{setup}
class Thing:
    pass

def callback(_):
    os.kill(os.getpid(), signal.{signal})
    for _ in range(200000):  # the handler runs in here, where its exception is dropped
        pass

thing = Thing()
watch = weakref.ref(thing, callback)
try:
    {enter}
        del thing
        deadline = time.monotonic() + 3  # time enough for the interrupt to come again
        while time.monotonic() < deadline:
            pass
        print("went on")
except KeyboardInterrupt:
    print("stopped")
"""

PLAIN = (
    "import signal as s\nfrom sdd_git.cli.interrupts import keep_interrupts\n"
    "def terminated(*_):\n    raise KeyboardInterrupt\n"
    "s.signal(s.SIGTERM, terminated)\n{keep}",
    "if True:",
)
IN_A_RUN = (
    "from sdd_git.cli.run_cmds import _signals_once\n"
    "from sdd_git.cli.interrupts import keep_interrupts\n{keep}",
    "with _signals_once():",
)


def outcome(kind: tuple[str, str], sig: str, keep: bool) -> subprocess.CompletedProcess[str]:
    setup, enter = kind
    code = LOST_IN_A_CALLBACK.format(
        setup=setup.format(keep="keep_interrupts()" if keep else ""), signal=sig, enter=enter
    )
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("kind", [PLAIN, IN_A_RUN], ids=["a command", "a run"])
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_an_interrupt_lost_in_a_callback_is_sent_again(kind: tuple[str, str], sig: str) -> None:
    done = outcome(kind, sig, keep=True)
    assert done.stdout.strip() == "stopped", done


def test_without_the_hook_the_interrupt_is_lost() -> None:
    """The control: this is the failure the hook is there for."""
    done = outcome(IN_A_RUN, "SIGTERM", keep=False)
    assert done.stdout.strip() == "went on", done
    assert "KeyboardInterrupt" in done.stderr  # Python's "Exception ignored in: <callback>"


def test_sdd_main_keeps_interrupts() -> None:
    code = (
        "import sys\nfrom sdd_git.cli import main\n"
        "try:\n    main.main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(getattr(sys.unraisablehook, 'sdd_keeps_interrupts', False))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "True", done
