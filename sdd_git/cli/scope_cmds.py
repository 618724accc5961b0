"""`sdd scope`: the product's modules and services, their owners and their leads."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from sdd_git.cli.output import current_root, emit_json, json_option, say

if TYPE_CHECKING:
    from sdd_git.records.scopes import Lead, ScopeView


@click.group()
def scope() -> None:
    """The product's modules and services (memory/product.yaml), written by you only."""


@scope.group("add")
def scope_add() -> None:
    """Add a module, or a service to a module."""


@scope_add.command("module")
@click.argument("name")
def add_module(name: str) -> None:
    """Add module NAME (lowercase letters, digits and '-'). Prints module:NAME."""
    from sdd_git.records import scopes

    module = scopes.add_module(current_root(), name)
    say(f"added module {module.name} to memory/product.yaml")
    click.echo(f"module:{module.name}")


@scope_add.command("service")
@click.argument("name")
@click.option("--module", "module", required=True, metavar="M", help="The module it belongs to.")
@click.option("--owner", metavar="ROLE", help="The role that owns it (`sdd role list`).")
def add_service(name: str, module: str, owner: str | None) -> None:
    """Add service NAME to module M, owned by ROLE. Prints service:NAME."""
    from sdd_git.records import scopes

    service = scopes.add_service(current_root(), name, module, owner)
    whose = f"owned by {service.owner}" if service.owner else "with no owner yet"
    say(f"added service {service.name} to module {module.removeprefix('module:')}, {whose}")
    click.echo(f"service:{service.name}")


@scope.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Remove service NAME, or module NAME once it holds no service."""
    from sdd_git.records import scopes

    gone = scopes.remove(current_root(), name)
    say(f"removed {gone.kind} {gone.name} from memory/product.yaml")


@scope.command("show")
@json_option
def show(as_json: bool) -> None:
    """The tree: each service's owner, and the leads (a module lead where a module has 2+
    services, a product lead where the product has 2+ modules)."""
    from sdd_git.records import scopes

    view = scopes.view(current_root())
    for line in view.warnings:
        say(line)
    if as_json:
        emit_json(view.as_json())
        return
    click.echo("\n".join(_tree_lines(view)))
    if not view.tree.modules:
        say("no modules yet; add one: sdd scope add module NAME")


def _tree_lines(view: ScopeView) -> list[str]:
    tree = view.tree
    product = f"product {tree.product}" if tree.product else "product"
    rows = [(product, _lead(view.leads.product, "product"))]
    for module in tree.modules:
        lead = _lead(view.leads.of(module.name), f"module:{module.name}")
        rows.append((f"  module {module.name}", lead))
        for service in module.services:
            owner = service.owner or "none"
            if service.owner and service.owner not in view.roles:
                owner += " (no such role: `sdd role list`)"
            rows.append((f"    service {service.name}", f"owner: {owner}"))
    width = max(len(left) for left, _ in rows)
    return [f"{left.ljust(width)}  {right}".rstrip() for left, right in rows]


def _lead(lead: Lead | None, scope: str) -> str:
    if lead is None:
        return ""
    if lead.bound:
        return f"lead: {lead.role}"
    return f"lead: {lead.role} (no role has `scope: {scope}` yet)"
