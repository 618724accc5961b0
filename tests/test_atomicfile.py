from __future__ import annotations

from pathlib import Path

import pytest

from sdd_git.atomicfile import write_text_atomic


def test_write_replaces_the_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a" / "f.yaml"
    write_text_atomic(target, "one\n")
    write_text_atomic(target, "two\n")
    assert target.read_text() == "two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["f.yaml"]


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.yaml"
    target.write_text("old\n")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", broken_replace)
    with pytest.raises(OSError):
        write_text_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.yaml"]
