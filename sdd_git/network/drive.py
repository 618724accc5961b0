"""Running an accepted plan: rounds of node runs, each node's owner in its own process.

The state is a ledger in `.sdd/local/network/CH.json` (the task ledger: the plan, each node's
runs and result; the progress ledger: the rounds and what each produced), and the network's own
events go to `.sdd/local/network/CH.jsonl`. A node's runs are found by their `route` event, so
a driver killed at any moment and started again reads where each node is from the run logs:
no node whose run produced a result runs again, and no stop is lost.

A node is ready when its `needs` have results and its parent has its own result; siblings
that are ready run in parallel. A parent is done only when it and every child have results.
Two rounds that run nodes and produce nothing stall the network for her. A stall is the
ledger's state for that very plan (`stall` holds its sha256): while it holds, the nodes that
would be ready are `stalled` and nothing starts, so every later `sdd work` waits too. Only a
new accepted plan lifts it (a rebuild). The first stall waits for her (exit 3); a stall after
that ends the network as stalled (exit 1). Each result also reaches the lead's record (record.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sdd_git import lockfile, statefolders
from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import SddError
from sdd_git.network.owner import fingerprint, owner_of
from sdd_git.recordjson import record_json
from sdd_git.records.plan import Plan, PlanNode, load_plan, plan_hash, plan_path
from sdd_git.root import Root
from sdd_git.runner.runlog import read_events

POLL_SECONDS = 0.2
STALL_ROUNDS = 2  # rounds in a row with no new result before the network stops for her
DEFAULT_MAX_CHILDREN = 8
EXIT_DONE, EXIT_FAILED, EXIT_WAITING = 0, 1, 3
Say = Callable[[str], None]


@dataclass(frozen=True)
class NodeView:
    id: str
    scope: str
    owner: str | None
    state: str  # waiting, ready, running, stopped, done, failed, stalled
    depth: int
    stop: str | None = None
    artifact: dict[str, Any] | None = None
    why: str | None = None
    run: str | None = None  # the node's run that returned its artifact

    def as_json(self) -> dict[str, Any]:
        return record_json(self, omit=("run",))


@dataclass(frozen=True)
class Finished:
    status: str  # done, waiting, stalled, failed
    exit_code: int
    message: str
    nodes: tuple[NodeView, ...]


class Network:
    """One change's network: its accepted plan, ledger and event log."""

    def __init__(self, root: Root, change: str) -> None:
        self.root = root
        self.change = change
        folder = root.local / "network"
        self.ledger_path = folder / f"{change}.json"
        self.events_path = folder / f"{change}.jsonl"

    # --- the ledger ---------------------------------------------------------------------------

    def ledger(self) -> dict[str, Any]:
        try:
            text = statefolders.read_text(self.ledger_path)
        except FileNotFoundError:
            return {
                "change": self.change,
                "plan": None,
                "rebuilds": 0,
                "stalls": 0,
                "stall": None,
                "rounds": [],
            }
        loaded: dict[str, Any] = json.loads(text)
        return loaded

    def save(self, ledger: dict[str, Any]) -> None:
        write_text_atomic(self.ledger_path, json.dumps(ledger, indent=2, sort_keys=True) + "\n")

    def event(self, kind: str, **fields: Any) -> None:
        line = {"event": kind, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **fields}
        text = json.dumps(line, ensure_ascii=False) + "\n"
        statefolders.append(self.events_path, text.encode("utf-8"), sync=False)

    # --- where each node is, from its runs ----------------------------------------------------

    def node_runs(self) -> dict[str, list[list[dict[str, Any]]]]:
        """Each node's run logs, oldest first, found by the `route` event naming the node."""
        found: dict[str, list[tuple[str, list[dict[str, Any]]]]] = {}
        for path in sorted((self.root.sdd / "role-runs").glob("*.jsonl")):
            events = read_events(path)
            route = next((e for e in events[:4] if e.get("event") == "route"), None)
            started = events[0] if events else {}
            if route is None or route.get("route") != "node":
                continue
            if started.get("change") != self.change:
                continue
            found.setdefault(str(route["node"]), []).append((path.name, events))
        return {node: [events for _, events in sorted(runs)] for node, runs in found.items()}

    def stall(self) -> dict[str, Any] | None:
        """The stall that holds, when it is one of the plan as the file is now."""
        stall = self.ledger().get("stall")
        path = plan_path(self.root, self.change)
        if not isinstance(stall, dict) or not path.exists():
            return None
        return stall if stall.get("plan") == plan_hash(path) else None

    def states(self, plan: Plan) -> dict[str, NodeView]:
        from sdd_git.runner import stops

        runs = self.node_runs()
        pending = {s.id for s in stops.pending(self.root)}
        denied = {str(e.get("node")) for e in self._events() if e["event"] == "role_spawn_denied"}
        own: dict[str, NodeView] = {}
        for node, _parent, depth in plan.walk():
            owner = owner_of(self.root, plan, node)
            mine = [
                r
                for r in runs.get(node.id, [])
                if _fingerprint_of(r) in (None, fingerprint(owner, node))
            ]
            own[node.id] = _own_state(self.root, owner, node, depth, mine, pending, denied)
        spawned = {str(e["node"]): e.get("pid") for e in self._events() if e["event"] == "spawn"}
        for node_id, view in list(own.items()):
            pid = spawned.get(node_id)
            if view.state == "ready" and isinstance(pid, int) and _pid_alive(pid):
                # Started by a driver that was killed, and still working: not started twice.
                own[node_id] = dataclasses.replace(view, state="running", why="still running")
        views: dict[str, NodeView] = {}
        for node, _parent, _depth in reversed(list(plan.walk())):  # children before parents
            view = own[node.id]
            if view.state == "done" and any(views[c.id].state != "done" for c in node.children):
                view = dataclasses.replace(view, state="waiting",
                                           why="open: waiting for its children")  # fmt: skip
            views[node.id] = view
        views = {node.id: views[node.id] for node, _parent, _depth in plan.walk()}  # plan order
        for node, parent, depth in plan.walk():
            view = views[node.id]
            if view.state != "ready":
                continue
            blocked = [n for n in node.needs if _need_open(n, views)]
            if parent is not None and own[parent.id].state != "done":
                blocked.append(parent.id)
            if blocked:
                views[node.id] = NodeView(node.id, node.scope, node.owner, "waiting", depth,
                                          why="waits for " + ", ".join(blocked))  # fmt: skip
        if self.stall() is not None:  # a stall holds: what would run waits for a new plan
            for node_id, view in views.items():
                if view.state == "ready":
                    views[node_id] = dataclasses.replace(
                        view, state="stalled", why="no result in two rounds: a new plan restarts it"
                    )
        return views

    def _events(self) -> list[dict[str, Any]]:
        try:
            lines = statefolders.read_text(self.events_path).splitlines()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in lines if line.strip()]


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False
    try:
        finished, _status = os.waitpid(pid, os.WNOHANG)  # our own child that has ended
        if finished:
            return False
    except ChildProcessError:
        pass  # not our child: a killed driver's
    return lockfile.pid_alive(pid)


def _fingerprint_of(events: list[dict[str, Any]]) -> str | None:
    route = next((e for e in events[:4] if e.get("event") == "route"), None)
    value = (route or {}).get("fingerprint")
    return str(value) if value is not None else None


def _need_open(need: str, views: dict[str, NodeView]) -> bool:
    if need in views:
        return views[need].state != "done"
    return False  # a decision id: the plan was checked against the decisions when accepted


def _alive(root: Root, role: str | None) -> bool:
    """Whether a run of `role` is under way: its role lock is held by a live process."""
    from sdd_git.lockfile import describe_holder
    from sdd_git.runner.runlog import role_lock

    path = role_lock(root, role or "")
    if not path.exists():
        return False
    _text, stale = describe_holder(path)
    return not stale


def _own_state(
    root: Root,
    owner: str,
    node: PlanNode,
    depth: int,
    runs: list[list[dict[str, Any]]],
    pending: set[str],
    denied: set[str],
) -> NodeView:
    """A node's own state from its last run: its result, a stop waiting, or ready to run."""
    if node.id in denied:
        return NodeView(node.id, node.scope, node.owner, "failed", depth, why="spawn denied")
    for events in runs:
        artifact = next((e for e in events if e.get("event") == "artifact"), None)
        if artifact is not None:
            keys: tuple[str, ...] = ("kind", "ref", "summary", "sha256")
            shown = {k: artifact.get(k) for k in keys if k in artifact}
            run = str(events[0].get("run"))
            return NodeView(node.id, node.scope, node.owner, "done", depth, artifact=shown, run=run)
    if not runs:
        return NodeView(node.id, node.scope, node.owner, "ready", depth)
    last = runs[-1]
    ended = [e for e in last if e.get("event") == "run_ended"]
    resumed_after = ended and any(
        e.get("event") == "run_resumed" for e in last[last.index(ended[-1]) :]
    )
    if not ended or resumed_after:
        if _alive(root, owner):
            return NodeView(node.id, node.scope, node.owner, "running", depth)
        # Its process died with the run open (a killed driver's child): no result, run again.
        return NodeView(node.id, node.scope, node.owner, "ready", depth, why="its run died")
    status = ended[-1].get("status")
    if status == "stopped":
        stop = str(ended[-1].get("waiting_for"))
        if stop in pending:
            return NodeView(node.id, node.scope, node.owner, "stopped", depth, stop=stop)
    if status in ("failed", "no-spec", "expired"):
        return NodeView(node.id, node.scope, node.owner, "failed", depth, why=str(status))
    return NodeView(node.id, node.scope, node.owner, "ready", depth, why="no result yet")


# --- driving -----------------------------------------------------------------------------------


def _require_confirmed(root: Root, plan: Plan) -> None:
    """No node starts on a role, settings or product parts she has not confirmed (§13): each
    node runs in a process of its own with nobody to ask, so she is asked here, once."""
    from sdd_git.roles.registry import find_role
    from sdd_git.runner import trusted
    from sdd_git.trust.pending import ledger_for, product_item

    ledger = ledger_for(root)
    if ledger is None:
        return
    owners = {owner_of(root, plan, node) for node, _, _ in plan.walk()}
    roles = [find_role(root, name, use_cache=False)[0] for name in sorted(owners)]
    parts = product_item(root, ledger)
    trusted.require(root, roles, [parts] if parts else [], doing="the network's nodes")


def drive(root: Root, change: str, say: Say | None = None) -> Finished:
    """Run rounds until no node can go on without her; leaves nothing running behind it."""
    from sdd_git.network.route import decide
    from sdd_git.sink import refuse_inside_run
    from sdd_git.trust.state import refuse_tracked_state

    refuse_inside_run()
    # The ledger (its stall) and the nodes' run logs (their results) are sdd's own state: a
    # copy that git tracks came with a merge, written over hers, and never drives a node.
    refuse_tracked_state(root, "running the network")
    say = say or (lambda text: None)
    network = Network(root, change)
    plan, digest = _accepted(root, change)
    _require_confirmed(root, plan)
    lead = decide(root, change).roles[0]
    ledger = network.ledger()
    if ledger["plan"] != digest:  # a new accepted plan: a rebuild, and any stall is lifted
        if ledger["plan"] is not None:
            ledger["rebuilds"] += 1
            network.event("rebuild", plan=digest, rebuilds=ledger["rebuilds"])
        ledger["plan"] = digest
        ledger["stall"] = None
        network.save(ledger)
    quiet = 0
    while True:
        views = network.states(plan)
        _record(root, change, lead, plan, views)
        ready = [plan.node(v.id) for v in views.values() if v.state == "ready"]
        if not ready and any(v.state == "running" for v in views.values()):
            time.sleep(POLL_SECONDS)  # a node another process continues (an answered stop)
            continue
        if not ready:
            return _finished(plan, views, ledger)
        if _accepted(root, change)[1] != digest:  # changed mid-network: she accepts it first
            raise SddError(
                f"the plan of {change} changed while the network ran; nothing more starts",
                hint=f"read changes/{change}/plan.yaml, then sdd accept plan {change}",
            )
        nodes = [n for n in ready if n is not None]
        started = _start_round(root, network, plan, digest, nodes, say)
        done_before = {v.id for v in views.values() if v.state == "done"}
        after = network.states(plan)
        progress = sorted(v.id for v in after.values() if v.state == "done" and
                          v.id not in done_before)  # fmt: skip
        ledger["rounds"].append({"ran": started, "progress": progress})
        network.event("round", ran=started, progress=progress)
        network.save(ledger)
        stopped = any(v.state == "stopped" for v in after.values())
        quiet = 0 if progress or stopped else quiet + 1
        if quiet >= STALL_ROUNDS:
            final = ledger.get("stalls", 0) > 0  # she was given one new plan already
            ledger["stalls"] = ledger.get("stalls", 0) + 1
            ledger["stall"] = {"plan": digest, "final": final}
            network.event("stalled", final=final, rounds=quiet)
            network.save(ledger)
            quiet = 0  # the stall now holds in the ledger: the next look finds nothing ready


def _record(root: Root, change: str, lead: str, plan: Plan, views: dict[str, NodeView]) -> None:
    """Every result so far into the lead's record (once each)."""
    from sdd_git.network.record import record_results

    record_results(
        root,
        change,
        lead,
        (
            (v.id, owner_of(root, plan, node), v.run, v.artifact)
            for node, _, _ in plan.walk()
            if (v := views[node.id]).artifact is not None and v.run is not None
        ),
    )


def _accepted(root: Root, change: str) -> tuple[Plan, str]:
    """The accepted plan and its hash, both from one read of the file."""
    from sdd_git.records import decisions
    from sdd_git.records.plan import acceptance_of, read_plan

    path = plan_path(root, change)
    plan, digest = read_plan(path) if path.exists() else (None, "")
    if plan is None or acceptance_of(decisions.load(root), change, digest) is None:
        raise SddError(
            f"{change} has no accepted plan",
            hint=f"accept the lead's plan first: sdd accept plan {change}",
        )
    return plan, digest


def _start_round(
    root: Root, network: Network, plan: Plan, digest: str, ready: list[PlanNode], say: Say
) -> list[str]:
    """Start every ready node whose spawn is allowed, in parallel, and wait for all of them."""
    _preload()
    processes: list[tuple[str, int]] = []
    for node in ready:
        refusal = _spawn_refusal(root, network.change, plan, node)
        if refusal is not None:
            owner = owner_of(root, plan, node)
            network.event("role_spawn_denied", node=node.id, owner=owner, why=refusal)
            say(f"{node.id}: spawn denied, nothing started ({refusal})")
            continue
        owner = owner_of(root, plan, node)
        say(f"{node.id}: {owner} starts on {node.scope}: {node.task}")
        # The child writes the `spawn` event with its own pid as its first act, so a driver
        # killed right after the fork and started again sees it and waits for it.
        claim = {"node": node.id, "owner": owner, "scope": node.scope}
        processes.append((node.id, _launch(root, network, claim, digest)))
    started = []
    try:
        for node_id, pid in processes:
            os.waitpid(pid, 0)
            started.append(node_id)
    finally:
        for node_id, pid in processes:  # never leave a node running behind us
            if node_id not in started:
                with contextlib.suppress(ProcessLookupError, ChildProcessError):
                    os.kill(pid, signal.SIGTERM)
                    os.waitpid(pid, 0)
    return started


def _preload() -> None:
    """Import what a node's run needs once, here: a forked node then starts in milliseconds
    instead of paying the interpreter's start-up and imports (most of a short node's time)."""
    import sdd_git.network.node
    import sdd_git.providers.script
    import sdd_git.runner.run
    import sdd_git.tools.toolbox  # noqa: F401


def _launch(root: Root, network: Network, claim: dict[str, Any], digest: str) -> int:
    """A node's own process: forked where fork is safe (Linux), else a fresh interpreter."""
    change, node_id = network.change, str(claim["node"])
    if sys.platform != "linux":
        argv = [sys.executable, "-m", "sdd_git", "network-node", change, node_id, digest]
        pid = subprocess.Popen(
            argv, cwd=root.path, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ).pid  # fmt: skip
        network.event("spawn", **claim, pid=pid)
        return pid
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the child: one node's run, then out, never back into the driver's code
        network.event("spawn", **claim, pid=os.getpid())
        os.chdir(root.path)
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        from sdd_git.network.node import main

        code = main([change, node_id, digest])
    finally:
        os._exit(code)


def _spawn_refusal(root: Root, change: str, plan: Plan, node: PlanNode) -> str | None:
    """Why the spawner may not start this node's owner (canSpawn, caps), or None."""
    from sdd_git.network.route import decide
    from sdd_git.roles.lattice import can_spawn
    from sdd_git.roles.registry import find_role

    parent = next((p for n, p, _ in plan.walk() if n.id == node.id), None)
    if parent is not None and len(parent.children) > _max_children(root):
        return f"{parent.id} has {len(parent.children)} children, more than the cap"
    # A parent node's owner starts its children; the lead starts the root nodes.
    spawner_name = (
        owner_of(root, plan, parent) if parent is not None else decide(root, change).roles[0]
    )
    try:
        spawner, _ = find_role(root, spawner_name, use_cache=False)
        child, _ = find_role(root, owner_of(root, plan, node), use_cache=False)
    except SddError as exc:
        return exc.message
    if not can_spawn(spawner, child):
        return f"{spawner.name} (level {spawner.level_text}) may not spawn {child.name}"
    return None


def _max_children(root: Root) -> int:
    from sdd_git.settings import settings

    network = settings(root).get("network") or {}
    value = network.get("max_children") if isinstance(network, dict) else None
    return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_CHILDREN


def _finished(plan: Plan, by_id: dict[str, NodeView], ledger: dict[str, Any]) -> Finished:
    views = tuple(by_id.values())
    roots = [n.id for n in plan.nodes]
    stalled = ", ".join(v.id for v in views if v.state == "stalled")
    if stalled and (ledger.get("stall") or {}).get("final"):
        return Finished("stalled", EXIT_FAILED, f"the network stalled again after a new plan "
                        f"({stalled} without a result); nothing starts until you accept a new "
                        "plan", views)  # fmt: skip
    if stalled:
        return Finished(
            "waiting",
            EXIT_WAITING,
            f"two rounds produced no result ({stalled}): the network waits for you; nothing "
            "starts until you edit the plan and accept it again",
            views,
        )
    if all(by_id[r].state == "done" for r in roots):
        return Finished("done", EXIT_DONE, "every node has its result", views)
    if any(v.state == "stopped" for v in views):
        waiting = ", ".join(f"{v.id} ({v.stop})" for v in views if v.state == "stopped")
        return Finished("waiting", EXIT_WAITING, f"waiting for you: {waiting}", views)
    failed = ", ".join(f"{v.id} ({v.why})" for v in views if v.state == "failed")
    return Finished("failed", EXIT_FAILED, f"nodes that cannot go on: {failed}", views)


def status(root: Root, change: str) -> tuple[NodeView, ...]:
    """The network tree as it stands, for `sdd work CH --status` (no node is started). State
    that git tracks is refused here too: it would show her results no node of hers made."""
    from sdd_git.trust.state import refuse_tracked_state

    refuse_tracked_state(root, "showing the network")
    plan = load_plan(root, change)
    if plan is None:
        return ()
    return tuple(Network(root, change).states(plan).values())


def tree_lines(nodes: tuple[NodeView, ...]) -> list[str]:
    order = {v.id: v for v in nodes}
    lines = []
    for view in order.values():
        extra = f" stop {view.stop}" if view.stop else ""
        if view.artifact:
            extra += f" {view.artifact.get('kind')} {view.artifact.get('ref')}"
        if view.why:
            extra += f" ({view.why})"
        lines.append(f"{'  ' * view.depth}{view.id} {view.scope} {view.owner}: {view.state}{extra}")
    return lines
