"""YAML from the repo cannot exhaust sdd (issue 21, part 2).

The route: an alias bomb of a few hundred bytes in one ROLE.md (the "billion laughs": 9 levels
of 9 aliases) made every run of every role die with MemoryError after 16 s. The registry is
partial-discovery-safe: the broken file is reported with its file and line, and skipped; it
never stops another role's run, `sdd role list`, a hook or the page.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from sdd_git.events import hooks as core
from sdd_git.page.app import build_app
from sdd_git.roles.registry import load_registry
from sdd_git.root import Root
from sdd_git.routines.hookindex import write_index
from tests.conftest import SddRunner, run_cli
from tests.events.hookhelp import (
    ROLE,
    ended,
    merge_feature,
    product,
    routine,
    runs_of,
    wait_until,
    worker_idle,
)
from tests.events.hookhelp import script as hook_script
from tests.runner.scripted import script

LEVELS = "abcdefghi"
BOMB_LINE = 10  # the value whose aliases first expand past the bound: `e`, 66,430 values
WHERE = f".sdd/roles/bomb/ROLE.md:{BOMB_LINE}:"


def billion_laughs() -> str:
    lines = ["---", "role: bomb", "job: Explode", "level: 1", "toolPolicy.delegation: deny"]
    lines.append("a: &a [" + ", ".join(['"lol"'] * 9) + "]")
    for parent, child in itertools.pairwise(LEVELS):
        lines.append(f"{child}: &{child} [" + ", ".join([f"*{parent}"] * 9) + "]")
    return "\n".join([*lines, "---", "Boom.", ""])


@pytest.fixture
def bomb(root: Root) -> Path:
    """The bomb in one repo role, beside a good role (the shipped spec-steward template)."""
    from sdd_git.roles.manage import add

    add(root, ROLE)
    path = root.sdd / "roles" / "bomb" / "ROLE.md"
    path.parent.mkdir(parents=True)
    path.write_text(billion_laughs())
    assert len(path.read_bytes()) < 700
    return path


def test_a_billion_laughs_in_one_role_file_fails_fast_naming_its_file_and_line(
    root: Root, bomb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root.path)
    started = time.monotonic()
    registry = load_registry(root)
    assert time.monotonic() - started < 1.0
    assert registry.get("bomb") is None and registry.get(ROLE) is not None
    (said,) = [w for w in registry.warnings if "bomb" in w]
    assert said.startswith(f"warning: skipped {WHERE} its aliases expand to more than")


def test_role_list_shows_the_good_role_and_says_the_broken_ones_file_and_line(
    sdd: SddRunner, bomb: Path
) -> None:
    listed = sdd("role", "list", "--all", "--json")
    assert listed.code == 0, listed.stderr
    names = [row["name"] for row in json.loads(listed.stdout)]
    assert ROLE in names and "bomb" not in names
    assert f"warning: skipped {WHERE} its aliases expand" in listed.stderr


def test_the_good_roles_run_ends_beside_a_role_file_holding_an_alias_bomb(
    root: Root, bomb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real `sdd role run` process, bounded by `run_cli`'s 60 seconds: before the fix it
    died with MemoryError after 16 s, whichever role it ran."""
    script(tmp_path, monkeypatch, [{"say": "Done."}])
    started = time.monotonic()
    done = run_cli("role", "run", ROLE, "--task", "Say done", "--json", cwd=root.path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["status"] == "done"
    assert time.monotonic() - started < 15


def test_a_hook_fires_the_good_roles_routine_beside_a_role_file_holding_an_alias_bomb(
    root: Root, bomb: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    product(root, role=None)  # committed, bomb and all, as a merge would bring it
    core.install(root)
    routine(root, "on-merge", "pr-merged")
    write_index(root)
    monkeypatch.setenv("SDD_PROVIDER", hook_script(tmp_path, [{"say": "Read the merge."}]))

    merge_feature(root)

    [run] = wait_until(lambda: runs_of(root, "on-merge"), what="the routine's run")
    wait_until(lambda: ended(run), what="the routine's run ending")
    assert json.loads(Path(run["_path"]).read_text().splitlines()[-1])["status"] == "done"
    worker_idle(root)


def test_the_pages_roles_view_renders_beside_a_role_file_holding_an_alias_bomb(
    root: Root, bomb: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root.path)
    shown = TestClient(build_app(root)).get("/roles")
    assert shown.status_code == 200
    assert f'href="/roles/{ROLE}"' in shown.text
    assert 'href="/roles/bomb"' not in shown.text
    assert WHERE in shown.text
