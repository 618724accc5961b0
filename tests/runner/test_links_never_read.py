"""A link in her record never hands the model what it points to (issue 21, part 1).

The routes: `memory/specs/SPEC-0009.md -> ../../../.ssh/id_ed25519` sent a private key to the
model through `read_record`; a link to `/proc/self/environ` sent `CI_JOB_JWT`. Each test runs a
real role run on the scripted provider and reads what the provider was sent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner, run_cli
from tests.runner.scripted import accepted_change, script, transcript

CANARY = "canary-7f3a9c1e-never-for-the-model"


def _read_record(record_id: str) -> list[dict[str, object]]:
    call = {"tool": "read_record", "args": {"id": record_id}}
    return [{"tool_calls": [call]}, {"say": "ok"}]


def _run_reading(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_id: str
) -> str:
    """What the model was told after its `read_record` call (a builder, on a change whose
    reading is accepted)."""
    accepted_change(root)
    script(tmp_path, monkeypatch, _read_record(record_id))
    done = sdd("role", "run", "builder", "--task", "Read the spec", "--json")
    assert done.code == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["status"] == "done"
    told = transcript(tmp_path)[1]["messages"][-1]["content"]
    assert isinstance(told, str)
    return told


def test_a_spec_linked_to_a_file_outside_the_product_is_refused_and_its_text_never_sent(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_ed25519"
    secret.parent.mkdir(parents=True)
    secret.write_text(f"-----BEGIN KEY-----\n{CANARY}\n")
    (root.specs / "SPEC-0009.md").symlink_to(os.path.relpath(secret, root.specs))

    told = _run_reading(sdd, root, tmp_path, monkeypatch, "SPEC-0009")

    assert "memory/specs/SPEC-0009.md is a link" in told
    assert "sdd reads only regular files inside the product" in told
    assert CANARY not in (tmp_path / "s.transcript.jsonl").read_text()
    assert CANARY not in "".join(p.read_text() for p in (root.sdd / "role-runs").iterdir())


def test_a_spec_section_through_a_link_is_refused_too(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The section reader goes by the same file: `SPEC-0009#S1` opens nothing a link names."""
    outside = tmp_path / "elsewhere.md"
    outside.write_text(f"---\nid: SPEC-0009\n---\n## S1 Reading\n{CANARY}\n")
    (root.specs / "SPEC-0009.md").symlink_to(outside)

    told = _run_reading(sdd, root, tmp_path, monkeypatch, "SPEC-0009#S1")

    assert "memory/specs/SPEC-0009.md is a link" in told
    assert CANARY not in (tmp_path / "s.transcript.jsonl").read_text()


def test_a_spec_linked_to_proc_self_environ_is_refused(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI_JOB_JWT", CANARY)
    (root.specs / "SPEC-0009.md").symlink_to("/proc/self/environ")

    told = _run_reading(sdd, root, tmp_path, monkeypatch, "SPEC-0009")

    assert "memory/specs/SPEC-0009.md is a link" in told
    assert CANARY not in (tmp_path / "s.transcript.jsonl").read_text()


def test_a_release_through_a_linked_folder_is_refused(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link on the way (the whole `memory/releases` folder) is refused like one at the name."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "R-0001.md").write_text(CANARY)
    for entry in root.releases.iterdir():
        entry.unlink()
    root.releases.rmdir()
    root.releases.symlink_to(outside)

    told = _run_reading(sdd, root, tmp_path, monkeypatch, "R-0001")

    assert "memory/releases/R-0001.md goes through the link memory/releases" in told
    assert CANARY not in (tmp_path / "s.transcript.jsonl").read_text()


def test_a_fifo_as_a_spec_file_is_refused_without_hanging(
    root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real `sdd role run` process: a reader that opened the FIFO would wait for a writer
    forever, and the 60-second bound of `run_cli` would fail the test."""
    accepted_change(root)
    os.mkfifo(root.specs / "SPEC-0009.md")
    script(tmp_path, monkeypatch, _read_record("SPEC-0009"))

    done = run_cli("role", "run", "builder", "--task", "Read the spec", "--json", cwd=root.path)

    assert done.returncode == 0, done.stdout + done.stderr
    told = transcript(tmp_path)[1]["messages"][-1]["content"]
    assert "memory/specs/SPEC-0009.md is not a regular file" in told
