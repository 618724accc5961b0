"""Pin and hide work on every role `role list` shows (issue 22, 3): a shipped template, a user
pack and a built-in too, kept in her view of the list (`.sdd/local/role-view.json`), never in
the template's or the pack's own file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.roles.templates import shipped_dir
from sdd_git.root import Root
from tests.conftest import SddRunner


def _listed(sdd: SddRunner, *flags: str) -> list[dict[str, object]]:
    result = sdd("role", "list", "--json", *flags)
    assert result.code == 0, result.stderr
    rows = json.loads(result.stdout)
    assert isinstance(rows, list)
    return rows


def _row(rows: list[dict[str, object]], name: str) -> dict[str, object] | None:
    return next((r for r in rows if r["name"] == name), None)


def test_hide_and_unhide_a_shipped_template_role(sdd: SddRunner, root: Root) -> None:
    template = shipped_dir() / "builder" / "ROLE.md"
    before = template.read_bytes()
    row = _row(_listed(sdd), "builder")
    assert row is not None and row["source"] == "template"

    hidden = sdd("role", "hide", "builder")
    assert hidden.code == 0, hidden.stderr
    assert "builder: hidden on" in hidden.stderr
    assert _row(_listed(sdd), "builder") is None
    shown = _row(_listed(sdd, "--all"), "builder")
    assert shown is not None and shown["hidden"] is True
    assert template.read_bytes() == before  # sdd's own file is never changed
    assert not (root.sdd / "roles" / "builder").exists()  # nor copied into the repo

    assert sdd("role", "unhide", "builder").code == 0
    again = _row(_listed(sdd), "builder")
    assert again is not None and again["hidden"] is False


def test_pin_a_template_and_a_built_in_lists_them_first(sdd: SddRunner, root: Root) -> None:
    assert sdd("role", "pin", "qa-author").code == 0
    assert sdd("role", "pin", "executor").code == 0
    rows = _listed(sdd)
    assert [r["name"] for r in rows[:2]] == ["executor", "qa-author"]  # pinned, then by label
    assert all(r["pinned"] for r in rows[:2]) and not any(r["pinned"] for r in rows[2:])
    table = sdd("role", "list").stdout
    assert "* qa-author" in table and "* executor" in table
    shown = sdd("role", "show", "qa-author")
    assert "flags: pinned" in shown.stdout
    assert sdd("role", "unpin", "qa-author").code == 0
    unpinned = _row(_listed(sdd), "qa-author")
    assert unpinned is not None and unpinned["pinned"] is False


def test_a_user_pack_is_pinned_in_this_product_only(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "sdd-home"
    pack = home / "roles" / "reviewer" / "ROLE.md"
    pack.parent.mkdir(parents=True)
    pack.write_text(
        "---\nrole: reviewer\njob: Review diffs\nlevel: 0\ntoolPolicy.delegation: deny\n"
        "produces: review\n---\nBe kind.\n"
    )
    monkeypatch.setenv("SDD_HOME", str(home))
    before = pack.read_bytes()
    assert sdd("role", "pin", "reviewer").code == 0
    row = _row(_listed(sdd), "reviewer")
    assert row is not None and row["pinned"] is True and row["source"] == "user"
    assert pack.read_bytes() == before
    other = root.path.parent / "other-product"
    from sdd_git.records.person import init

    init(other, "Other")
    elsewhere = sdd("role", "list", "--json", cwd=other)
    row = _row(json.loads(elsewhere.stdout), "reviewer")
    assert row is not None and row["pinned"] is False  # her other product is untouched


def test_a_role_nowhere_is_still_said_plainly(sdd: SddRunner) -> None:
    result = sdd("role", "hide", "nobody")
    assert result.code == 1 and "no role 'nobody'" in result.stderr
