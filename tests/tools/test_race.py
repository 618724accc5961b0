"""A real race: while a thread swaps a folder (or the file's own name) for a symlink to the
person's record or out of the product as fast as it can, write_file and delete_file run a
few thousand times. Whatever the interleaving, nothing lands in `memory/` or outside.

The guard checked the path by name before the tool ran; these tests are about the moment of
use, so they call the tools directly, as the runner does once the guard said yes.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sdd_git.root import Root
from sdd_git.tools.act import DeleteFile, WriteFile
from sdd_git.tools.base import ToolContext, ToolFailed
from tests.tools import make_context

ROUNDS = 2000
# Every write through a planted name succeeds (fsync'd twice), so fewer rounds cover it.
PLANT_ROUNDS = 800
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _exchanger() -> Callable[[Path, Path], None] | None:
    """renameat2(RENAME_EXCHANGE): both names always exist, each is one or the other."""
    try:
        call = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None

    def exchange(a: Path, b: Path) -> None:
        if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return exchange


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under `folder`, with a hash of each file (symlinks as their target)."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(folder).as_posix()
            if full.is_symlink():
                found[rel] = "-> " + os.readlink(full)
            elif full.is_file():
                found[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
            else:
                found[rel] = "dir"
    return found


@contextmanager
def racing(flip: Callable[[], None]) -> Iterator[list[int]]:
    """Run `flip` in a loop on another thread until the block ends; yields a flip counter."""
    stop = threading.Event()
    count = [0]
    errors: list[BaseException] = []

    def loop() -> None:
        try:
            while not stop.is_set():
                flip()
                count[0] += 1
        except BaseException as exc:  # the test fails with it below
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # hand the GIL back and forth often: a finer interleaving
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield count
    finally:
        stop.set()
        thread.join(timeout=10)
        sys.setswitchinterval(interval)
    assert not errors, errors
    assert count[0] > 0


@pytest.fixture
def ctx(root: Root) -> ToolContext:
    return make_context(root)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "x.txt").write_text("outside\n", encoding="utf-8")
    return folder


def _targets(root: Root, outside: Path) -> list[tuple[str, Path]]:
    return [("memory", root.path / "memory"), ("outside", outside)]


@pytest.mark.parametrize("target_name", ["memory", "outside"])
def test_write_file_never_lands_through_a_swapped_folder(
    ctx: ToolContext, root: Root, outside: Path, target_name: str
) -> None:
    exchange = _exchanger()
    if exchange is None:
        pytest.skip("no renameat2 here to swap two names atomically")
    target = dict(_targets(root, outside))[target_name]
    (root.memory / "x.txt").write_text("person\n", encoding="utf-8")
    src, swap = root.path / "src", root.path / "src-swap"
    src.mkdir()
    swap.symlink_to(target)
    memory_before, outside_before = _tree(root.memory), _tree(outside)
    written = 0
    args = {"path": "src/x.txt", "content": "from the role\n", "purpose": "race"}
    with racing(lambda: exchange(src, swap)) as flips:
        for _ in range(ROUNDS):
            try:
                WriteFile().run(args, ctx)
                written += 1
            except ToolFailed as exc:
                assert "never follow symlinks" in str(exc), exc
    assert _tree(root.memory) == memory_before
    assert _tree(outside) == outside_before
    assert written > 0 and flips[0] > 0
    real = src if src.is_dir() and not src.is_symlink() else swap
    assert (real / "x.txt").read_text(encoding="utf-8") == "from the role\n"
    assert not [p for p in real.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("target_name", ["memory", "outside"])
def test_write_file_replaces_a_swapped_in_symlink_never_its_target(
    ctx: ToolContext, root: Root, outside: Path, target_name: str
) -> None:
    target = dict(_targets(root, outside))[target_name] / (
        "decisions.yaml" if target_name == "memory" else "x.txt"
    )
    src = root.path / "src"
    src.mkdir()
    memory_before, outside_before = _tree(root.memory), _tree(outside)

    def plant() -> None:
        # Atomically put a symlink at the very name the tool writes.
        staged = src / ".planted"
        staged.unlink(missing_ok=True)
        staged.symlink_to(target)
        os.replace(staged, src / "x.txt")

    args = {"path": "src/x.txt", "content": "from the role\n", "purpose": "race"}
    with racing(plant):
        for _ in range(PLANT_ROUNDS):
            WriteFile().run(args, ctx)  # a symlink at the name is replaced, never followed
    assert _tree(root.memory) == memory_before
    assert _tree(outside) == outside_before


@pytest.mark.parametrize("target_name", ["memory", "outside"])
def test_delete_file_never_deletes_through_a_swapped_folder(
    ctx: ToolContext, root: Root, outside: Path, target_name: str
) -> None:
    exchange = _exchanger()
    if exchange is None:
        pytest.skip("no renameat2 here to swap two names atomically")
    target = dict(_targets(root, outside))[target_name]
    (root.memory / "x.txt").write_text("person\n", encoding="utf-8")
    src, swap = root.path / "src", root.path / "src-swap"
    src.mkdir()
    swap.symlink_to(target)
    memory_before, outside_before = _tree(root.memory), _tree(outside)
    # The real folder, whatever its name at the moment: the file is put back before each try.
    real = os.open(src, os.O_RDONLY | os.O_DIRECTORY)
    deleted = 0
    args = {"path": "src/x.txt", "purpose": "race"}
    try:
        with racing(lambda: exchange(src, swap)):
            for _ in range(ROUNDS):
                os.close(os.open("x.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=real))
                try:
                    DeleteFile().run(args, ctx)
                    deleted += 1
                except ToolFailed as exc:
                    assert "never follow symlinks" in str(exc), exc
    finally:
        os.close(real)
    assert _tree(root.memory) == memory_before
    assert _tree(outside) == outside_before
    assert deleted > 0


def test_delete_file_removes_a_swapped_in_symlink_never_its_target(
    ctx: ToolContext, root: Root, outside: Path
) -> None:
    src = root.path / "src"
    src.mkdir()
    memory_before, outside_before = _tree(root.memory), _tree(outside)
    targets = [root.memory / "decisions.yaml", outside / "x.txt"]
    turn = [0]

    def plant() -> None:
        staged = src / ".planted"
        staged.unlink(missing_ok=True)
        staged.symlink_to(targets[turn[0] % 2])
        turn[0] += 1
        os.replace(staged, src / "x.txt")

    args = {"path": "src/x.txt", "purpose": "race"}
    with racing(plant):
        for _ in range(PLANT_ROUNDS):
            try:
                DeleteFile().run(args, ctx)
            except ToolFailed as exc:
                assert "no file src/x.txt" in str(exc), exc
    assert _tree(root.memory) == memory_before
    assert _tree(outside) == outside_before
