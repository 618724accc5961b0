"""One node of a network, run as its own process: `python -m sdd_git network-node CH NODE SHA`.

The driver starts one such process per ready node, so siblings run in parallel, each with its
own run log and conversation. SHA is the accepted plan's hash: the node runs only while the
plan on disk is that very plan and still accepted, so a plan changed mid-network (by anyone)
runs nothing until she accepts it. The run's `route` event names the node and its
fingerprint: that is how the driver, and a driver started again after being killed, finds the
node's runs, and knows a result belongs to the node as the plan now says it."""

from __future__ import annotations

import json
from pathlib import Path

from sdd_git.errors import SddError
from sdd_git.network.owner import fingerprint, owner_of


def main(argv: list[str]) -> int:
    from sdd_git.records import decisions
    from sdd_git.records.plan import acceptance_of, plan_path, read_plan
    from sdd_git.root import find_root
    from sdd_git.runner.run import RunRequest, start
    from sdd_git.sink import refuse_inside_run

    try:
        refuse_inside_run()
        change, node_id, accepted_hash = argv
        root = find_root(Path.cwd())
        path = plan_path(root, change)
        if not path.exists():
            raise SddError(f"the plan of {change} changed since the network started it")
        # One read: the node runs the very bytes whose hash is checked and accepted, never a
        # file that changed between the check and the use.
        plan, digest = read_plan(path)
        if digest != accepted_hash:
            raise SddError(f"the plan of {change} changed since the network started it")
        if acceptance_of(decisions.load(root), change, digest) is None:
            raise SddError(f"the plan of {change} is not accepted")
        node = plan.node(node_id)
        if node is None:
            raise SddError(f"{change} has no plan node {node_id}")
        owner = owner_of(root, plan, node)
        outcome = start(
            root,
            RunRequest(
                author=owner,
                task=node.task,
                change=change,
                origin="person",  # she started `sdd work`, and answers its stops
                route={
                    "route": "node",
                    "node": node.id,
                    "scope": node.scope,
                    "plan": accepted_hash,
                    "fingerprint": fingerprint(owner, node),
                    "why": f"node {node.id} of the accepted plan of {change}",
                },
            ),
        )
    except SddError as exc:
        print(json.dumps({"status": "error", "exit_code": exc.exit_code, "message": exc.message}))
        return exc.exit_code
    except ValueError:
        print(json.dumps({"status": "error", "exit_code": 2, "message": "usage: CH NODE SHA"}))
        return 2
    print(json.dumps(outcome.as_json()))
    return outcome.exit_code
