"""Routing by what is accepted, before any model call (CONTRACT §9), and `sdd work` running the
route: one accepted service runs its owner and creates no lead; a cross-scope spec with no
connection runs the lead, whose plan waits for her; a reading waits for her."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sdd_git.errors import RecordError
from sdd_git.network.route import decide
from sdd_git.network.work import work
from sdd_git.records import changes, scopes
from sdd_git.root import Root
from tests.conftest import SddRunner
from tests.runner.scripted import accepted_change, add_role, events, script, transcript
from tests.trusthelp import confirm


def set_scope(root: Root, change_id: str, front: str) -> None:
    """Put `front` (YAML lines) into the front matter of the change's spec."""
    path = root.spec_file(changes.load(root, change_id).spec)
    text = path.read_text(encoding="utf-8")
    for key in re.findall(r"(?m)^(\w+):", front):  # the spec has `kind:` and `scope:` already
        text = re.sub(rf"(?m)^{key}:.*\n", "", text, count=1)
    path.write_text(re.sub(r"\A---\n", f"---\n{front}", text, count=1), encoding="utf-8")


@pytest.fixture
def money(root: Root) -> Root:
    """Module money with one service, expenses, owned by expenses-dev."""
    add_role(root, "expenses-dev", extra="scope: service:expenses\n")
    add_role(root, "billing-dev", extra="scope: service:billing\n")
    add_role(root, "accounts-dev", extra="scope: service:accounts\n")
    scopes.add_module(root, "money")
    scopes.add_service(root, "expenses", "money", owner="expenses-dev")
    return root


def test_no_accepted_section_routes_to_the_reading(root: Root) -> None:
    pack = changes.create(root, "I can never find last month's hotel charge.")
    route = decide(root, pack.id)
    assert (route.kind, route.roles) == ("reading", ("spec-steward",))


def test_a_product_with_no_scopes_is_one_scope_owned_by_the_builder(root: Root) -> None:
    route = decide(root, accepted_change(root))
    assert (route.kind, route.roles) == ("service", ("builder",))


def test_one_accepted_service_runs_its_owner_and_creates_no_lead(
    money: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    change = accepted_change(money)
    set_scope(money, change, "scope: service:expenses\n")
    route = decide(money, change)
    assert (route.kind, route.roles, route.scope) == (
        "service",
        ("expenses-dev",),
        "service:expenses",
    )
    roles_before = sorted(p.name for p in (money.sdd / "roles").iterdir())
    script(tmp_path, monkeypatch, [{"say": "Done."}])
    outcome = work(money, change)
    assert outcome.status == "done"
    log = events(money, outcome.run_id or "")
    assert log[0]["roles"] == ["expenses-dev"]
    (routed,) = [e for e in log if e["event"] == "route"]
    assert routed["route"] == "service" and "expenses" in routed["why"]
    assert sorted(p.name for p in (money.sdd / "roles").iterdir()) == roles_before  # no lead
    assert len(transcript(tmp_path)) == 1


def test_a_module_with_one_service_routes_to_that_service(money: Root) -> None:
    change = accepted_change(money)
    set_scope(money, change, "scope: module:money\n")
    assert decide(money, change).roles == ("expenses-dev",)


def test_crossing_services_of_one_module_routes_to_the_module_lead(money: Root) -> None:
    scopes.add_service(money, "billing", "money", owner="billing-dev")
    change = accepted_change(money)
    set_scope(money, change, "scope: module:money\n")
    route = decide(money, change)
    assert (route.kind, route.roles, route.scope) == ("plan", ("module-lead",), "module:money")
    add_role(money, "money-lead", produces="plan", extra="scope: module:money\n")
    assert decide(money, change).roles == ("money-lead",)  # the role bound to the module


def test_crossing_modules_routes_to_the_product_lead(money: Root) -> None:
    scopes.add_module(money, "people")
    scopes.add_service(money, "accounts", "people", owner="accounts-dev")
    change = accepted_change(money)  # no scope: the product
    route = decide(money, change)
    assert (route.kind, route.roles, route.scope) == ("plan", ("product-lead",), "product")
    assert "2 modules" in route.why


def test_an_accepted_connection_routes_to_its_two_owners(money: Root) -> None:
    scopes.add_service(money, "billing", "money", owner="billing-dev")
    change = accepted_change(money)
    set_scope(
        money,
        change,
        "kind: connection\nsides:\n  - {scope: service:expenses, owner: expenses-dev}\n"
        "  - {scope: service:billing, owner: billing-dev}\n",
    )
    route = decide(money, change)
    assert (route.kind, route.roles) == ("connection", ("expenses-dev", "billing-dev"))


def test_a_connection_without_two_sides_is_a_clear_error(money: Root) -> None:
    change = accepted_change(money)
    set_scope(money, change, "kind: connection\nsides: []\n")
    with pytest.raises(RecordError, match="exactly two"):
        decide(money, change)


def test_the_lead_drafts_a_plan_and_the_run_ends_on_a_plan_stop(
    money: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scopes.add_service(money, "billing", "money", owner="billing-dev")
    add_role(money, "money-lead", produces="plan", extra="scope: module:money\n")
    change = accepted_change(money)
    set_scope(money, change, "scope: module:money\n")
    node = {
        "id": "N1",
        "scope": "expenses",
        "owner": "expenses-dev",
        "task": "Mark an expense reimbursed",
        "needs": [],
        "returns": "commit",
    }
    draft = {"tool": "draft_plan", "args": {"change": change, "nodes": [node]}}
    script(tmp_path, monkeypatch, [{"tool_calls": [draft]}, {"say": "Here is the plan."}])
    outcome = work(money, change)
    assert outcome.status == "stopped" and outcome.exit_code == 3
    assert outcome.stop is not None and outcome.stop.kind == "plan"
    assert "sdd accept plan" in outcome.stop.action
    assert (money.path / "changes" / change / "plan.yaml").is_file()
    again = work(money, change)  # the plan waits for her: no model call, the same stop
    assert again.stop is not None and again.stop.id == outcome.stop.id
    assert len(transcript(tmp_path)) == 2


def test_sdd_work_prints_the_plan_stop_and_allow_refuses_it(
    sdd: SddRunner, money: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scopes.add_service(money, "billing", "money", owner="billing-dev")
    change = accepted_change(money)
    set_scope(money, change, "scope: module:money\n")
    # the shipped module lead spawns only the roles it lists: the builder among them
    node = {"id": "N1", "scope": "billing", "owner": "builder", "task": "t", "returns": "summary"}
    draft = {"tool": "draft_plan", "args": {"change": change, "nodes": [node]}}
    summary = {"tool": "return_artifact", "args": {"kind": "summary", "ref": "-", "summary": "s"}}
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "module-lead", "tool_calls": [draft]},
            {"role": "module-lead", "say": "Plan drafted."},
            {"role": "builder", "tool_calls": [summary]},
            {"role": "builder", "say": "Done."},
        ],
    )
    result = sdd("work", change, "--json")
    assert result.code == 3, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stop"]["kind"] == "plan"
    assert outcome["stop"]["choices"] == ["accept", "correct", "not yet"]
    refused = sdd("allow", outcome["stop"]["id"])
    assert refused.code == 2 and "never allowed or denied" in refused.stderr
    assert sdd("accept", "plan", change).code == 0
    assert sdd("stops").stdout.count(outcome["stop"]["id"]) == 0  # answered by her acceptance
    after = json.loads(sdd("work", change, "--json").stdout)  # the accepted plan's network runs
    assert after["status"] == "done", after
    assert after["nodes"][0]["state"] == "done"
    shown = sdd("work", change, "--status")
    assert shown.code == 0 and "N1 billing builder: done summary -" in shown.stdout


def test_sdd_work_without_an_accepted_section_runs_the_spec_steward(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = changes.create(root, "I can never find last month's hotel charge.")
    reading = {
        "tool": "draft_reading",
        "args": {"change": pack.id, "text": "Search by month.", "checks": ["Search hotel"]},
    }
    script(tmp_path, monkeypatch, [{"tool_calls": [reading]}, {"say": "Drafted."}])
    result = sdd("work", pack.id, "--json")
    assert result.code == 3, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stop"]["kind"] == "reading"
    log = events(root, outcome["run"])
    assert log[0]["roles"] == ["spec-steward"]
    assert [e["route"] for e in log if e["event"] == "route"] == ["reading"]
    again = json.loads(sdd("work", pack.id, "--json").stdout)  # waits: no second model call
    assert again["stop"]["id"] == outcome["stop"]["id"] and len(transcript(tmp_path)) == 2


def test_an_accepted_connection_hands_off_with_no_lead_and_other_decisions_unchanged(
    money: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scopes.add_service(money, "billing", "money", owner="billing-dev")
    change = accepted_change(money)
    set_scope(
        money,
        change,
        "kind: connection\nsides:\n  - {scope: service:expenses, owner: expenses-dev}\n"
        "  - {scope: service:billing, owner: billing-dev}\n",
    )
    config = money.config
    config.write_text(config.read_text().replace("messaging: on", "messaging: off"))
    confirm(money, ".sdd/config.yaml")  # she edited her settings and confirmed them
    decisions_before = money.decisions.read_bytes()
    handoff = {
        "tool": "handoff",
        "args": {"to": "billing-dev", "task": "Show it on the invoice", "cites": ["SPEC-0001#S1"]},
    }
    script(
        tmp_path,
        monkeypatch,
        [
            {"role": "expenses-dev", "tool_calls": [handoff]},
            {"role": "expenses-dev", "say": "Handed off."},
        ],
    )
    outcome = work(money, change)
    assert outcome.stop is not None and outcome.stop.tool == "handoff"  # a stop, like any action
    from sdd_git.runner.run import answer

    done = answer(money, outcome.stop.id, "allow_once")
    assert done.status == "done", done.message
    log = events(money, outcome.run_id or "")
    assert log[0]["roles"] == ["expenses-dev"]  # the first side's owner; no lead ran
    assert [e["route"] for e in log if e["event"] == "route"] == ["connection"]
    (sent,) = [e for e in log if e["event"] == "handoff"]
    assert sent["to"] == "billing-dev" and sent["cites"] == ["SPEC-0001#S1"]
    assert sent["sent"] is False  # messaging is off here: nothing sent, and she is told
    assert money.decisions.read_bytes() == decisions_before
    runs = sorted((money.sdd / "role-runs").glob("*.jsonl"))
    assert len(runs) == 1  # no lead, and no receiver woken with messaging off


def test_sdd_work_that_drafted_no_reading_exits_1_saying_so(
    sdd: SddRunner, root: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = changes.create(root, "I can never find last month's hotel charge.")
    script(tmp_path, monkeypatch, [{"say": "I would rather not."}])  # no draft_reading
    result = sdd("work", pack.id)
    assert result.code == 1, result.stdout + result.stderr
    assert "error: no reading was drafted" in result.stderr
    as_json = sdd("work", pack.id, "--json")  # the same in JSON: one document, exit 1
    assert as_json.code == 1
    shown = json.loads(as_json.stdout)
    assert shown["status"] == "no-draft" and "no reading was drafted" in shown["message"]


def test_sdd_work_whose_lead_drafted_no_plan_exits_1_and_a_finished_service_exits_0(
    sdd: SddRunner, money: Root, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scopes.add_service(money, "billing", "money", owner="billing-dev")
    add_role(money, "money-lead", produces="plan", extra="scope: module:money\n")
    change = accepted_change(money)
    set_scope(money, change, "scope: module:money\n")
    script(tmp_path, monkeypatch, [{"say": "Plans are overrated."}])
    result = sdd("work", change)
    assert result.code == 1 and "error: no plan was drafted" in result.stderr
    served = accepted_change(money)
    set_scope(money, served, "scope: service:expenses\n")
    script(tmp_path, monkeypatch, [{"say": "Done."}], name="service")
    assert sdd("work", served).code == 0  # the service's owner did its work: done
