"""Routing a change, decided by what is accepted, before any model call (CONTRACT §9).

- No accepted section: the spec steward drafts the reading (or the drafted one waits for her).
- An accepted spec of one service: that service's owner runs. No lead, and none is created.
- An accepted connection spec: its two owners, with handoffs. No lead.
- A spec that crosses scopes with no connection: the module lead (inside one module) or the
  product lead (across modules) drafts a plan, which she accepts before anyone writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sdd_git.errors import RecordError
from sdd_git.root import Root

PRODUCT = "product"
DEFAULT_OWNER = "builder"  # a product with no named scopes is one scope, and the builder owns it


@dataclass(frozen=True)
class Route:
    kind: str  # reading | service | connection | plan
    roles: tuple[str, ...]  # who runs: the steward, the owner, the two owners, or the lead
    scope: str
    why: str

    def as_event(self) -> dict[str, Any]:
        return {"route": self.kind, "roles": list(self.roles), "scope": self.scope, "why": self.why}


def decide(root: Root, change_id: str) -> Route:
    """The route of a change, from the record alone."""
    from sdd_git.records import changes
    from sdd_git.records.spec import read_spec
    from sdd_git.runner import gate

    pack = changes.load(root, change_id)
    if not gate.plan_for(root, pack).sections:
        return Route(
            "reading",
            ("spec-steward",),
            PRODUCT,
            f"{pack.id} has no accepted spec section yet: the spec steward drafts the reading, "
            "and you accept or correct it",
        )
    spec = read_spec(root.spec_file(pack.spec))
    if spec.meta.get("kind") == "connection":
        return _connection(spec.meta, spec.path.name)
    return _by_scope(root, str(spec.meta.get("scope") or PRODUCT), spec.id)


def _connection(meta: dict[str, Any], where: str) -> Route:
    sides = meta.get("sides")
    if not (
        isinstance(sides, list) and len(sides) == 2 and all(isinstance(s, dict) for s in sides)
    ):
        raise RecordError(
            f"{where}: a connection spec needs `sides:` with exactly two {{scope, owner}} items",
            hint="sides: [{scope: service:expenses, owner: expenses-dev}, "
            "{scope: service:billing, owner: billing-dev}]",
        )
    owners = tuple(str(side.get("owner") or "") for side in sides)
    if not all(owners):
        raise RecordError(f"{where}: each side of the connection names its `owner` role")
    scopes = " and ".join(str(side.get("scope")) for side in sides)
    return Route(
        "connection",
        owners,
        scopes,
        f"an accepted connection spec between {scopes}: its owners hand off, with no lead",
    )


def _by_scope(root: Root, scope: str, spec_id: str) -> Route:
    from sdd_git.records import scopes

    shown = scopes.view(root)
    tree = shown.tree
    kind, name = scopes.scope_of(tree, scope)
    if kind == "service":
        service = tree.service(name)
        owner = service.owner if service is not None else None
        return _service(name, owner, f"{spec_id} is the spec of service {name}")
    module = tree.module(name) if kind == "module" else None
    modules = [module] if module is not None else list(tree.modules)
    if not modules:
        return Route(
            "service",
            (DEFAULT_OWNER,),
            PRODUCT,
            f"{spec_id} covers the product, which has no named modules or services: one scope, "
            f"owned by the {DEFAULT_OWNER}",
        )
    if len(modules) == 1:
        only = modules[0]
        if len(only.services) == 1:
            service = only.services[0]
            return _service(
                service.name,
                service.owner,
                f"{spec_id} covers {scope}, which has one service, {service.name}",
            )
        lead = shown.leads.of(only.name)
        if lead is None:
            raise RecordError(
                f"{spec_id} covers module {only.name}, which has no services",
                hint=f"sdd scope add service NAME --module {only.name} --owner ROLE",
            )
        return Route(
            "plan",
            (lead.role,),
            f"module:{only.name}",
            f"{spec_id} crosses the {len(only.services)} services of module {only.name} with no "
            "connection spec: the module lead drafts a plan for you to accept",
        )
    lead = shown.leads.product
    assert lead is not None  # two or more modules always have a product lead
    return Route(
        "plan",
        (lead.role,),
        PRODUCT,
        f"{spec_id} crosses {len(modules)} modules with no connection spec: the product lead "
        "drafts a plan for you to accept",
    )


def _service(name: str, owner: str | None, why: str) -> Route:
    if not owner:
        raise RecordError(
            f"service {name} has no owner role",
            hint=f"name one: sdd scope remove {name}, then sdd scope add service {name} "
            "--module M --owner ROLE",
        )
    return Route("service", (owner,), f"service:{name}", f"{why}: its owner {owner} runs, no lead")
