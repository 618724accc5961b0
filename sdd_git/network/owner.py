"""Who a plan node belongs to, and what its result is a result of: what the driver and each
node's own process both need, below both."""

from __future__ import annotations

import hashlib
import json

from sdd_git.records.plan import Plan, PlanNode
from sdd_git.root import Root


def fingerprint(owner: str, node: PlanNode) -> str:
    """What a result is a result of: the owner, scope, task and what it returns."""
    text = json.dumps([owner, node.scope, node.task, node.returns])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def owner_of(root: Root, plan: Plan, node: PlanNode) -> str:
    """The node's owner; a node that names none gets the seed's depth-derived default role
    (supervisor above the `roles.default_depth_cutoff` depth, executor at or below it)."""
    from sdd_git.config import roles_config
    from sdd_git.roles.lattice import default_role_for_depth

    if node.owner:
        return node.owner
    depth = next(d for n, _, d in plan.walk() if n.id == node.id)
    return default_role_for_depth(depth, roles_config(root).default_depth_cutoff)
