"""`sdd page --install-shortcut`: her page without a terminal. The Linux desktop entry for real
(its content, the quoting of a folder with spaces and worse in its Exec line, and that launching
it again while her page is served opens a fresh sign-in), and the macOS bundle's layout, written
with the platform forced."""

from __future__ import annotations

import html
import http.client
import os
import plistlib
import re
import shlex
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from sdd_git.page import shortcut
from sdd_git.records.person import init as init_root
from sdd_git.root import Root
from tests.conftest import SddRunner

DEADLINE = 30.0  # seconds to wait for a server or a browser call (a deadline, not a measure)
# Everything the Exec line's quoting has to carry: spaces, quotes, $, backticks, a backslash, %.
AWKWARD = 'My "money" $HOME `id` back\\slash 100% & co'


@pytest.fixture
def product(tmp_path: Path) -> Root:
    return init_root(tmp_path / "My products" / AWKWARD, product="Expenses").root


def exec_words(entry: str) -> list[str]:
    """The Exec line read as the Desktop Entry Specification says a launcher reads it: the
    string value's escapes first (`\\\\` is one backslash), then the quoting (a double-quoted
    word, in which a backslash escapes `"`, `` ` ``, `$` and `\\`, as in a POSIX shell), then
    `%%` is one `%`."""
    (line,) = [v for k, _, v in (x.partition("=") for x in entry.splitlines()) if k == "Exec"]
    escapes = {"s": " ", "n": "\n", "t": "\t", "r": "\r", "\\": "\\"}
    value = re.sub(r"\\([sntr\\])", lambda m: escapes[m[1]], line)
    words = re.findall(r'"((?:[^"\\]|\\["`$\\])*)"(?: |$)', value)
    assert " ".join(f'"{w}"' for w in words) == value, value  # every word quoted, nothing else
    return [re.sub(r'\\(["`$\\])', r"\1", w).replace("%%", "%") for w in words]


def test_the_linux_shortcut_is_a_desktop_entry_that_runs_her_page_for_this_folder(
    product: Root, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    path = shortcut.install(product, system=shortcut.LINUX, home=tmp_path, data_home=str(data))
    assert path.parent == data / "applications" and path.suffix == ".desktop"
    entry = path.read_text()
    assert entry.startswith("[Desktop Entry]\n")
    fields = dict(line.split("=", 1) for line in entry.splitlines()[1:])
    assert fields["Type"] == "Application" and fields["Terminal"] == "false"
    assert fields["Name"] == "Expenses (your page)"
    assert exec_words(entry) == [
        sys.executable, "-m", "sdd_git", "-C", str(product.path), "page", "--shortcut"
    ]  # fmt: skip
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_without_xdg_data_home_it_goes_to_the_users_applications(
    product: Root, tmp_path: Path
) -> None:
    path = shortcut.install(product, system=shortcut.LINUX, home=tmp_path, data_home="")
    assert path.parent == tmp_path / ".local" / "share" / "applications"


def test_installing_it_twice_leaves_the_same_one_file(product: Root, tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    first = shortcut.install(product, system=shortcut.LINUX, home=tmp_path, data_home=data)
    text = first.read_text()
    again = shortcut.install(product, system=shortcut.LINUX, home=tmp_path, data_home=data)
    assert again == first and again.read_text() == text
    assert sorted(p.name for p in first.parent.iterdir()) == [first.name]  # no temp file left


def test_sdd_page_install_shortcut_prints_where_it_wrote(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(sys, "platform", "linux")
    done = sdd("page", "--install-shortcut")
    assert done.code == 0, done.stderr
    written = Path(done.stdout.strip())
    assert written.parent == tmp_path / "data" / "applications" and written.is_file()
    assert "shortcut is written" in done.stderr


def test_the_macos_shortcut_is_an_app_bundle_whose_script_starts_her_page(
    product: Root, tmp_path: Path
) -> None:
    bundle = shortcut.install(product, system=shortcut.MACOS, home=tmp_path)
    assert bundle == tmp_path / "Applications" / "Expenses (your page).app"
    info = plistlib.loads((bundle / "Contents" / "Info.plist").read_bytes())
    assert info["CFBundleExecutable"] == "launch" and info["CFBundlePackageType"] == "APPL"
    assert info["CFBundleName"] == "Expenses (your page)"
    assert info["SDDFolder"] == str(product.path)
    script = bundle / "Contents" / "MacOS" / "launch"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    text = script.read_text()
    assert text.startswith("#!/bin/sh\n")
    (line,) = [x for x in text.splitlines() if x.startswith("nohup ")]
    words = shlex.split(line)
    assert words[1:8] == shortcut.launch_command(product)  # the folder is one word, whole
    assert words[-1] == "&"  # in the background: a second launch runs the script again
    assert shortcut.install(product, system=shortcut.MACOS, home=tmp_path) == bundle  # again
    other = init_root(tmp_path / "elsewhere", product="Expenses").root
    theirs = shortcut.install(other, system=shortcut.MACOS, home=tmp_path)
    assert theirs != bundle and theirs.name.startswith("Expenses (your page, ")


def test_a_folder_name_with_a_line_break_is_refused(tmp_path: Path) -> None:
    from sdd_git.errors import UsageError

    odd = init_root(tmp_path / "two\nlines", product="X").root
    with pytest.raises(UsageError, match="line break"):
        shortcut.install(odd, system=shortcut.LINUX, home=tmp_path, data_home=str(tmp_path))


# --- launched for real ---------------------------------------------------------------------------


@pytest.fixture
def opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A browser that only notes each address it is asked to open (what Python's webbrowser
    calls, through $BROWSER)."""
    log = tmp_path / "browser.log"
    fake = tmp_path / "fake-browser"
    fake.write_text(f'#!/bin/sh\necho "$1" >> {shlex.quote(str(log))}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(fake))
    return log


def wait_for_lines(log: Path, count: int) -> list[str]:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        lines = log.read_text().splitlines() if log.exists() else []
        if len(lines) >= count:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"the browser was opened {len(lines)} time(s), not {count}")


def first_address(opened_uri: str) -> str:
    """The address her opener file forwards to (it carries the one-time token)."""
    opener = Path(opened_uri.removeprefix("file://"))
    assert stat.S_IMODE(opener.stat().st_mode) == 0o600
    assert stat.S_IMODE(opener.parent.stat().st_mode) == 0o700
    found = re.search(r'url=([^"]+)"', opener.read_text())
    assert found, opener.read_text()
    return html.unescape(found.group(1))


def sign_in(address: str) -> tuple[int, str]:
    """Her browser's first request: the status, and the cookie it was given."""
    where = re.match(r"http://([\d.]+):(\d+)(/.*)", address)
    assert where, address
    connection = http.client.HTTPConnection(where[1], int(where[2]), timeout=DEADLINE)
    connection.request("GET", where[3], headers={"Host": f"{where[1]}:{where[2]}"})
    answer = connection.getresponse()
    cookie = answer.getheader("set-cookie") or ""
    connection.close()
    return answer.status, cookie


@pytest.fixture
def launched(product: Root, tmp_path: Path, opened: Path) -> list[str]:
    """Her shortcut's command, as the desktop reads it from the entry it was written to."""
    path = shortcut.install(product, system=shortcut.LINUX, home=tmp_path, data_home=str(tmp_path))
    return exec_words(path.read_text())


def test_launching_the_shortcut_again_opens_a_fresh_sign_in(
    product: Root, opened: Path, launched: list[str]
) -> None:
    page = subprocess.Popen(launched, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        (first,) = wait_for_lines(opened, 1)
        address = first_address(first)
        # The first sign-in link is lost, unused. Her second click on the shortcut:
        again = subprocess.run(launched, capture_output=True, text=True, timeout=DEADLINE)
        assert again.returncode == 0, again.stderr
        assert "opens again in your browser" in again.stderr
        assert page.poll() is None  # the same page goes on serving: nothing started twice
        second = first_address(wait_for_lines(opened, 2)[1])
        assert second != address and second.split("?")[0] == address.split("?")[0]
        status, cookie = sign_in(second)
        assert status == 303 and cookie.startswith("sdd_page_")
        assert sign_in(address)[0] == 403  # the lost one opens nothing any more
        token = second.split("token=", 1)[1]
        for found in product.path.rglob("*"):  # no token rests in the product or its state
            if found.is_file() and not found.is_symlink():
                assert token.encode() not in found.read_bytes(), found
    finally:
        page.send_signal(signal.SIGTERM)
        page.wait(timeout=DEADLINE)
    assert not (product.local / "page-server.json").exists()
    # With no page served, the shortcut serves one (it does not wait on the one that ended).
    started = subprocess.Popen(launched, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        status, _ = sign_in(first_address(wait_for_lines(opened, 3)[2]))
        assert status == 303
    finally:
        started.send_signal(signal.SIGTERM)
        started.wait(timeout=DEADLINE)


def test_a_note_left_by_a_page_that_died_does_not_hold_the_shortcut_up(
    product: Root, tmp_path: Path
) -> None:
    from sdd_git import statefolders
    from sdd_git.page.reopen import RECORD, REQUEST, ask_served_page

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    note = f'{{"pid": {int(dead.stdout)}, "host": "{socket.gethostname()}", "started": 1}}\n'
    statefolders.append(product.local / RECORD, note.encode())
    assert ask_served_page(product, wait=0.5) is False
    assert not (product.local / REQUEST).exists()


GIO = Path("/usr/bin/gio")


@pytest.mark.skipif(not GIO.exists(), reason="needs GLib's gio (apt-get install libglib2.0-bin)")
def test_the_desktop_launches_the_entry_as_written_and_again_for_a_fresh_sign_in(
    product: Root, tmp_path: Path, opened: Path
) -> None:
    """GLib reads the entry as her desktop does (`gio launch`): its own Exec parser, not ours."""
    import json

    entry = shortcut.install(product, system=shortcut.LINUX, home=tmp_path, data_home=str(tmp_path))
    subprocess.run([str(GIO), "launch", str(entry)], check=True, timeout=DEADLINE)
    (first,) = wait_for_lines(opened, 1)
    note = product.local / "page-server.json"
    served = json.loads(note.read_text())["pid"]  # started by gio for this test: stopped below
    try:
        subprocess.run([str(GIO), "launch", str(entry)], check=True, timeout=DEADLINE)
        second = first_address(wait_for_lines(opened, 2)[1])
        assert json.loads(note.read_text())["pid"] == served  # the same page, asked again
        assert second != first_address(first)
        assert sign_in(second)[0] == 303
    finally:
        os.kill(served, signal.SIGTERM)
    deadline = time.monotonic() + DEADLINE
    while note.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not note.exists()
