from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from sdd_git.records import acceptance, changes
from sdd_git.records.spec import read_spec
from sdd_git.root import Root
from sdd_git.tools.base import ToolContext
from tests.tools import fails, make_context, run

NEVER = "file tools never follow symlinks"

WORDS = "I can never find last month's hotel charge."


@pytest.fixture
def ctx(root: Root) -> ToolContext:
    changes.create(root, WORDS)
    return make_context(root, role="spec-steward", change="CH-0001")


def test_draft_reading_writes_s1_with_checks_and_no_decision(ctx: ToolContext, root: Root) -> None:
    decisions_before = root.decisions.read_bytes()
    outcome = run(
        ctx,
        "draft_reading",
        change="CH-0001",
        text="Search expenses by month and merchant.",
        checks=["Searching hotel for last month lists the charge.", "C2: An empty month says so."],
    )
    assert outcome.data == {"section": "SPEC-0001#S1", "checks": ["C1", "C2"]}
    assert "only the person accepts it" in outcome.text
    section = read_spec(root.spec_file("SPEC-0001")).section("S1")
    assert section.body == (
        "Search expenses by month and merchant.\n\n"
        "- C1: Searching hotel for last month lists the charge.\n"
        "- C2: An empty month says so."
    )
    assert [c.id for c in section.checks] == ["C1", "C2"]
    assert root.decisions.read_bytes() == decisions_before
    assert not root.record_lock.exists()
    # A second draft replaces the first; the front matter stays.
    run(ctx, "draft_reading", change="CH-0001", text="Find charges by month.", checks=[])
    spec = read_spec(root.spec_file("SPEC-0001"))
    assert spec.section("S1").body == "Find charges by month."
    assert spec.meta["words"] == WORDS


def test_draft_reading_refuses_an_accepted_reading(ctx: ToolContext, root: Root) -> None:
    run(ctx, "draft_reading", change="CH-0001", text="Search by month.", checks=["It lists."])
    acceptance.accept_reading(root, "CH-0001")
    spec_before = root.spec_file("SPEC-0001").read_bytes()
    decisions_before = root.decisions.read_bytes()
    message = fails(ctx, "draft_reading", change="CH-0001", text="Other.", checks=["x"])
    assert message == ("the reading of CH-0001 is accepted; an accepted section is never redrafted")
    assert root.spec_file("SPEC-0001").read_bytes() == spec_before
    assert root.decisions.read_bytes() == decisions_before
    # Once the person changes it, it is unaccepted and may be drafted again.
    acceptance.correct_reading(root, "CH-0001", "Her own correction.")
    run(ctx, "draft_reading", change="CH-0001", text="Redrafted.", checks=["ok"])


def test_draft_reading_checks_its_input(ctx: ToolContext) -> None:
    assert fails(ctx, "draft_reading", change="CH-0009", text="t", checks=[]) == "no change CH-0009"
    assert "section heading" in fails(
        ctx, "draft_reading", change="CH-0001", text="a\n## S2 More\nb", checks=[]
    )
    assert "give the checks in 'checks'" in fails(
        ctx, "draft_reading", change="CH-0001", text="a\n- C1: b", checks=[]
    )
    assert "spans lines" in fails(
        ctx, "draft_reading", change="CH-0001", text="a", checks=["one\ntwo"]
    )
    assert "missing argument checks" in fails(ctx, "draft_reading", change="CH-0001", text="a")
    assert "'checks' must be a list of text" in fails(
        ctx, "draft_reading", change="CH-0001", text="a", checks="C1"
    )


def test_draft_scenarios_keeps_existing_and_adds_the_next_ids(ctx: ToolContext, root: Root) -> None:
    acceptance.add_scenario(root, "CH-0001", "Find it", "search hotel", "it is listed")
    path = root.change_dir("CH-0001") / "scenarios.yaml"
    path.write_text("# the person's comment\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    before = path.read_text(encoding="utf-8")
    decisions_before = root.decisions.read_bytes()
    outcome = run(
        ctx,
        "draft_scenarios",
        change="CH-0001",
        scenarios=[
            {"title": "Empty month", "steps": "search May", "expected": "no charge found"},
            {"title": "Merchant", "steps": "search Hilton", "expected": "the charge"},
        ],
    )
    assert outcome.data == {"scenarios": ["CH-0001/SC-2", "CH-0001/SC-3"]}
    after = path.read_text(encoding="utf-8")
    assert after.startswith(before)
    entries = yaml.safe_load(after)
    assert [e["id"] for e in entries] == ["SC-1", "SC-2", "SC-3"]
    assert entries[1] == {
        "id": "SC-2",
        "title": "Empty month",
        "steps": "search May",
        "expected": "no charge found",
        "required": True,
    }
    assert root.decisions.read_bytes() == decisions_before


def test_draft_scenarios_checks_its_input(ctx: ToolContext) -> None:
    assert "needs text for 'expected'" in fails(
        ctx, "draft_scenarios", change="CH-0001", scenarios=[{"title": "t", "steps": "s"}]
    )
    assert "unknown key accepted" in fails(
        ctx,
        "draft_scenarios",
        change="CH-0001",
        scenarios=[{"title": "t", "steps": "s", "expected": "e", "accepted": True}],
    )
    assert "non-empty list of objects" in fails(
        ctx, "draft_scenarios", change="CH-0001", scenarios=[]
    )


def test_propose_qa_result_never_writes_qa_yaml(ctx: ToolContext, root: Root) -> None:
    acceptance.add_scenario(root, "CH-0001", "Find it", "search hotel", "it is listed")
    outcome = run(
        ctx, "propose_qa_result", scenario="CH-0001/SC-1", result="fail", words="Only Feb."
    )
    assert "the person records the QA result" in outcome.text
    assert not (root.change_dir("CH-0001") / "qa.yaml").exists()
    lines = (root.local / "qa-proposals" / "CH-0001.jsonl").read_text(encoding="utf-8")
    entry = json.loads(lines.splitlines()[0])
    assert entry["role"] == "spec-steward" and entry["run"] == "run-test"
    assert entry["scenario"] == "CH-0001/SC-1"
    assert entry["result"] == "fail" and entry["words"] == "Only Feb."
    assert entry["at"].endswith("Z")
    run(ctx, "propose_qa_result", scenario="CH-0001/SC-1", result="pass", words="Now ok.")
    assert len((root.local / "qa-proposals" / "CH-0001.jsonl").read_text().splitlines()) == 2
    assert fails(ctx, "propose_qa_result", scenario="CH-0001/SC-9", result="pass", words="w") == (
        "no scenario SC-9 in CH-0001"
    )
    assert "pass or fail" in fails(
        ctx, "propose_qa_result", scenario="CH-0001/SC-1", result="maybe", words="w"
    )
    assert not (root.change_dir("CH-0001") / "qa.yaml").exists()


def test_remember_appends(ctx: ToolContext) -> None:
    run(ctx, "remember", note="The tests live in tests/.")
    outcome = run(ctx, "remember", note="Use small commits.")
    assert "note 2" in outcome.text
    path = ctx.local / "memory.yaml"
    assert path.parent.name == "spec-steward"
    notes = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [n["note"] for n in notes] == ["The tests live in tests/.", "Use small commits."]
    assert all(n["run"] == "run-test" and n["at"] for n in notes)


# --- the draft tools' own writes never follow a symlink --------------------------------------


def test_draft_writes_never_follow_a_symlink(ctx: ToolContext, root: Root, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    # The role's own folder swapped for a symlink out: remember refuses, nothing lands there.
    ctx.local.parent.mkdir(parents=True, exist_ok=True)
    ctx.local.symlink_to(outside, target_is_directory=True)
    assert "file tools never follow" in fails(ctx, "remember", note="n")
    assert list(outside.iterdir()) == []
    # A proposals file that is a symlink to the person's decisions: never appended through.
    acceptance.add_scenario(root, "CH-0001", "Find it", "search hotel", "it is listed")
    (root.local / "qa-proposals").mkdir(parents=True, exist_ok=True)
    (root.local / "qa-proposals" / "CH-0001.jsonl").symlink_to(root.decisions)
    decisions_before = root.decisions.read_bytes()
    message = fails(ctx, "propose_qa_result", scenario="CH-0001/SC-1", result="pass", words="w")
    assert message == ".sdd/local/qa-proposals/CH-0001.jsonl is a symlink; " + NEVER
    # A scenarios file that is a symlink out is neither read nor written through.
    scenarios = root.change_dir("CH-0001") / "scenarios.yaml"
    (outside / "scenarios.yaml").write_bytes(scenarios.read_bytes())
    scenarios.unlink()
    scenarios.symlink_to(outside / "scenarios.yaml")
    kept = (outside / "scenarios.yaml").read_bytes()
    new = [{"title": "t", "steps": "s", "expected": "e"}]
    message = fails(ctx, "draft_scenarios", change="CH-0001", scenarios=new)
    # The record's own reader refuses it first: no link in the record is read (CONTRACT §6).
    assert message.startswith("changes/CH-0001/scenarios.yaml is a link; sdd reads only")
    assert (outside / "scenarios.yaml").read_bytes() == kept
    assert sorted(p.name for p in outside.iterdir()) == ["scenarios.yaml"]
    assert root.decisions.read_bytes() == decisions_before


def test_draft_scenarios_takes_steps_as_a_list_of_texts_as_models_send_them(
    ctx: ToolContext, root: Root
) -> None:
    from sdd_git.records.scenarios import load_scenarios

    scenario = {"title": "Find it", "steps": ["open search", "type hotel"], "expected": "listed"}
    outcome = run(ctx, "draft_scenarios", change="CH-0001", scenarios=[scenario])
    assert outcome.data == {"scenarios": ["CH-0001/SC-1"]}
    (drafted,) = load_scenarios(root.change_dir("CH-0001"))
    assert drafted.steps == "open search\ntype hotel"
    bad = {"title": "t", "steps": ["ok", ""], "expected": "e"}
    assert "empty step" in fails(ctx, "draft_scenarios", change="CH-0001", scenarios=[bad])


# --- draft_plan -------------------------------------------------------------------------------


def as_lead(ctx: ToolContext) -> ToolContext:
    return dataclasses.replace(ctx, role="module-lead")  # a shipped lead: produces plan


def test_only_a_lead_drafts_a_plan(ctx: ToolContext, root: Root) -> None:
    message = fails(ctx, "draft_plan", change="CH-0001", nodes=PLAN_NODES)
    assert "spec-steward produces reading; only a lead drafts a plan" in message
    assert not (root.change_dir("CH-0001") / "plan.yaml").exists()


PLAN_NODES = [
    {
        "id": "N1",
        "scope": "expenses",
        "owner": "expenses-dev",
        "task": "Mark an expense reimbursed",
        "needs": [],
        "returns": "commit",
        "boundary": {"ask_first": [{"tool": "git_push"}]},
    },
    {
        "id": "N2",
        "scope": "billing",
        "owner": "billing-dev",
        "task": "Show it on the invoice",
        "needs": ["N1"],
        "returns": "commit",
        "children": [
            {"id": "N3", "scope": "billing", "owner": "billing-dev", "task": "Test it",
             "returns": "scenario"},
        ],
    },
]  # fmt: skip


def test_draft_plan_writes_a_draft_that_waits_for_her_acceptance(
    ctx: ToolContext, root: Root
) -> None:
    from sdd_git.records.plan import load_plan, plan_accepted, plan_hash

    decisions_before = root.decisions.read_bytes()
    outcome = run(as_lead(ctx), "draft_plan", change="CH-0001", nodes=PLAN_NODES)
    path = root.change_dir("CH-0001") / "plan.yaml"
    assert outcome.text == (
        "Drafted the plan of CH-0001 (changes/CH-0001/plan.yaml) with nodes N1, N2, N3. "
        "It waits for the person's acceptance: no node runs until she accepts it. "
        "Drafting it again replaces this draft."
    )
    assert outcome.data == {
        "plan": "changes/CH-0001/plan.yaml",
        "nodes": ["N1", "N2", "N3"],
        "hash": plan_hash(path),
    }
    plan = load_plan(root, "CH-0001")
    assert plan is not None and plan.ids == ("N1", "N2", "N3")
    assert yaml.safe_load(path.read_text(encoding="utf-8"))["nodes"][1]["needs"] == ["N1"]
    assert plan_accepted(root, "CH-0001") is None  # a draft, never a decision
    assert root.decisions.read_bytes() == decisions_before
    assert not root.record_lock.exists()


def test_draft_plan_again_replaces_the_draft_and_unaccepts_it(ctx: ToolContext, root: Root) -> None:
    from sdd_git.records.plan import load_plan, plan_accepted

    run(as_lead(ctx), "draft_plan", change="CH-0001", nodes=PLAN_NODES)
    acceptance.accept_plan(root, "CH-0001")
    assert plan_accepted(root, "CH-0001") is not None
    one = [{**PLAN_NODES[0], "task": "Mark it reimbursed, with the date"}]
    run(as_lead(ctx), "draft_plan", change="CH-0001", nodes=one)
    plan = load_plan(root, "CH-0001")
    assert plan is not None and plan.ids == ("N1",)
    assert plan.nodes[0].task == "Mark it reimbursed, with the date"
    assert plan_accepted(root, "CH-0001") is None  # she accepted other bytes


def test_draft_plan_refuses_a_bad_tree_with_a_clear_message_and_writes_nothing(
    ctx: ToolContext, root: Root
) -> None:
    run(as_lead(ctx), "draft_plan", change="CH-0001", nodes=PLAN_NODES)
    path = root.change_dir("CH-0001") / "plan.yaml"
    kept = path.read_bytes()
    leaf = {"scope": "billing", "task": "t", "returns": "file"}
    too_deep = [
        {**leaf, "id": "N1", "children": [
            {**leaf, "id": "N2", "children": [
                {**leaf, "id": "N3", "children": [{**leaf, "id": "N4"}]},
            ]},
        ]},
    ]  # fmt: skip
    assert fails(as_lead(ctx), "draft_plan", change="CH-0001", nodes=too_deep) == (
        "draft_plan: node N3, key 'children': N3 is already 2 levels below a root node; a plan "
        "goes at most 2 levels below its root nodes; give N3 no children: make them its "
        "siblings, or split the work into fewer levels"
    )
    looped = [
        {**leaf, "id": "N1", "needs": ["N2"]},
        {**leaf, "id": "N2", "needs": ["N1"]},
    ]
    assert fails(as_lead(ctx), "draft_plan", change="CH-0001", nodes=looped) == (
        "draft_plan: node N1, key 'needs': these nodes wait for each other, so none could "
        "finish: N1 needs N2; N2 needs N1; remove one of these needs to break the cycle"
    )
    assert "draft_plan: node N1, key 'needs': N1 needs its own descendant N2" in fails(
        as_lead(ctx),
        "draft_plan",
        change="CH-0001",
        nodes=[{**leaf, "id": "N1", "needs": ["N2"], "children": [{**leaf, "id": "N2"}]}],
    )
    assert fails(
        as_lead(ctx), "draft_plan", change="CH-0001", nodes=[{**leaf, "id": "N1"}] * 2
    ) == (
        "draft_plan: node N1, key 'id': N1 is the id of another node (nodes[0]); ids are "
        "unique across the whole plan; give this node an id that no other node has, "
        "children included"
    )
    assert "key 'needs': D-0042 is not a decision in memory/decisions.yaml" in fails(
        as_lead(ctx),
        "draft_plan",
        change="CH-0001",
        nodes=[{**leaf, "id": "N1", "needs": ["D-0042"]}],
    )
    assert "key 'returns': must be one of commit, file, scenario, draft, summary" in fails(
        as_lead(ctx),
        "draft_plan",
        change="CH-0001",
        nodes=[{**leaf, "id": "N1", "returns": "code"}],
    )
    assert "non-empty list of objects" in fails(
        as_lead(ctx), "draft_plan", change="CH-0001", nodes=[]
    )
    assert path.read_bytes() == kept


def test_draft_plan_refuses_an_unknown_change(ctx: ToolContext, root: Root) -> None:
    assert (
        fails(as_lead(ctx), "draft_plan", change="CH-0009", nodes=PLAN_NODES) == "no change CH-0009"
    )
    assert "is not a change id" in fails(
        as_lead(ctx), "draft_plan", change="../memory", nodes=PLAN_NODES
    )
    assert not (root.change_dir("CH-0009") / "plan.yaml").exists()
    assert not (root.change_dir("CH-0001") / "plan.yaml").exists()


def test_draft_plan_masks_secrets_and_never_writes_through_a_symlink(
    ctx: ToolContext, root: Root, tmp_path: Path
) -> None:
    from tests.tools import SECRET

    nodes = [{**PLAN_NODES[0], "task": f"Use the key {SECRET}"}]
    run(as_lead(ctx), "draft_plan", change="CH-0001", nodes=nodes)
    path = root.change_dir("CH-0001") / "plan.yaml"
    assert SECRET not in path.read_text(encoding="utf-8")
    assert "Use the key [secret]" in path.read_text(encoding="utf-8")
    outside = tmp_path / "outside.yaml"
    outside.write_text("kept\n", encoding="utf-8")
    path.unlink()
    path.symlink_to(outside)
    run(as_lead(ctx), "draft_plan", change="CH-0001", nodes=PLAN_NODES)
    assert outside.read_text(encoding="utf-8") == "kept\n"
    assert not path.is_symlink()  # the link was replaced by the plan, never followed


def test_draft_plan_schema_spells_out_at_most_two_levels_below_the_root_nodes() -> None:
    from sdd_git.tools.toolbox import TOOLS

    node = TOOLS["draft_plan"].schema.parameters["properties"]["nodes"]["items"]
    child = node["properties"]["children"]["items"]
    grandchild = child["properties"]["children"]["items"]
    assert "children" not in grandchild["properties"]
    assert node["required"] == ["id", "scope", "owner", "task", "returns"]
    assert node["properties"]["returns"]["enum"] == [
        "commit", "file", "scenario", "draft", "summary"
    ]  # fmt: skip
