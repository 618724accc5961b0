"""`changes/CH/plan.yaml`: the plan of a task network, drafted by a lead, accepted by the person.

The plan is a tree of nodes, each a task for the owner role of one scope, at most two levels
below its root nodes. A plan binds nobody until the person accepts it: acceptance is an
`accept-plan` decision holding the sha256 of the file's bytes, so an edited plan is unaccepted,
as an edited section is. Nothing in the file itself can make it accepted.

Every plan is checked the same way wherever it comes from (a lead's `draft_plan`, the person's
own edit, `sdd accept plan`): a plan the network could not run to its end (a node waiting for
itself, its own children or its parent, a cycle of needs) is refused with the node and key.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import yaml

from sdd_git import lockfile
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError
from sdd_git.records import changes, decisions
from sdd_git.records.decisions import Decision, DecisionLog
from sdd_git.records.ids import DECISION_ID
from sdd_git.roles.profile import NAME_PATTERN, Boundary, Rule
from sdd_git.root import Root
from sdd_git.toolnames import TOOL_CLASSES
from sdd_git.valuekind import kind_of
from sdd_git.yamlio import display, dump_yaml, parse_yaml

PLAN_FILE = "plan.yaml"
NODE_ID = re.compile(r"^N\d+$")
RETURNS = ("commit", "file", "scenario", "draft", "summary")
MAX_DEPTH = 2  # root nodes are depth 0: children 1, grandchildren 2, and no deeper
NODE_KEYS = ("id", "scope", "owner", "task", "needs", "returns", "boundary", "children")
BOUNDARY_KEYS = ("always_allow", "ask_first")
# Plan nodes name a scope by its bare name (`expenses`), not the typed form of a ROLE.md.
_SCOPE_NAME = re.compile(r"^[a-z0-9-]+$")
_TYPED_SCOPE = re.compile(r"^(?:module|service):([a-z0-9-]+)$")

Where = tuple[str | int, ...]  # a place in the YAML document: keys and list indexes


@dataclass(frozen=True)
class PlanNode:
    id: str
    scope: str
    owner: str | None  # None: the network gives the node the depth-derived default role
    task: str
    needs: tuple[str, ...]  # node ids of this plan, or decision ids, whose results come first
    returns: str  # one of RETURNS
    boundary: dict[str, Any] = field(default_factory=dict)  # always_allow / ask_first lists
    children: tuple[PlanNode, ...] = ()

    @property
    def rules(self) -> Boundary:
        """The node's boundary as the runner's rules, for the owner's run of this node."""
        return Boundary(
            always_allow=tuple(_rule(r) for r in self.boundary.get("always_allow", ())),
            ask_first=tuple(_rule(r) for r in self.boundary.get("ask_first", ())),
        )

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "scope": self.scope}
        if self.owner is not None:
            data["owner"] = self.owner
        data.update(task=self.task, needs=list(self.needs), returns=self.returns)
        if self.boundary:
            data["boundary"] = self.boundary
        if self.children:
            data["children"] = [c.as_dict() for c in self.children]
        return data


def _rule(raw: dict[str, Any]) -> Rule:
    return Rule(raw["tool"], raw.get("inputs"))


@dataclass(frozen=True)
class Plan:
    nodes: tuple[PlanNode, ...]  # the root nodes, each with its subtree

    def walk(self) -> Iterator[tuple[PlanNode, PlanNode | None, int]]:
        """Every node in file order, with its parent (None for a root node) and its depth."""
        stack: list[tuple[PlanNode, PlanNode | None, int]] = [
            (n, None, 0) for n in reversed(self.nodes)
        ]
        while stack:
            node, parent, depth = stack.pop()
            yield node, parent, depth
            stack.extend((c, node, depth + 1) for c in reversed(node.children))

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(node.id for node, _, _ in self.walk())

    def node(self, node_id: str) -> PlanNode | None:
        return next((n for n, _, _ in self.walk() if n.id == node_id), None)

    def as_dict(self) -> dict[str, Any]:
        return {"nodes": [n.as_dict() for n in self.nodes]}


# --- reading and checking a plan --------------------------------------------------------------


class _Reader:
    """Raises the first problem found, naming the file (and line, when the text is known), the
    node and the key, with how to fix it."""

    def __init__(self, where: str, text: str | None) -> None:
        self.where = where
        self.text = text
        self.ids: dict[str, Where] = {}  # node id -> where the node is
        self.parents: dict[str, str | None] = {}

    def fail(
        self, at: Where, node: str | None, key: str | None, message: str, hint: str
    ) -> NoReturn:
        line = _line(self.text, at) if self.text is not None else None
        place = f"{self.where}:{line}" if line is not None else self.where
        who = "" if not node else f"node {node}" if NODE_ID.match(node) else f"the node at {node}"
        subject = ", ".join(part for part in (who, f"key '{key}'" if key else "") if part)
        raise RecordError(f"{place}: {subject + ': ' if subject else ''}{message}", hint=hint)


def _line(text: str, at: Where) -> int:
    """The line (1-based) of the place `at` in the YAML text: only on the error path."""
    try:
        current: yaml.Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return 1
    line = 1
    for step in at:
        if current is None:
            break
        line = current.start_mark.line + 1
        found: yaml.Node | None = None
        if isinstance(current, yaml.MappingNode):
            for key_node, value_node in current.value:
                if key_node.value == step:
                    line = key_node.start_mark.line + 1
                    found = value_node
                    break
        elif (
            isinstance(current, yaml.SequenceNode)
            and isinstance(step, int)
            and step < len(current.value)
        ):
            found = current.value[step]
            line = found.start_mark.line + 1
        current = found
    return line


def _shown(at: Where) -> str:
    """A node that has no valid id yet, named by its place: nodes[1].children[0]."""
    out = ""
    for step in at:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def parse_plan(
    data: Any,
    where: str,
    *,
    text: str | None = None,
    decision_ids: Collection[str] | None = None,
) -> Plan:
    """The plan in `data` (the loaded YAML), checked. `where` names its source in every error
    (a file, or the tool that was given it); with `text`, errors name the line too. With
    `decision_ids`, a decision id in `needs` must be one of them: a node waiting for a decision
    that does not exist would wait forever."""
    reader = _Reader(where, text)
    if data is None:
        reader.fail(
            (), None, "nodes", "the plan is empty", "write the plan as nodes: [{id: N1, ...}]"
        )
    if not isinstance(data, dict):
        reader.fail(
            (),
            None,
            None,
            f"a plan is a mapping with the key 'nodes', not {kind_of(data)}",
            "write the plan as nodes: [{id: N1, scope: ..., owner: ..., task: ..., returns: ...}]",
        )
    for extra in sorted(str(k) for k in data if k != "nodes"):
        reader.fail(
            (extra,),
            None,
            extra,
            "a plan has only the key 'nodes'",
            f"remove '{extra}', or move what it says into a node's task",
        )
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        reader.fail(
            ("nodes",),
            None,
            "nodes",
            "must be a non-empty list of nodes",
            "write nodes: [{id: N1, scope: ..., owner: ..., task: ..., returns: ...}]",
        )
    roots = tuple(
        _node(reader, item, ("nodes", index), 0, None) for index, item in enumerate(raw_nodes)
    )
    plan = Plan(roots)
    _check_needs(reader, plan, decision_ids)
    _check_cycles(reader, plan)
    return plan


def _node(reader: _Reader, item: Any, at: Where, depth: int, parent: str | None) -> PlanNode:
    shown = _shown(at)
    if not isinstance(item, dict):
        reader.fail(
            at,
            shown,
            None,
            f"a node is a mapping of keys to values, not {kind_of(item)}",
            "write the node as {id: N1, scope: ..., owner: ..., task: ..., returns: ...}",
        )
    for extra in sorted(str(k) for k in item if k not in NODE_KEYS):
        reader.fail(
            (*at, extra),
            shown,
            extra,
            "is not a key of a node",
            "a node has " + ", ".join(NODE_KEYS) + "; remove or rename the key",
        )
    node_id = item.get("id")
    if not isinstance(node_id, str) or not NODE_ID.match(node_id):
        reader.fail(
            (*at, "id"),
            shown,
            "id",
            f"must be N followed by digits (N1, N2, ...), not {node_id!r}",
            "give every node its own id: N1, N2, N3, ...",
        )
    if node_id in reader.ids:
        reader.fail(
            (*at, "id"),
            node_id,
            "id",
            f"{node_id} is the id of another node ({_shown(reader.ids[node_id])}); "
            "ids are unique across the whole plan",
            "give this node an id that no other node has, children included",
        )
    reader.ids[node_id] = at
    reader.parents[node_id] = parent

    scope = item.get("scope")
    if not isinstance(scope, str) or not _SCOPE_NAME.match(scope):
        typed = _TYPED_SCOPE.match(scope) if isinstance(scope, str) else None
        reader.fail(
            (*at, "scope"),
            node_id,
            "scope",
            f"must be the bare name of a service or module, not {scope!r}",
            f"write scope: {typed.group(1)} (plan nodes use the bare name)"
            if typed
            else "write the scope's name as `sdd scope show` lists it, e.g. scope: expenses",
        )
    owner = item.get("owner")
    if owner is not None and (not isinstance(owner, str) or not NAME_PATTERN.match(owner)):
        reader.fail(
            (*at, "owner"),
            node_id,
            "owner",
            f"must be a role name (lowercase letters, digits and '-'), not {owner!r}",
            "name the role that owns this scope (`sdd scope show`), or leave owner out",
        )
    task = item.get("task")
    if not isinstance(task, str) or not task.strip():
        reader.fail(
            (*at, "task"),
            node_id,
            "task",
            "must be the node's task in words" if task is None else "must be non-empty text",
            "say what the owner does, e.g. task: Mark an expense reimbursed",
        )
    returns = item.get("returns")
    if returns not in RETURNS:
        reader.fail(
            (*at, "returns"),
            node_id,
            "returns",
            f"must be one of {', '.join(RETURNS)}, not {returns!r}",
            "name the kind of result the owner hands back, e.g. returns: commit",
        )
    needs = _needs(reader, item.get("needs"), (*at, "needs"), node_id)
    boundary = _boundary(reader, item.get("boundary"), (*at, "boundary"), node_id)

    raw_children = item.get("children")
    if raw_children is None:
        raw_children = []
    if not isinstance(raw_children, list):
        reader.fail(
            (*at, "children"),
            node_id,
            "children",
            f"must be a list of nodes, not {kind_of(raw_children)}",
            "write children: [{id: N2, ...}], or leave children out",
        )
    if raw_children and depth >= MAX_DEPTH:
        reader.fail(
            (*at, "children"),
            node_id,
            "children",
            f"{node_id} is already {depth} levels below a root node; a plan goes at most "
            f"{MAX_DEPTH} levels below its root nodes",
            f"give {node_id} no children: make them its siblings, or split the work "
            "into fewer levels",
        )
    children = tuple(
        _node(reader, child, (*at, "children", index), depth + 1, node_id)
        for index, child in enumerate(raw_children)
    )
    return PlanNode(
        id=node_id,
        scope=str(scope),
        owner=owner,
        task=task.strip(),
        needs=needs,
        returns=str(returns),
        boundary=boundary,
        children=children,
    )


def _needs(reader: _Reader, value: Any, at: Where, node_id: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        reader.fail(
            at,
            node_id,
            "needs",
            f"must be a list of node or decision ids, not {kind_of(value)}",
            "write needs: [N1, D-0001], or needs: [] when nothing comes first",
        )
    seen: list[str] = []
    for index, need in enumerate(value):
        if not isinstance(need, str) or not (NODE_ID.match(need) or DECISION_ID.match(need)):
            reader.fail(
                (*at, index),
                node_id,
                "needs",
                f"{need!r} is neither a node id (N1) nor a decision id (D-0001)",
                "list the ids of nodes of this plan, or of decisions, whose results come first",
            )
        if need in seen:
            reader.fail(
                (*at, index),
                node_id,
                "needs",
                f"lists {need} twice",
                f"list {need} once",
            )
        seen.append(need)
    return tuple(seen)


def _boundary(reader: _Reader, value: Any, at: Where, node_id: str) -> dict[str, Any]:
    """The owner's approval rules for this node, checked as a role file's boundary is: a rule
    names a tool sdd has, and an always_allow rule names the exact inputs it allows."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        reader.fail(
            at,
            node_id,
            "boundary",
            f"must be a mapping, not {kind_of(value)}",
            "write boundary: {ask_first: [{tool: git_push}]}, or leave it out",
        )
    for extra in sorted(str(k) for k in value if k not in BOUNDARY_KEYS):
        reader.fail(
            (*at, extra),
            node_id,
            f"boundary.{extra}",
            "a boundary has only always_allow and ask_first",
            f"remove '{extra}' from the boundary",
        )
    out: dict[str, Any] = {}
    for kind in BOUNDARY_KEYS:
        if kind not in value:
            continue
        rules = value[kind]
        key = f"boundary.{kind}"
        if rules is None:
            rules = []
        if not isinstance(rules, list):
            reader.fail(
                (*at, kind),
                node_id,
                key,
                "must be a list of rules",
                f"write {kind}: [] or {kind}: [{{tool: git_push}}]",
            )
        out[kind] = [
            _boundary_rule(reader, rule, (*at, kind, index), node_id, f"{key}.{index}", kind)
            for index, rule in enumerate(rules)
        ]
    return out


def _boundary_rule(
    reader: _Reader, rule: Any, at: Where, node_id: str, key: str, kind: str
) -> dict[str, Any]:
    if not isinstance(rule, dict) or not isinstance(rule.get("tool"), str):
        reader.fail(at, node_id, key, "a rule is a mapping with a 'tool'", "write {tool: git_push}")
    for extra in sorted(str(k) for k in rule if k not in ("tool", "inputs")):
        reader.fail(
            (*at, extra),
            node_id,
            f"{key}.{extra}",
            "a rule has only 'tool' and 'inputs'",
            f"remove '{extra}' from the rule",
        )
    tool = rule["tool"]
    if tool not in TOOL_CLASSES:
        reader.fail(
            (*at, "tool"),
            node_id,
            f"{key}.tool",
            f"'{tool}' is not a tool",
            "name one of: " + ", ".join(sorted(TOOL_CLASSES)),
        )
    inputs = rule.get("inputs")
    if inputs is not None and not isinstance(inputs, dict):
        reader.fail(
            (*at, "inputs"),
            node_id,
            f"{key}.inputs",
            "inputs must be a mapping",
            "write inputs: {key: value}",
        )
    if kind == "always_allow" and inputs is None:
        reader.fail(
            at,
            node_id,
            key,
            "an always_allow rule must name the exact inputs it allows",
            "add inputs: {...} (use {} for a call with no inputs); only the same inputs match",
        )
    return {"tool": tool} if inputs is None else {"tool": tool, "inputs": inputs}


def _check_needs(reader: _Reader, plan: Plan, decision_ids: Collection[str] | None) -> None:
    """Each need names something that can have a result before the node starts. A parent's
    owner starts its children and the parent waits for every one of them, so a node can never
    wait for its own descendant, nor a descendant for it."""
    for node, _, _ in plan.walk():
        at = (*reader.ids[node.id], "needs")
        for index, need in enumerate(node.needs):
            if DECISION_ID.match(need):
                if decision_ids is not None and need not in decision_ids:
                    reader.fail(
                        (*at, index),
                        node.id,
                        "needs",
                        f"{need} is not a decision in memory/decisions.yaml",
                        "name a decision that exists (`sdd change show CH` lists them)",
                    )
                continue
            if need not in reader.ids:
                reader.fail(
                    (*at, index),
                    node.id,
                    "needs",
                    f"{need} is not a node of this plan",
                    "name nodes of this plan (" + ", ".join(reader.ids) + ") or decision ids",
                )
            if need == node.id:
                reader.fail(
                    (*at, index),
                    node.id,
                    "needs",
                    f"{node.id} needs itself, so it could never start",
                    f"remove {node.id} from its own needs",
                )
            if _is_ancestor(reader, node.id, need):
                reader.fail(
                    (*at, index),
                    node.id,
                    "needs",
                    f"{node.id} needs {need}, which contains it: {need} waits for {node.id}, "
                    "so neither could finish",
                    f"remove {need} from {node.id}'s needs, or move {node.id} out of {need}",
                )
            if _is_ancestor(reader, need, node.id):
                reader.fail(
                    (*at, index),
                    node.id,
                    "needs",
                    f"{node.id} needs its own descendant {need}: {need} starts only after "
                    f"{node.id} does, and {node.id} already waits for it to finish",
                    f"remove {need} from {node.id}'s needs; a node waits for its children anyway",
                )


def _is_ancestor(reader: _Reader, node_id: str, maybe_ancestor: str) -> bool:
    current = reader.parents.get(node_id)
    while current is not None:
        if current == maybe_ancestor:
            return True
        current = reader.parents.get(current)
    return False


def _check_cycles(reader: _Reader, plan: Plan) -> None:
    """No set of nodes waits on itself. Each node has two moments, its start and its end; a need
    puts the needed node's end before the node's start, a child starts after its parent starts,
    and a parent ends after each child ends. A cycle of moments is a plan that never finishes,
    even where no node needs another directly (N1 needs N2, whose child needs N1)."""
    edges: dict[tuple[str, str], list[tuple[tuple[str, str], str]]] = {}

    def edge(before: tuple[str, str], after: tuple[str, str], words: str) -> None:
        edges.setdefault(after, []).append((before, words))  # kept by what comes after

    for node, parent, _ in plan.walk():
        edges.setdefault(("start", node.id), [])
        edge(("start", node.id), ("end", node.id), "")
        if parent is not None:
            edge(
                ("start", parent.id),
                ("start", node.id),
                f"{node.id} is started by its parent {parent.id}",
            )
            edge(("end", node.id), ("end", parent.id), f"{parent.id} waits for its child {node.id}")
        for need in node.needs:
            if NODE_ID.match(need):
                edge(("end", need), ("start", node.id), f"{node.id} needs {need}")
    # Kahn's order: what is left when nothing more can be ordered lies on (or behind) a cycle.
    remaining = set(edges)
    waiting = {m: len(before) for m, before in edges.items()}
    followers: dict[tuple[str, str], list[tuple[str, str]]] = {m: [] for m in edges}
    for after, earlier in edges.items():
        for first, _ in earlier:
            followers[first].append(after)
    ready = [m for m, count in waiting.items() if count == 0]
    while ready:
        moment = ready.pop()
        remaining.discard(moment)
        for after in followers[moment]:
            waiting[after] -= 1
            if waiting[after] == 0:
                ready.append(after)
    if not remaining:
        return
    # Walk back from a moment left over: each has something before it that is left over too,
    # so the walk comes round to a moment it saw; from there on it is the cycle.
    path: list[tuple[tuple[str, str], str]] = []
    seen: dict[tuple[str, str], int] = {}
    moment = min(remaining)
    while moment not in seen:
        seen[moment] = len(path)
        before, words = next((b, w) for b, w in edges[moment] if b in remaining)
        path.append((moment, words))
        moment = before
    cycle = path[seen[moment] :]
    said = [words for _, words in cycle if words]
    first_need = next((m for m, words in cycle if " needs " in words), cycle[0][0])
    node_id = first_need[1]
    reader.fail(
        (*reader.ids[node_id], "needs"),
        node_id,
        "needs",
        "these nodes wait for each other, so none could finish: " + "; ".join(said),
        "remove one of these needs to break the cycle",
    )


# --- the file, its hash and its acceptance ----------------------------------------------------


def plan_path(root: Root, change_id: str) -> Path:
    return root.change_dir(changes.parse_change_id(change_id)) / PLAN_FILE


def plan_hash(path: Path) -> str:
    """The sha256 of the file's bytes: what an `accept-plan` decision holds."""
    return _sha256(plan_bytes(path))


def plan_bytes(path: Path) -> bytes:
    """The plan file (`ROOT/changes/CH-0001/plan.yaml`), read with no link followed."""
    from sdd_git import beneath

    try:
        return beneath.read_bytes(path.parents[2], path)
    except (FileNotFoundError, NotADirectoryError):
        raise RecordError(f"{display(path)}: file not found") from None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_plan(path: Path, decision_ids: Collection[str] | None = None) -> tuple[Plan, str]:
    """The plan in the file, checked, and the sha256 of the very bytes it was read from (so
    what is accepted is what was checked). A broken file is reported with its line."""
    data = plan_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"{display(path)}: not UTF-8 text ({exc.reason})",
            hint="save the plan as UTF-8 text",
        ) from None
    plan = parse_plan(parse_yaml(text, path), display(path), text=text, decision_ids=decision_ids)
    return plan, _sha256(data)


def load_plan(root: Root, change_id: str) -> Plan | None:
    """The change's plan, checked; None when it has none."""
    path = plan_path(root, change_id)
    if not path.exists():
        return None
    return read_plan(path)[0]


def acceptance_of(log: DecisionLog, change_id: str, digest: str) -> Decision | None:
    """The change's latest `accept-plan` decision, when it holds this very hash. Only the
    latest counts: a plan she replaced by accepting another is not accepted again when a lead
    redrafts it byte for byte."""
    for entry in reversed(log.active("accept-plan")):
        if entry.get("change") == change_id:
            return entry if entry.get("hash") == digest else None
    return None


def plan_accepted(root: Root, change_id: str) -> Decision | None:
    """The decision that accepted the plan as the file is now; None when it has no plan, or
    when the plan was edited (or redrafted) since she accepted it."""
    path = plan_path(root, change_id)
    if not path.exists():
        return None
    return acceptance_of(decisions.load(root), change_id, plan_hash(path))


def write_plan(
    root: Root,
    change_id: str,
    nodes: Sequence[PlanNode],
    write: Callable[[Path, str], None] | None = None,
) -> str:
    """Write the plan (replacing any draft) under the record lock, atomically; returns its hash.

    A redrafted plan has other bytes, so it is unaccepted until she accepts it again. `write`
    is how the bytes land: the draft tool passes its own writer, which never follows a symlink.
    """
    path = plan_path(root, change_id)
    plan = Plan(tuple(nodes))
    text = (
        f"# The plan of {change_id}: a draft until the person accepts it "
        f"(sdd accept plan {change_id}); an edit unaccepts it.\n"
    ) + dump_yaml(plan.as_dict())
    # Never write a plan that would not read back as the same plan.
    if parse_plan(parse_yaml(text, path), display(path), text=text) != plan:
        raise RecordError(
            f"{display(path)}: this plan would not read back as written; nothing was written",
            hint="write the nodes' text without characters YAML cannot keep",
        )
    with lockfile.hold(root.record_lock):
        changes.load(root, change_id)  # the change is there, as the lock holder sees it
        (write or write_text_atomic)(path, text)
    return _sha256(text.encode("utf-8"))
