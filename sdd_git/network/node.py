"""One node of a network, run as its own process: `python -m sdd_git.network.node CH NODE`.

The driver starts one such process per ready node, so siblings run in parallel, each with its
own run log and conversation. The run's `route` event names the node: that is how the driver,
and a driver started again after being killed, finds the node's runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from sdd_git.errors import SddError


def main(argv: list[str]) -> int:
    from sdd_git.network.drive import owner_of
    from sdd_git.records.plan import load_plan
    from sdd_git.root import find_root
    from sdd_git.runner.run import RunRequest, start

    change, node_id = argv
    try:
        root = find_root(Path.cwd())
        plan = load_plan(root, change)
        node = plan.node(node_id) if plan is not None else None
        if plan is None or node is None:
            raise SddError(f"{change} has no plan node {node_id}")
        outcome = start(
            root,
            RunRequest(
                author=owner_of(root, plan, node),
                task=node.task,
                change=change,
                origin="person",  # she started `sdd work`, and answers its stops
                route={
                    "route": "node",
                    "node": node.id,
                    "scope": node.scope,
                    "why": f"node {node.id} of the accepted plan of {change}",
                },
            ),
        )
    except SddError as exc:
        print(json.dumps({"status": "error", "exit_code": exc.exit_code, "message": exc.message}))
        return exc.exit_code
    print(json.dumps(outcome.as_json()))
    return outcome.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
