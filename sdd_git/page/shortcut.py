"""`sdd page --install-shortcut`: a launcher that opens her page for this product, for someone
who never opens a terminal.

- Linux (and other XDG desktops): a desktop entry, `sdd-page-NAME-HASH.desktop`, in
  `$XDG_DATA_HOME/applications` (default `~/.local/share/applications`): her applications menu
  lists it under her product's name.
- macOS: a small application bundle, `~/Applications/PRODUCT (your page).app`: an Info.plist,
  and a shell script as its executable that starts the page in the background and returns (a
  bundle that kept running would only be brought to the front when launched again, and her
  second click would ask nothing).

Either runs `python -m sdd_git -C FOLDER page --shortcut` with the Python sdd runs on now: the
first launch serves her page and opens it; a launch while it is served asks that server to open
her page again with a fresh sign-in (sdd_git.page.reopen), so a lost or spent sign-in link is
never an error. Each file is written atomically, and writing the same shortcut twice leaves the
same files."""

from __future__ import annotations

import hashlib
import os
import plistlib
import re
import shlex
import sys
from pathlib import Path

from sdd_git.errors import UsageError
from sdd_git.root import Root

LINUX = "linux"
MACOS = "macos"


def launch_command(root: Root) -> list[str]:
    """What the shortcut runs, every word whole (a folder with spaces is one word)."""
    return [sys.executable, "-m", "sdd_git", "-C", str(root.path), "page", "--shortcut"]


def product_name(root: Root) -> str:
    """Her product's name: `product:` (or `name:`) in memory/product.yaml, as `sdd init
    --product` wrote it; the folder's name only when the file names none."""
    from sdd_git.errors import SddError
    from sdd_git.records import scopes

    try:
        named = scopes.load(root).product
    except (SddError, OSError):  # a broken file says so where it is used, not in a name
        named = None
    return named or root.path.name


def install(
    root: Root,
    product: str | None = None,
    system: str | None = None,
    home: Path | None = None,
    data_home: str | None = None,
) -> Path:
    """Write her shortcut; returns where (a file on Linux, an app bundle on macOS). `product`
    (her product's name), `system`, `home` and `data_home` (`$XDG_DATA_HOME`) default to this
    product's and this machine's."""
    product = product or product_name(root)
    system = system or (MACOS if sys.platform == "darwin" else LINUX)
    home = home or Path.home()
    words = launch_command(root)
    if any("\n" in word or "\r" in word for word in words):
        raise UsageError(
            "a shortcut cannot name a folder whose name holds a line break",
            hint="rename the folder, then install the shortcut again",
        )
    if system == MACOS:
        return _app_bundle(root, product, home, words)
    if data_home is None:
        data_home = os.environ.get("XDG_DATA_HOME")
    data = Path(data_home) if data_home and Path(data_home).is_absolute() else None
    folder = (data or home / ".local" / "share") / "applications"
    return _desktop_entry(root, product, folder, words)


def _key(root: Root) -> str:
    """Short and the same for the same folder: one shortcut per product, however often made."""
    return hashlib.sha256(str(root.path).encode()).hexdigest()[:8]


def _slug(product: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", product.lower()).strip("-")[:40] or "product"


# --- Linux: a desktop entry ---------------------------------------------------------------------


def exec_line(words: list[str]) -> str:
    """The desktop entry's Exec value: each word in double quotes, with `"`, `` ` ``, `$` and
    `\\` escaped by a backslash (the Desktop Entry Specification's quoting), then every
    backslash doubled and `%` written `%%` (its rules for a string value and field codes)."""
    quoted = []
    for word in words:
        inner = re.sub(r'(["`$\\])', r"\\\1", word)
        quoted.append('"' + inner.replace("\\", "\\\\").replace("%", "%%") + '"')
    return " ".join(quoted)


def _entry_text(value: str) -> str:
    """A one-line string value: its backslashes and control characters escaped."""
    value = value.replace("\\", "\\\\")
    return "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in value)


def desktop_entry(root: Root, product: str, words: list[str]) -> str:
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Version=1.0\n"
        f"Name={_entry_text(product)} (your page)\n"
        f"Comment=Opens your page for {_entry_text(str(root.path))}\n"
        f"Exec={exec_line(words)}\n"
        "Terminal=false\n"
        "StartupNotify=false\n"
        "Categories=Office;\n"
    )


def _desktop_entry(root: Root, product: str, folder: Path, words: list[str]) -> Path:
    from sdd_git.atomicfile import write_text_atomic

    path = folder / f"sdd-page-{_slug(product)}-{_key(root)}.desktop"
    write_text_atomic(path, desktop_entry(root, product, words))
    return path


# --- macOS: an application bundle ---------------------------------------------------------------


def launcher_script(words: list[str]) -> str:
    return (
        "#!/bin/sh\n"
        "# Opens your page (written by sdd page --install-shortcut). The page runs in the\n"
        "# background: launched again, this asks it for a fresh sign-in.\n"
        f"nohup {shlex.join(words)} >/dev/null 2>&1 </dev/null &\n"
    )


def info_plist(root: Root, product: str) -> bytes:
    return plistlib.dumps(
        {
            "CFBundleName": f"{product} (your page)",
            "CFBundleDisplayName": f"{product} (your page)",
            "CFBundleIdentifier": f"org.sdd-git.page.{_key(root)}",
            "CFBundleExecutable": "launch",
            "CFBundlePackageType": "APPL",
            "CFBundleVersion": "1",
            "LSUIElement": True,  # no Dock icon for a script that returns at once
            "SDDFolder": str(root.path),  # which product it opens: a name may be taken
        }
    )


def _app_bundle(root: Root, product: str, home: Path, words: list[str]) -> Path:
    from sdd_git.atomicfile import write_bytes_atomic

    shown = re.sub(r"[/:\x00-\x1f]", "-", product).strip(" .") or "Your product"
    bundle = home / "Applications" / f"{shown} (your page).app"
    if _other_folder(bundle, root):  # another product of the same name has that one
        bundle = bundle.with_name(f"{shown} (your page, {_key(root)}).app")
    contents = bundle / "Contents"
    write_bytes_atomic(contents / "Info.plist", info_plist(root, product))
    script = contents / "MacOS" / "launch"
    write_bytes_atomic(script, launcher_script(words).encode())
    script.chmod(0o755)
    return bundle


def _other_folder(bundle: Path, root: Root) -> bool:
    try:
        found = plistlib.loads((bundle / "Contents" / "Info.plist").read_bytes())
    except (OSError, plistlib.InvalidFileException, ValueError):
        return False
    return isinstance(found, dict) and found.get("SDDFolder") not in (None, str(root.path))
