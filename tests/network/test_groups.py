"""`sdd group create/say/show` (CONTRACT §9): the roles of one change or one connection spec; a
message to the group reaches each member's own conversation; `say` is a person command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sdd_git.records import scopes
from sdd_git.root import Root
from sdd_git.runner import conversation
from tests.conftest import SddRunner, run_cli
from tests.network.test_route import set_scope
from tests.runner.scripted import accepted_change, add_role, script


def group_messages(root: Root, role: str) -> list[dict[str, object]]:
    return [m for m in conversation.messages(root, role) if m.get("group")]


def test_a_group_of_a_change_holds_its_route_owner_and_the_roles_that_ran_on_it(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = accepted_change(root)
    other = accepted_change(root)
    add_role(root, "checker", produces="review")
    add_role(root, "elsewhere", produces="review")
    script(tmp_path, monkeypatch, [{"say": "Looked."}], name="one")
    assert sdd("role", "run", "checker", "--change", change, "--task", "Look").code == 0
    script(tmp_path, monkeypatch, [{"say": "Looked."}], name="two")
    assert sdd("role", "run", "elsewhere", "--change", other, "--task", "Look").code == 0

    made = sdd("group", "create", "hotel", "--change", change)
    assert made.code == 0, made.stderr
    assert made.stdout.strip() == "hotel"
    assert "builder, checker" in made.stderr  # the route's owner (no scopes: the builder)
    assert (root.local / "groups" / "hotel.json").is_file()

    said = sdd("group", "say", "hotel", "Please keep the search under a second.")
    assert said.code == 0, said.stderr
    assert said.stdout.strip() == "G1"
    for member in ("builder", "checker"):
        (message,) = group_messages(root, member)
        assert message["from"] == "person" and message["group"] == "hotel"
        assert message["text"] == "Please keep the search under a second."
    assert group_messages(root, "elsewhere") == []

    shown = json.loads(sdd("group", "show", "hotel", "--json").stdout)
    assert shown["change"] == change and shown["connection"] is None
    assert shown["members"] == ["builder", "checker"]
    (message,) = shown["messages"]
    assert message["id"] == "G1" and message["from"] == "person"
    assert [m["role"] for m in message["to"]] == ["builder", "checker"]
    plain = sdd("group", "show", "hotel")
    assert plain.code == 0
    assert f"group hotel of change {change}" in plain.stdout
    assert "members: builder, checker" in plain.stdout
    assert "G1" in plain.stdout and "person: Please keep the search" in plain.stdout


def test_a_role_that_runs_on_the_change_later_joins_its_group(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = accepted_change(root)
    assert sdd("group", "create", "hotel", "--change", change).code == 0
    add_role(root, "late", produces="review")
    script(tmp_path, monkeypatch, [{"say": "Looked."}])
    assert sdd("role", "run", "late", "--change", change, "--task", "Look").code == 0
    assert sdd("group", "say", "hotel", "Welcome").code == 0
    assert [m["text"] for m in group_messages(root, "late")] == ["Welcome"]


def test_a_group_of_a_connection_spec_holds_the_owners_of_its_two_sides(
    sdd: SddRunner, root: Root
) -> None:
    add_role(root, "expenses-dev", extra="scope: service:expenses\n")
    add_role(root, "billing-dev", extra="scope: service:billing\n")
    scopes.add_module(root, "money")
    scopes.add_service(root, "expenses", "money", owner="expenses-dev")
    scopes.add_service(root, "billing", "money", owner="billing-dev")
    change = accepted_change(root)
    set_scope(
        root,
        change,
        "kind: connection\nsides:\n  - {scope: service:expenses, owner: expenses-dev}\n"
        "  - {scope: service:billing, owner: billing-dev}\n",
    )
    made = sdd("group", "create", "reimbursed", "--connection", "SPEC-0001")
    assert made.code == 0, made.stderr
    assert sdd("group", "say", "reimbursed", "Agree on the invoice field first.").code == 0
    for owner in ("expenses-dev", "billing-dev"):
        assert [m["text"] for m in group_messages(root, owner)] == [
            "Agree on the invoice field first."
        ]
    shown = json.loads(sdd("group", "show", "reimbursed", "--json").stdout)
    assert shown["connection"] == "SPEC-0001" and shown["change"] is None
    assert shown["members"] == ["expenses-dev", "billing-dev"]


def test_a_spec_that_is_not_a_connection_and_bad_groups_are_refused(
    sdd: SddRunner, root: Root
) -> None:
    change = accepted_change(root)
    refused = sdd("group", "create", "g", "--connection", "SPEC-0001")
    assert refused.code == 1 and "SPEC-0001 is not a connection spec" in refused.stderr
    both = sdd("group", "create", "g", "--change", change, "--connection", "SPEC-0001")
    assert both.code == 2 and "one change or of one connection spec" in both.stderr
    assert sdd("group", "create", "g").code == 2
    assert sdd("group", "create", "Bad Name", "--change", change).code == 2
    missing = sdd("group", "create", "g", "--change", "CH-0042")
    assert missing.code == 1 and "no change CH-0042" in missing.stderr
    assert not (root.local / "groups").exists()
    assert sdd("group", "create", "g", "--change", change).code == 0
    again = sdd("group", "create", "g", "--change", change)
    assert again.code == 1 and "group g already exists" in again.stderr
    unknown = sdd("group", "say", "nope", "hello")
    assert unknown.code == 1 and "no group nope" in unknown.stderr
    assert sdd("group", "say", "g", "   ").code == 2


def test_group_say_is_refused_inside_a_run(sdd: SddRunner, root: Root) -> None:
    change = accepted_change(root)
    assert sdd("group", "create", "hotel", "--change", change).code == 0
    inside = run_cli("group", "say", "hotel", "Forged", cwd=root.path, env={"SDD_RUN_ID": "run-x"})
    assert inside.returncode == 1
    assert "person commands cannot run inside a role run" in inside.stderr
    created = run_cli(
        "group", "create", "other", "--change", change, cwd=root.path, env={"SDD_RUN_ID": "run-x"}
    )
    assert created.returncode == 1
    assert group_messages(root, "builder") == []
    shown = json.loads(sdd("group", "show", "hotel", "--json").stdout)
    assert shown["messages"] == []
    assert not (root.local / "groups" / "other.json").exists()
