"""`beneath`: paths below the product folder, opened without following a symlink.

Every test runs twice: with `openat2` where this kernel has it, and with the component walk
that other kernels (and seccomp filters that refuse openat2) get.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from sdd_git import beneath as base
from sdd_git.tools import beneath
from sdd_git.tools.base import ToolFailed

NEVER = "file tools never follow symlinks"


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "openat2":
        if beneath.kernel_path() != "openat2":
            pytest.skip("this kernel has no openat2")
    else:
        monkeypatch.setattr(base, "_OPENAT2", base._Openat2())
        monkeypatch.setattr(base._OPENAT2, "probed", True)  # probed, and found missing
        assert beneath.kernel_path() == "walk"
    yield request.param


@pytest.fixture
def top(tmp_path: Path, mode: str) -> Path:
    product = tmp_path / "product"
    (product / "memory").mkdir(parents=True)
    (product / "memory" / "decisions.yaml").write_text("person\n", encoding="utf-8")
    (product / "src").mkdir()
    (product / "src" / "app.py").write_text("app\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("private\n", encoding="utf-8")
    return product


def failure(call: object, *args: object) -> str:
    assert callable(call)
    with pytest.raises(ToolFailed) as caught:
        call(*args)
    return str(caught.value)


# --- writes -----------------------------------------------------------------------------------


def test_write_makes_folders_and_replaces_whole(top: Path) -> None:
    assert beneath.write_atomic(top, "src/pkg/new.py", b"one\n") is False
    assert (top / "src" / "pkg" / "new.py").read_bytes() == b"one\n"
    assert stat.S_IMODE((top / "src" / "pkg" / "new.py").stat().st_mode) == 0o644
    (top / "src" / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (top / "src" / "run.sh").chmod(0o755)
    assert beneath.write_atomic(top, "src/run.sh", b"#!/bin/sh\necho\n") is True
    assert stat.S_IMODE((top / "src" / "run.sh").stat().st_mode) == 0o755  # stays executable
    assert not [p for p in (top / "src").iterdir() if p.name.endswith(".tmp")]
    assert "is a folder" in failure(beneath.write_atomic, top, "src", b"x")


def test_write_never_goes_through_a_symlinked_folder(top: Path, tmp_path: Path) -> None:
    (top / "inner").symlink_to(top / "memory")
    (top / "out").symlink_to(tmp_path / "outside")
    message = failure(beneath.write_atomic, top, "inner/decisions.yaml", b"role")
    assert message == f"inner/decisions.yaml goes through the symlink inner; {NEVER}"
    message = failure(beneath.write_atomic, top, "out/new/secret.txt", b"role")
    assert message == f"out/new/secret.txt goes through the symlink out; {NEVER}"
    assert (top / "memory" / "decisions.yaml").read_text(encoding="utf-8") == "person\n"
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.txt"]


def test_write_replaces_a_symlink_at_the_name_itself(top: Path, tmp_path: Path) -> None:
    (top / "src" / "x.txt").symlink_to(top / "memory" / "decisions.yaml")
    (top / "src" / "y.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    assert beneath.write_atomic(top, "src/x.txt", b"new") is True
    assert beneath.write_atomic(top, "src/y.txt", b"new") is True
    assert not (top / "src" / "x.txt").is_symlink()
    assert (top / "src" / "x.txt").read_bytes() == b"new"
    assert (top / "memory" / "decisions.yaml").read_text(encoding="utf-8") == "person\n"
    assert (tmp_path / "outside" / "secret.txt").read_text(encoding="utf-8") == "private\n"


def test_paths_stay_inside(top: Path, tmp_path: Path) -> None:
    assert failure(beneath.write_atomic, top, "../x.txt", b"x") == beneath.OUTSIDE
    assert failure(beneath.write_atomic, top, "src/../../x.txt", b"x") == beneath.OUTSIDE
    assert failure(beneath.write_atomic, top, "/etc/x.txt", b"x") == beneath.OUTSIDE
    assert failure(beneath.read_bytes, top, str(tmp_path / "outside/secret.txt"), 99) == (
        beneath.OUTSIDE
    )
    assert not (tmp_path / "x.txt").exists()
    # A `..` that stays inside is fine, and so is an absolute path inside.
    beneath.write_atomic(top, "src/../src/b.txt", b"b")
    beneath.write_atomic(top, str(top / "src" / "c.txt"), b"c")
    assert (top / "src" / "b.txt").read_bytes() == b"b"
    assert (top / "src" / "c.txt").read_bytes() == b"c"


def test_a_dotdot_out_of_a_symlink_is_refused(top: Path) -> None:
    # The kernel would climb out of the link's target (inside memory/deep), the guard checked
    # that; taking `..` back by name would land in src/ instead. Neither is guessed: refused.
    (top / "memory" / "deep").mkdir()
    (top / "src" / "link").symlink_to(top / "memory" / "deep")
    message = failure(beneath.write_atomic, top, "src/link/../decisions.yaml", b"role")
    assert message == f"src/link/../decisions.yaml goes through the symlink src/link; {NEVER}"
    assert (top / "memory" / "decisions.yaml").read_text(encoding="utf-8") == "person\n"
    assert not (top / "src" / "decisions.yaml").exists()


def test_a_file_on_the_way_is_not_a_folder(top: Path) -> None:
    message = failure(beneath.write_atomic, top, "src/app.py/x", b"x")
    assert message == "src/app.py/x: a name on the way is a file, not a folder"


def test_append_never_through_a_symlink(top: Path) -> None:
    beneath.append(top, ".sdd/local/qa/CH-0001.jsonl", b"one\n")
    beneath.append(top, ".sdd/local/qa/CH-0001.jsonl", b"two\n")
    assert (top / ".sdd/local/qa/CH-0001.jsonl").read_bytes() == b"one\ntwo\n"
    (top / ".sdd/local/qa/CH-0002.jsonl").symlink_to(top / "memory" / "decisions.yaml")
    message = failure(beneath.append, top, ".sdd/local/qa/CH-0002.jsonl", b"x")
    assert message == f".sdd/local/qa/CH-0002.jsonl is a symlink; {NEVER}"
    assert (top / "memory" / "decisions.yaml").read_text(encoding="utf-8") == "person\n"


# --- deletes ----------------------------------------------------------------------------------


def test_unlink_removes_the_entry_never_its_target(top: Path, tmp_path: Path) -> None:
    (top / "src" / "alias").symlink_to(top / "memory" / "decisions.yaml")
    (top / "src" / "out").symlink_to(tmp_path / "outside")
    beneath.unlink(top, "src/alias")
    beneath.unlink(top, "src/out")
    assert not os.path.lexists(top / "src" / "alias")
    assert (top / "memory" / "decisions.yaml").exists()
    assert (tmp_path / "outside" / "secret.txt").exists()
    assert failure(beneath.unlink, top, "src/alias") == "no file src/alias"
    assert failure(beneath.unlink, top, "src") == "src is a folder; only a file can be deleted"
    (top / "inner").symlink_to(top / "memory")
    message = failure(beneath.unlink, top, "inner/decisions.yaml")
    assert message == f"inner/decisions.yaml goes through the symlink inner; {NEVER}"
    assert (top / "memory" / "decisions.yaml").exists()


# --- reads ------------------------------------------------------------------------------------


def test_reads_follow_symlinks_that_stay_inside(top: Path) -> None:
    (top / "alias.py").symlink_to("src/app.py")  # relative
    (top / "abs.py").symlink_to(top / "src" / "app.py")  # absolute, inside
    (top / "srclink").symlink_to("src")
    (top / "src" / "up").symlink_to("..")
    (top / "chain").symlink_to("alias.py")
    for path in ("alias.py", "abs.py", "srclink/app.py", "src/up/src/app.py", "chain"):
        assert beneath.read_bytes(top, path, 99).data == b"app\n", path
    with beneath.folder(top) as folder:
        assert folder.resolve("srclink/../src/app.py").rel == "src/app.py"  # as the kernel does
        assert folder.resolve("srclink").is_dir
    assert beneath.read_bytes(top, "src/app.py", 2) == beneath.Read(b"ap", 4)


def test_reads_refuse_links_out_broken_and_looping(top: Path, tmp_path: Path) -> None:
    (top / "out.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    (top / "outdir").symlink_to("../outside")
    (top / "gone.txt").symlink_to("src/nothing.txt")
    (top / "loop1").symlink_to("loop2")
    (top / "loop2").symlink_to("loop1")
    assert failure(beneath.read_bytes, top, "out.txt", 99) == (
        "out.txt is a symlink that leads outside the product folder; "
        "file tools never follow a symlink out of it"
    )
    assert failure(beneath.read_bytes, top, "outdir/secret.txt", 99) == (
        "outdir/secret.txt goes through the symlink outdir, which leads outside the product "
        "folder; file tools never follow a symlink out of it"
    )
    assert failure(beneath.read_bytes, top, "gone.txt", 99) == (
        "gone.txt is a broken symlink (what it points to does not exist)"
    )
    assert "more than 40 symlinks" in failure(beneath.read_bytes, top, "loop1", 99)
    assert failure(beneath.read_bytes, top, "nope.txt", 99) == "no file nope.txt"
    assert failure(beneath.read_bytes, top, "src", 99) == "src is a folder"


def test_a_fifo_never_hangs_a_read(top: Path) -> None:
    os.mkfifo(top / "src" / "pipe")
    with beneath.folder(top) as folder:
        found = folder.resolve("src/pipe")
        assert found.status is not None and not found.is_file
        assert failure(folder.read, found, 99) == "src/pipe is not a regular file"
    os.mkfifo(top / "src" / "pipe2")
    assert failure(beneath.append, top, "src/pipe2", b"x") == "src/pipe2 is not a regular file"


def test_files_never_enters_a_symlinked_folder(top: Path, tmp_path: Path) -> None:
    (top / "out").symlink_to(tmp_path / "outside")
    (top / "mem").symlink_to("memory")
    (top / ".git").mkdir()
    (top / ".git" / "HEAD").write_text("x", encoding="utf-8")
    with beneath.folder(top) as folder:
        listed = folder.files(())
    assert listed == ["mem", "memory/decisions.yaml", "out", "src/app.py"]


def test_lstat_and_is_dir(top: Path) -> None:
    (top / "mem").symlink_to("memory")
    assert beneath.is_dir(top, "src") is True
    assert beneath.is_dir(top, "mem") is False  # a symlink to a folder is not one
    assert beneath.lstat(top, "missing/deeper") is None
    entry = beneath.lstat(top, "mem")
    assert entry is not None and stat.S_ISLNK(entry.st_mode)
    assert failure(beneath.lstat, top, "mem/decisions.yaml") == (
        f"mem/decisions.yaml goes through the symlink mem; {NEVER}"
    )


def test_a_nul_in_a_path_is_refused_in_words(top: Path) -> None:
    message = "a path cannot hold a NUL character"
    assert failure(beneath.write_atomic, top, "src/a\0b", b"x") == message
    assert failure(beneath.read_bytes, top, "src/a\0b", 9) == message
