from __future__ import annotations

import hashlib
import textwrap

import pytest
import yaml

from sdd_git import lockfile
from sdd_git.errors import LockError, RecordError, UsageError
from sdd_git.records import acceptance, changes, decisions
from sdd_git.records.plan import (
    Plan,
    PlanNode,
    load_plan,
    parse_plan,
    plan_accepted,
    plan_hash,
    plan_path,
    write_plan,
)
from sdd_git.roles.profile import Boundary, Rule
from sdd_git.root import Root
from tests.conftest import SddRunner

WORDS = "When an expense is reimbursed, the invoice in Billing should show it."
WHERE = "changes/CH-0001/plan.yaml"

GOOD = """\
nodes:
  - id: N1
    scope: expenses
    owner: expenses-dev
    task: "Mark an expense reimbursed"
    needs: []
    returns: commit
    boundary: {ask_first: [{tool: git_push}]}
  - id: N2
    scope: billing
    owner: billing-dev
    task: "Show the reimbursement on the invoice"
    needs: [N1, D-0001]
    returns: commit
    children:
      - id: N3
        scope: billing
        task: "Add the invoice field"
        returns: file
        children:
          - {id: N4, scope: billing, owner: billing-dev, task: "Test it", returns: scenario}
"""


@pytest.fixture
def pack(root: Root, monkeypatch: pytest.MonkeyPatch) -> changes.ChangePack:
    monkeypatch.chdir(root.path)  # files are named as the person would type them
    return changes.create(root, WORDS)


def _write(root: Root, text: str) -> None:
    plan_path(root, "CH-0001").write_text(textwrap.dedent(text), encoding="utf-8")


def _problem(root: Root, text: str) -> RecordError:
    _write(root, text)
    with pytest.raises(RecordError) as caught:
        load_plan(root, "CH-0001")
    return caught.value


# --- a good plan --------------------------------------------------------------------------------


def test_a_plan_reads_as_a_tree_of_frozen_nodes(root: Root, pack: changes.ChangePack) -> None:
    assert load_plan(root, pack.id) is None  # no plan yet
    _write(root, GOOD)
    plan = load_plan(root, pack.id)
    assert plan is not None
    assert plan.ids == ("N1", "N2", "N3", "N4")
    first, second = plan.nodes
    assert first == PlanNode(
        id="N1",
        scope="expenses",
        owner="expenses-dev",
        task="Mark an expense reimbursed",
        needs=(),
        returns="commit",
        boundary={"ask_first": [{"tool": "git_push"}]},
    )
    assert first.rules == Boundary(ask_first=(Rule("git_push"),))
    assert second.needs == ("N1", "D-0001")
    grandchild = plan.node("N3")
    assert grandchild is not None and grandchild.owner is None  # the network picks the default
    assert [(n.id, p.id if p else None, d) for n, p, d in plan.walk()] == [
        ("N1", None, 0),
        ("N2", None, 0),
        ("N3", "N2", 1),
        ("N4", "N3", 2),
    ]
    with pytest.raises(AttributeError):
        first.task = "other"  # type: ignore[misc]
    assert parse_plan(plan.as_dict(), "again") == plan


# --- every rule, with its message -----------------------------------------------------------------

NODE = "{id: N1, scope: expenses, task: t, returns: commit}"


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("", f"{WHERE}:1: key 'nodes': the plan is empty", "nodes: [{id: N1"),
        ("- a\n", f"{WHERE}:1: a plan is a mapping with the key 'nodes', not a list", "nodes:"),
        ("nodes: []\n", f"{WHERE}:1: key 'nodes': must be a non-empty list of nodes", "nodes:"),
        ("nodes: {id: N1}\n", f"{WHERE}:1: key 'nodes': must be a non-empty list", "nodes:"),
        (
            f"nodes: [{NODE}]\nnote: hi\n",
            f"{WHERE}:2: key 'note': a plan has only the key 'nodes'",
            "remove 'note'",
        ),
        ("nodes: [N1]\n", f"{WHERE}:1: the node at nodes[0]: a node is a mapping", "{id: N1"),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, after: N2}\n",
            f"{WHERE}:2: the node at nodes[0], key 'after': is not a key of a node",
            "a node has id, scope, owner, task, needs, returns, boundary, children",
        ),
        (
            "nodes:\n  - {id: node-1, scope: a, task: t, returns: commit}\n",
            f"{WHERE}:2: the node at nodes[0], key 'id': must be N followed by digits "
            "(N1, N2, ...), not 'node-1'",
            "N1, N2, N3",
        ),
        (
            "nodes:\n  - {scope: a, task: t, returns: commit}\n",
            f"{WHERE}:2: the node at nodes[0], key 'id': must be N followed by digits",
            "its own id",
        ),
        (
            "nodes:\n"
            "  - id: N1\n    scope: a\n    task: t\n    returns: commit\n    children:\n"
            "      - {id: N1, scope: a, task: t, returns: commit}\n",
            f"{WHERE}:7: node N1, key 'id': N1 is the id of another node (nodes[0]); "
            "ids are unique across the whole plan",
            "children included",
        ),
        (
            "nodes:\n  - {id: N1, scope: 'service:billing', task: t, returns: commit}\n",
            f"{WHERE}:2: node N1, key 'scope': must be the bare name of a service or module",
            "write scope: billing (plan nodes use the bare name)",
        ),
        (
            "nodes:\n  - {id: N1, task: t, returns: commit}\n",
            f"{WHERE}:2: node N1, key 'scope': must be the bare name of a service or module, "
            "not None",
            "sdd scope show",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, owner: Billing Dev, task: t, returns: commit}\n",
            f"{WHERE}:2: node N1, key 'owner': must be a role name",
            "leave owner out",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: '  ', returns: commit}\n",
            f"{WHERE}:2: node N1, key 'task': must be non-empty text",
            "task: Mark",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, returns: commit}\n",
            f"{WHERE}:2: node N1, key 'task': must be the node's task in words",
            "task:",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: patch}\n",
            f"{WHERE}:2: node N1, key 'returns': must be one of commit, file, scenario, draft, "
            "summary, not 'patch'",
            "returns: commit",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t}\n",
            f"{WHERE}:2: node N1, key 'returns': must be one of",
            "returns: commit",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, needs: N2}\n",
            f"{WHERE}:2: node N1, key 'needs': must be a list of node or decision ids, not text",
            "needs: []",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, needs: [SPEC-0001]}\n",
            f"{WHERE}:2: node N1, key 'needs': 'SPEC-0001' is neither a node id (N1) nor a "
            "decision id (D-0001)",
            "whose results come first",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, needs: [D-0001, D-0001]}\n",
            f"{WHERE}:2: node N1, key 'needs': lists D-0001 twice",
            "list D-0001 once",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, needs: [N7]}\n",
            f"{WHERE}:2: node N1, key 'needs': N7 is not a node of this plan",
            "name nodes of this plan (N1) or decision ids",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, needs: [N1]}\n",
            f"{WHERE}:2: node N1, key 'needs': N1 needs itself, so it could never start",
            "remove N1 from its own needs",
        ),
        (
            "nodes:\n"
            "  - id: N1\n    scope: a\n    task: t\n    returns: commit\n    needs: [N3]\n"
            "    children:\n"
            "      - id: N2\n        scope: a\n        task: t\n        returns: commit\n"
            "        children: [{id: N3, scope: a, task: t, returns: commit}]\n",
            f"{WHERE}:6: node N1, key 'needs': N1 needs its own descendant N3: N3 starts only "
            "after N1 does, and N1 already waits for it to finish",
            "remove N3 from N1's needs; a node waits for its children anyway",
        ),
        (
            "nodes:\n"
            "  - id: N1\n    scope: a\n    task: t\n    returns: commit\n    children:\n"
            "      - {id: N2, scope: a, task: t, returns: commit, needs: [N1]}\n",
            f"{WHERE}:7: node N2, key 'needs': N2 needs N1, which contains it: N1 waits for N2, "
            "so neither could finish",
            "remove N1 from N2's needs, or move N2 out of N1",
        ),
        (
            "nodes:\n"
            "  - {id: N1, scope: a, task: t, returns: commit, needs: [N2]}\n"
            "  - {id: N2, scope: b, task: t, returns: commit, needs: [N1]}\n",
            f"{WHERE}:2: node N1, key 'needs': these nodes wait for each other, so none could "
            "finish: N1 needs N2; N2 needs N1",
            "remove one of these needs to break the cycle",
        ),
        (
            # No node needs another directly in a loop, yet N2 waits for its child N21, which
            # waits for N1, which waits for N2.
            "nodes:\n"
            "  - {id: N1, scope: a, task: t, returns: commit, needs: [N2]}\n"
            "  - id: N2\n    scope: b\n    task: t\n    returns: commit\n    children:\n"
            "      - {id: N21, scope: b, task: t, returns: commit, needs: [N1]}\n",
            f"{WHERE}:2: node N1, key 'needs': these nodes wait for each other, so none could "
            "finish: N1 needs N2; N2 waits for its child N21; N21 needs N1",
            "break the cycle",
        ),
        (
            "nodes:\n"
            "  - id: N1\n    scope: a\n    task: t\n    returns: commit\n    children:\n"
            "      - id: N2\n        scope: a\n        task: t\n        returns: commit\n"
            "        children:\n"
            "          - id: N3\n            scope: a\n            task: t\n"
            "            returns: commit\n"
            "            children: [{id: N4, scope: a, task: t, returns: commit}]\n",
            f"{WHERE}:16: node N3, key 'children': N3 is already 2 levels below a root node; "
            "a plan goes at most 2 levels below its root nodes",
            "give N3 no children",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, children: N2}\n",
            f"{WHERE}:2: node N1, key 'children': must be a list of nodes, not text",
            "children: [{id: N2",
        ),
        (
            "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, boundary: [git_push]}\n",
            f"{WHERE}:2: node N1, key 'boundary': must be a mapping, not a list",
            "boundary: {ask_first: [{tool: git_push}]}",
        ),
        (
            "nodes:\n  - id: N1\n    scope: a\n    task: t\n    returns: commit\n"
            "    boundary: {deny: [{tool: git_push}]}\n",
            f"{WHERE}:6: node N1, key 'boundary.deny': a boundary has only always_allow and "
            "ask_first",
            "remove 'deny'",
        ),
        (
            "nodes:\n  - id: N1\n    scope: a\n    task: t\n    returns: commit\n"
            "    boundary: {ask_first: git_push}\n",
            f"{WHERE}:6: node N1, key 'boundary.ask_first': must be a list of rules",
            "ask_first: [{tool: git_push}]",
        ),
        (
            "nodes:\n  - id: N1\n    scope: a\n    task: t\n    returns: commit\n"
            "    boundary: {ask_first: [git_push]}\n",
            f"{WHERE}:6: node N1, key 'boundary.ask_first.0': a rule is a mapping with a 'tool'",
            "{tool: git_push}",
        ),
        (
            "nodes:\n  - id: N1\n    scope: a\n    task: t\n    returns: commit\n"
            "    boundary: {ask_first: [{tool: format_disk}]}\n",
            f"{WHERE}:6: node N1, key 'boundary.ask_first.0.tool': 'format_disk' is not a tool",
            "name one of:",
        ),
        (
            "nodes:\n  - id: N1\n    scope: a\n    task: t\n    returns: commit\n"
            "    boundary: {always_allow: [{tool: git_push}]}\n",
            f"{WHERE}:6: node N1, key 'boundary.always_allow.0': an always_allow rule must name "
            "the exact inputs it allows",
            "only the same inputs match",
        ),
        (
            "nodes:\n  - id: N1\n    scope: a\n    task: t\n    returns: commit\n"
            "    boundary: {ask_first: [{tool: git_push, why: x}]}\n",
            f"{WHERE}:6: node N1, key 'boundary.ask_first.0.why': a rule has only 'tool' and "
            "'inputs'",
            "remove 'why'",
        ),
        (
            "nodes:\n  - id: N1\n    scope: a\n    task: t\n    returns: commit\n"
            "    boundary: {ask_first: [{tool: git_push, inputs: main}]}\n",
            f"{WHERE}:6: node N1, key 'boundary.ask_first.0.inputs': inputs must be a mapping",
            "inputs: {key: value}",
        ),
    ],
)
def test_a_plan_that_breaks_a_rule_is_refused_naming_file_line_node_and_key(
    root: Root, pack: changes.ChangePack, text: str, message: str, hint: str
) -> None:
    problem = _problem(root, text)
    assert problem.message.startswith(message), problem.message
    assert problem.hint is not None and hint in problem.hint, problem.hint


def test_a_broken_yaml_plan_is_reported_with_its_line(root: Root, pack: changes.ChangePack) -> None:
    problem = _problem(root, "nodes:\n  - id: N1\n    task: [unclosed\n")
    assert problem.message.startswith(f"{WHERE}:")
    assert problem.message.split(":")[1].isdigit()


def test_a_plan_given_by_a_tool_is_named_by_the_tool_and_has_no_line() -> None:
    with pytest.raises(RecordError) as caught:
        parse_plan({"nodes": [{"id": "N1", "scope": "a", "task": "t"}]}, "draft_plan")
    assert caught.value.message.startswith("draft_plan: node N1, key 'returns': must be one of")


def test_ids_of_decisions_are_checked_against_the_log_when_it_is_given() -> None:
    data = {"nodes": [{"id": "N1", "scope": "a", "task": "t", "returns": "commit"}]}
    data["nodes"][0]["needs"] = ["D-0002"]
    assert parse_plan(data, "p").nodes[0].needs == ("D-0002",)  # the shape alone is fine
    assert parse_plan(data, "p", decision_ids={"D-0002"}).ids == ("N1",)
    with pytest.raises(RecordError, match="p: node N1, key 'needs': D-0002 is not a decision"):
        parse_plan(data, "p", decision_ids={"D-0001"})


def test_a_grandchild_is_as_deep_as_a_plan_goes(root: Root, pack: changes.ChangePack) -> None:
    _write(root, GOOD)  # N4 is a grandchild of N2
    plan = load_plan(root, pack.id)
    assert plan is not None
    assert max(depth for _, _, depth in plan.walk()) == 2


# --- the hash and the acceptance -----------------------------------------------------------------


def test_accepting_binds_the_plan_by_its_hash_and_an_edit_unaccepts_it(
    root: Root, pack: changes.ChangePack
) -> None:
    _write(root, GOOD.replace(", D-0001", ""))
    path = plan_path(root, pack.id)
    assert plan_hash(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    assert plan_accepted(root, pack.id) is None

    first = acceptance.accept_plan(root, pack.id)
    assert not first.already
    assert first.decision.kind == "accept-plan"
    assert first.decision.get("hash") == plan_hash(path)
    assert first.decision.words == WORDS  # her words, not the lead's
    assert plan_accepted(root, pack.id) == first.decision
    assert acceptance.accept_plan(root, pack.id).already  # the same plan: nothing appended

    original = path.read_bytes()
    path.write_bytes(original.replace(b"Test it", b"Test it twice"))
    assert plan_accepted(root, pack.id) is None  # edited: unaccepted

    second = acceptance.accept_plan(root, pack.id, "Test it twice, yes.")
    assert second.decision.id == "D-0002" and not second.already
    assert plan_accepted(root, pack.id) == second.decision

    path.write_bytes(original)  # back word for word: what she accepted first, then replaced
    assert plan_accepted(root, pack.id) is None  # only her latest acceptance counts


def test_a_replaced_plan_acceptance_counts_through_its_replacement(
    root: Root, pack: changes.ChangePack
) -> None:
    _write(root, GOOD.replace(", D-0001", ""))
    acceptance.accept_plan(root, pack.id)
    new = acceptance.replace_decision(root, "D-0001", "Billing first, then expenses.")
    assert plan_accepted(root, pack.id) == new


def test_a_plan_is_only_accepted_for_its_own_change(root: Root, pack: changes.ChangePack) -> None:
    other = changes.create(root, "Another change.")
    _write(root, GOOD.replace(", D-0001", ""))
    plan_path(root, other.id).write_bytes(plan_path(root, pack.id).read_bytes())
    acceptance.accept_plan(root, pack.id)
    assert plan_accepted(root, other.id) is None


def test_accepting_an_invalid_plan_refuses_and_appends_nothing(
    root: Root, pack: changes.ChangePack
) -> None:
    before = root.decisions.read_bytes()
    _write(root, "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, needs: [N1]}\n")
    with pytest.raises(RecordError, match="N1 needs itself"):
        acceptance.accept_plan(root, pack.id)
    _write(root, "nodes:\n  - {id: N1, scope: a, task: t, returns: commit, needs: [D-0009]}\n")
    with pytest.raises(RecordError, match="D-0009 is not a decision"):
        acceptance.accept_plan(root, pack.id)
    assert root.decisions.read_bytes() == before
    assert not root.record_lock.exists()


def test_sdd_accept_plan_on_an_invalid_plan_refuses_and_leaves_decisions_byte_identical(
    sdd: SddRunner, root: Root, pack: changes.ChangePack
) -> None:
    _write(root, GOOD.replace(", D-0001", ""))
    assert sdd("accept", "plan", pack.id).stdout == "D-0001\n"
    before = root.decisions.read_bytes()
    _write(root, "nodes:\n  - {id: N1, scope: a, task: t, returns: commit}\n  - {id: N1}\n")
    result = sdd("accept", "plan", pack.id)
    assert result.code == 1
    assert f"error: {WHERE}:3: node N1, key 'id': N1 is the id of another node" in result.stderr
    assert "hint: give this node an id that no other node has" in result.stderr
    assert root.decisions.read_bytes() == before
    assert plan_accepted(root, pack.id) is None


# --- writing a plan ----------------------------------------------------------------------------


def test_write_plan_writes_the_plan_so_that_it_reads_back_the_same(
    root: Root, pack: changes.ChangePack
) -> None:
    _write(root, GOOD)
    plan = load_plan(root, pack.id)
    assert plan is not None
    path = plan_path(root, pack.id)
    path.unlink()
    before = root.decisions.read_bytes()
    digest = write_plan(root, pack.id, plan.nodes)
    assert digest == plan_hash(path)
    assert load_plan(root, pack.id) == plan
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# The plan of {pack.id}: a draft until the person accepts it")
    assert yaml.safe_load(text)["nodes"][0]["boundary"] == {"ask_first": [{"tool": "git_push"}]}
    assert root.decisions.read_bytes() == before  # a draft, never a decision
    assert not root.record_lock.exists()


def test_a_redrafted_plan_replaces_the_draft_and_is_unaccepted(
    root: Root, pack: changes.ChangePack
) -> None:
    one = PlanNode("N1", "expenses", "expenses-dev", "Mark it", (), "commit")
    write_plan(root, pack.id, [one])
    acceptance.accept_plan(root, pack.id)
    assert plan_accepted(root, pack.id) is not None
    two = PlanNode("N1", "expenses", "expenses-dev", "Mark it reimbursed", (), "commit")
    write_plan(root, pack.id, [one, PlanNode("N2", "billing", None, "Show it", ("N1",), "file")])
    assert plan_accepted(root, pack.id) is None
    write_plan(root, pack.id, [two])
    assert load_plan(root, pack.id) == Plan((two,))
    assert plan_accepted(root, pack.id) is None


def test_write_plan_refuses_an_unknown_change_and_a_held_lock(
    root: Root, pack: changes.ChangePack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lockfile, "DEFAULT_WAIT_SECONDS", 0.1)
    node = PlanNode("N1", "expenses", None, "Mark it", (), "commit")
    with pytest.raises(RecordError, match="no change CH-0009"):
        write_plan(root, "CH-0009", [node])
    assert not plan_path(root, "CH-0009").exists()
    with pytest.raises(UsageError, match="is not a change id"):
        write_plan(root, "../memory", [node])
    with lockfile.hold(root.record_lock), pytest.raises(LockError):
        write_plan(root, pack.id, [node])
    assert not plan_path(root, pack.id).exists()


def test_write_plan_never_writes_a_plan_that_would_not_read_back(
    root: Root, pack: changes.ChangePack
) -> None:
    looped = [
        PlanNode("N1", "a", None, "t", ("N2",), "commit"),
        PlanNode("N2", "b", None, "t", ("N1",), "commit"),
    ]
    with pytest.raises(RecordError, match="N1 needs N2; N2 needs N1"):
        write_plan(root, pack.id, looped)
    assert not plan_path(root, pack.id).exists()
    assert decisions.load(root).entries == ()
