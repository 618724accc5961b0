"""The product's scopes: its modules and their services, named by the person in
`memory/product.yaml`, and the leads that follow from them.

```yaml
product: Expenses app          # `sdd init` writes `name:`; either key names the product
modules:
  - name: money
    services: [{name: expenses, owner: expenses-dev}, {name: billing, owner: billing-dev}]
```

Leads are derived, never written: a module lead exists only where a module has 2+ services, a
product lead only where the product has 2+ modules. The lead is the role whose ROLE.md says
`scope: module:<name>` (or `scope: product`); where none does yet, the shipped template's name
stands in, so the tree always says who would plan.

Edits are person writes (`person_write`: never inside a role run, under the record lock) and
ruamel.yaml round trips that keep her comments, key order and layout; a file that does not read
is reported with its line and never rewritten.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from sdd_git.atomicfile import write_text_atomic
from sdd_git.errors import RecordError, UsageError
from sdd_git.records.yamlcomments import (
    append_item,
    comments_kept,
    editor_for,
    list_at,
    remove_item,
)
from sdd_git.records.yamllines import KeyPath, key_text, line_of
from sdd_git.root import Root
from sdd_git.sink import person_write
from sdd_git.valuekind import shown_kind as _kind
from sdd_git.yamlio import display, dump_yaml, parse_yaml, round_trip_load

if TYPE_CHECKING:
    from sdd_git.roles.profile import RoleProfile

# Like a role name (`module:<name>` must match a ROLE.md's scope), but never starting with '-',
# which would read as an option on the command line.
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}\Z")  # \Z: `$` lets a final newline through
PRODUCT = "product"
KINDS = ("product", "module", "service")
MODULE_LEAD_TEMPLATE = "module-lead"
PRODUCT_LEAD_TEMPLATE = "product-lead"
_MODULE_KEYS = ("name", "services")
_SERVICE_KEYS = ("name", "owner")
_NAME_RULE = "lowercase letters, digits and '-', starting with a letter or digit, at most 40"


@dataclass(frozen=True)
class Service:
    name: str
    owner: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "owner": self.owner}


@dataclass(frozen=True)
class Module:
    name: str
    services: tuple[Service, ...] = ()


@dataclass(frozen=True)
class ScopeTree:
    """What `memory/product.yaml` says, in its order."""

    product: str | None
    modules: tuple[Module, ...] = ()
    product_key: str = "name"  # the key the file names the product with (`product` or `name`)

    def module(self, name: str) -> Module | None:
        return next((m for m in self.modules if m.name == name), None)

    def service(self, name: str) -> Service | None:
        return next((s for m in self.modules for s in m.services if s.name == name), None)

    def holder(self, service: str) -> Module | None:
        """The module that holds the service named `service`."""
        return next((m for m in self.modules if any(s.name == service for s in m.services)), None)


class Scope(NamedTuple):
    """One scope, resolved; it unpacks as `kind, name`. A service's module and owner are in the
    tree (`tree.holder(name)`, `tree.service(name)`)."""

    kind: str  # one of KINDS
    name: str  # "product" for the product: plan nodes use bare names

    @property
    def typed(self) -> str:
        """The form a ROLE.md's or a spec's `scope:` uses."""
        return PRODUCT if self.kind == PRODUCT else f"{self.kind}:{self.name}"


@dataclass(frozen=True)
class Lead:
    role: str
    bound: bool  # False: no role names this scope yet; the shipped template's name stands in


@dataclass(frozen=True)
class Leads:
    product: Lead | None
    modules: tuple[tuple[str, Lead | None], ...] = ()

    def of(self, module: str) -> Lead | None:
        return next((lead for name, lead in self.modules if name == module), None)


@dataclass(frozen=True)
class ScopeView:
    """The tree with its leads, and which roles exist (to flag an owner that is not one)."""

    tree: ScopeTree
    leads: Leads
    roles: frozenset[str]
    warnings: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "lead": _role(self.leads.product),
            "modules": [
                {
                    "name": module.name,
                    "lead": _role(self.leads.of(module.name)),
                    "services": [service.as_dict() for service in module.services],
                }
                for module in self.tree.modules
            ],
        }


def _role(lead: Lead | None) -> str | None:
    return lead.role if lead is not None else None


# --- reading -----------------------------------------------------------------------------------


def load(root: Root) -> ScopeTree:
    """The scope tree; a product with no `memory/product.yaml` has no modules yet."""
    path = root.product
    if not path.exists():
        return ScopeTree(product=None)
    return _parse(_read_text(path), path)


def _read_text(path: Path) -> str:
    """`ROOT/memory/product.yaml`, read with no link followed."""
    from sdd_git.yamlio import read_text

    return read_text(path, path.parents[1])


def _parse(text: str, path: Path) -> ScopeTree:
    data = parse_yaml(text, path)
    if data is None:
        return ScopeTree(product=None)
    where = _Where(text, path)
    if not isinstance(data, dict):
        raise where.error((), f"expected a mapping (product:, modules:), found {_kind(data)}")
    product_key = PRODUCT if PRODUCT in data else "name"
    product = data.get(product_key)
    if product is not None and not isinstance(product, str):
        raise where.error(
            (product_key,),
            f"the product's name is {_kind(product)}, not text",
            hint=f'put it in quotes ({product_key}: "...") so that YAML reads it as text',
        )
    raw_modules = data.get("modules")
    if raw_modules is None:
        raw_modules = []
    if not isinstance(raw_modules, list):
        raise where.error(("modules",), f"expected a list of modules, found {_kind(raw_modules)}")
    seen: dict[str, str] = {}  # name -> what it already names, for duplicates
    modules = []
    for index, raw in enumerate(raw_modules):
        at: KeyPath = ("modules", index)
        fields = where.entry(at, raw, _MODULE_KEYS, "module")
        name = where.name((*at, "name"), fields.get("name"), seen, "a module")
        raw_services = fields.get("services")
        if raw_services is None:
            raw_services = []
        if not isinstance(raw_services, list):
            raise where.error(
                (*at, "services"), f"expected a list of services, found {_kind(raw_services)}"
            )
        services = []
        for number, raw_service in enumerate(raw_services):
            spot: KeyPath = (*at, "services", number)
            entry = where.entry(spot, raw_service, _SERVICE_KEYS, "service")
            service_name = where.name(
                (*spot, "name"), entry.get("name"), seen, f"a service of module {name}"
            )
            owner = entry.get("owner")
            if owner is not None and not (isinstance(owner, str) and owner.strip()):
                raise where.error(
                    (*spot, "owner"),
                    f"the owner is {_kind(owner)}, not a role name",
                    hint="name a role (`sdd role list` shows them), or leave the key out",
                )
            services.append(Service(service_name, owner))
        modules.append(Module(name, tuple(services)))
    return ScopeTree(product, tuple(modules), product_key)


class _Where:
    """Turns a problem at a key path into an error naming the file, the line and the key.

    The file is read with the fast loader, which keeps no positions; lines are looked up only
    when something is wrong."""

    def __init__(self, text: str, path: Path) -> None:
        self.text = text
        self.path = path

    def line(self, at: KeyPath) -> int:
        return line_of(self.text, at)

    def error(self, at: KeyPath, problem: str, hint: str | None = None) -> RecordError:
        key = f" {key_text(at)}:" if at else ""
        return RecordError(
            f"{display(self.path)}:{self.line(at)}:{key} {problem}",
            hint=hint or f"fix it in {display(self.path)}, then run the command again",
        )

    def entry(self, at: KeyPath, raw: object, keys: tuple[str, ...], what: str) -> dict[str, Any]:
        if not isinstance(raw, dict):
            example = "{name: money, services: []}" if what == "module" else "{name: billing}"
            raise self.error(at, f"a {what} is a mapping like {example}, found {_kind(raw)}")
        for key in raw:
            if key not in keys:
                raise self.error(
                    (*at, str(key)),
                    f"a {what} has no key {key!r}",
                    hint=f"a {what} has only {', '.join(keys)}; fix the key in "
                    f"{display(self.path)}",
                )
        return raw

    def name(self, at: KeyPath, raw: object, seen: dict[str, str], what: str) -> str:
        if raw is None:
            raise self.error(at[:-1], f"{what.split(' of ')[0]} with no name")
        if not isinstance(raw, str):
            raise self.error(
                at,
                f"{_kind(raw)} is not a name",
                hint='put the name in quotes (name: "...") so that YAML reads it as text',
            )
        if raw == PRODUCT or not NAME_PATTERN.match(raw):
            problem = (
                "'product' names the whole product"
                if raw == PRODUCT
                else f"{raw!r} is not a scope name"
            )
            raise self.error(
                at, problem, hint=f"use {_NAME_RULE} characters (e.g. {suggest_name(raw)})"
            )
        if raw in seen:
            raise self.error(
                at,
                f"{raw!r} is already {seen[raw]}",
                hint="names are unique across modules and services; rename one of them in "
                f"{display(self.path)}",
            )
        seen[raw] = what
        return raw


# --- resolving ---------------------------------------------------------------------------------


def scope_of(tree: ScopeTree, name: str, where: str = "memory/product.yaml") -> Scope:
    """The scope a typed form (`service:X`, `module:X`, `product`) or a bare name (`X`) names."""
    kind, _, bare = name.partition(":") if ":" in name else ("", "", name)
    if name == PRODUCT:
        return Scope(PRODUCT, PRODUCT)
    if kind and kind not in ("module", "service"):
        raise UsageError(
            f"{name!r} is not a scope",
            hint="name a scope as product, module:NAME, service:NAME or a bare NAME",
        )
    if not bare:
        raise UsageError("the scope's name is empty", hint="name a module or a service")
    module = tree.module(bare) if kind in ("", "module") else None
    if module is not None:
        return Scope("module", module.name)
    service = tree.service(bare) if kind in ("", "service") else None
    if service is not None:
        return Scope("service", service.name)
    other = tree.service(bare) if kind == "module" else tree.module(bare)
    if other is not None:
        shown = "a service" if kind == "module" else "a module"
        raise UsageError(
            f"{bare!r} is {shown}, not a {kind}",
            hint=f"name it as {'service' if kind == 'module' else 'module'}:{bare} or {bare}",
        )
    what = kind or "module or service"
    raise RecordError(
        f"no {what} {bare!r} in {where}",
        hint="`sdd scope show` lists the scopes; "
        + (
            f"`sdd scope add service {bare} --module M` adds a service"
            if kind == "service"
            else f"`sdd scope add module {bare}` adds a module"
        ),
    )


# --- leads -------------------------------------------------------------------------------------


def leads_among(tree: ScopeTree, roles: Iterable[RoleProfile]) -> Leads:
    """The leads the 2+ rule gives, each the first role bound to that scope, else the template."""
    bound: dict[str, str] = {}
    for role in roles:
        if role.scope and role.scope not in bound:
            bound[role.scope] = role.name

    def lead(scope: str, template: str) -> Lead:
        role = bound.get(scope)
        return Lead(role, True) if role is not None else Lead(template, False)

    product = lead(PRODUCT, PRODUCT_LEAD_TEMPLATE) if len(tree.modules) >= 2 else None
    modules = tuple(
        (
            module.name,
            lead(f"module:{module.name}", MODULE_LEAD_TEMPLATE)
            if len(module.services) >= 2
            else None,
        )
        for module in tree.modules
    )
    return Leads(product, modules)


def view(root: Root) -> ScopeView:
    """The tree, its leads and the roles there are: what `sdd scope show` draws."""
    from sdd_git.roles.registry import load_registry

    tree = load(root)
    registry = load_registry(root)
    return ScopeView(
        tree,
        leads_among(tree, registry.roles),
        frozenset(role.name for role in registry.roles),
        registry.warnings,
    )


# --- the person's edits ------------------------------------------------------------------------


def add_module(root: Root, name: str) -> Module:
    _check_new_name(root, name, "module", "modules[].name")
    with person_write(root):
        text, tree = _read_for_write(root)
        _refuse_taken(root, text, tree, name)
        module = Module(name)

        def edit(document: Any) -> None:
            append_item(list_at(document, "modules"), {"name": name, "services": []})

        _write(root, text, replace(tree, modules=(*tree.modules, module)), edit)
        return module


def add_service(root: Root, name: str, module: str, owner: str | None = None) -> Service:
    _check_new_name(root, name, "service", "modules[].services[].name")
    if owner is not None:
        _check_owner(root, owner, name)
    with person_write(root):
        text, tree = _read_for_write(root)
        typed = module if ":" in module else f"module:{module}"
        holder = scope_of(tree, typed, display(root.product))
        if holder.kind != "module":
            raise UsageError(
                f"{module!r} is not a module", hint="name the module with --module NAME"
            )
        _refuse_taken(root, text, tree, name)
        service = Service(name, owner)
        index = next(i for i, m in enumerate(tree.modules) if m.name == holder.name)
        target = tree.modules[index]
        changed = replace(target, services=(*target.services, service))
        after = replace(tree, modules=tuple(changed if m is target else m for m in tree.modules))

        def edit(document: Any) -> None:
            entry = {"name": name} if owner is None else {"name": name, "owner": owner}
            append_item(list_at(document["modules"][index], "services"), entry)

        _write(root, text, after, edit)
        return service


def remove(root: Root, name: str) -> Scope:
    """Remove a service, or a module that holds none; returns what went."""
    with person_write(root):
        text, tree = _read_for_write(root)
        path = root.product
        scope = scope_of(tree, name, display(path))
        if scope.kind == PRODUCT:
            raise UsageError(
                "the product itself is not removed",
                hint="name a module or a service (`sdd scope show` lists them)",
            )
        if scope.kind == "module":
            index = next(i for i, m in enumerate(tree.modules) if m.name == scope.name)
            module = tree.modules[index]
            if module.services:
                names = ", ".join(s.name for s in module.services)
                first = module.services[0].name
                raise UsageError(
                    f"{display(path)}:{line_of(text, ('modules', index))}: module "
                    f"{module.name!r} still holds services: {names}",
                    hint=f"remove its services first (sdd scope remove {first}), then the module",
                )
            at: KeyPath = ("modules", index)
            after = replace(tree, modules=tuple(m for m in tree.modules if m is not module))

            def edit(document: Any) -> None:
                remove_item(document, "modules", index)

        else:
            holder = tree.holder(scope.name)
            index = next(i for i, m in enumerate(tree.modules) if m is holder)
            module = tree.modules[index]
            number = next(i for i, s in enumerate(module.services) if s.name == scope.name)
            at = ("modules", index, "services", number)
            changed = replace(
                module, services=module.services[:number] + module.services[number + 1 :]
            )
            after = replace(
                tree, modules=tuple(changed if m is module else m for m in tree.modules)
            )

            def edit(document: Any) -> None:
                remove_item(document["modules"][index], "services", number)

        _write(root, text, after, edit, removed=at)
        return scope


def suggest_name(text: str) -> str:
    """A valid name close to `text`, for a hint."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-")
    return slug if slug and slug != PRODUCT else "billing"


def _check_new_name(root: Root, name: str, kind: str, key: str) -> None:
    if name == PRODUCT:
        raise UsageError(
            f"'product' names the whole product; a {kind} needs another name",
            hint=f"pick another name for the {kind}",
        )
    if not NAME_PATTERN.match(name):
        raise UsageError(
            f"{name!r} is not a {kind} name ({display(root.product)}, {key})",
            hint=f"use {_NAME_RULE} characters (e.g. {suggest_name(name)})",
        )


def _check_owner(root: Root, owner: str, service: str) -> None:
    from sdd_git.roles.registry import load_registry

    if load_registry(root).get(owner) is None:
        raise UsageError(
            f"no role {owner!r} to own service {service!r}",
            hint="`sdd role list` shows the roles; `sdd role create NAME --job ...` adds one",
        )


def _read_for_write(root: Root) -> tuple[str, ScopeTree]:
    """The file's text and tree; a file that does not read stops the edit before anything."""
    path = root.product
    if not path.exists():
        # What `sdd init` would have written.
        text = dump_yaml({"name": root.path.name, "modules": []})
        return text, _parse(text, path)
    text = _read_text(path)
    return text, _parse(text, path)


def _refuse_taken(root: Root, text: str, tree: ScopeTree, name: str) -> None:
    where = display(root.product)
    for index, module in enumerate(tree.modules):
        if module.name == name:
            at: KeyPath = ("modules", index, "name")
            raise UsageError(
                f"{where}:{line_of(text, at)}: {key_text(at)}: {name!r} is already a module",
                hint="names are unique across modules and services; pick another name "
                "(`sdd scope show` lists them)",
            )
        for number, service in enumerate(module.services):
            if service.name == name:
                at = ("modules", index, "services", number, "name")
                raise UsageError(
                    f"{where}:{line_of(text, at)}: {key_text(at)}: {name!r} is already a "
                    f"service of module {module.name}",
                    hint="names are unique across modules and services; pick another name "
                    "(`sdd scope show` lists them)",
                )


def _write(
    root: Root,
    text: str,
    after: ScopeTree,
    edit: Callable[[Any], None],
    removed: KeyPath | None = None,
) -> None:
    """Apply `edit` to a round-trip load of `text`, check the result, and write it atomically."""
    from ruamel.yaml.comments import CommentedMap

    path = root.product
    editor = editor_for(text, path)
    document = round_trip_load(editor, text, path)
    if document is None:
        document = CommentedMap()
    edit(document)
    buffer = io.StringIO()
    editor.dump(document, buffer)
    new_text = buffer.getvalue()
    cannot = RecordError(
        f"{display(path)}: could not edit this file without changing something else; "
        "nothing was written",
        hint="make the change by hand, then `sdd scope show` to check it",
    )
    try:
        written = _parse(new_text, path)
    except RecordError:
        raise cannot from None
    if written.modules != after.modules or _others(text, path) != _others(new_text, path):
        raise cannot
    if not comments_kept(text, new_text, removed):
        raise RecordError(
            f"{display(path)}: could not edit this file without losing one of your comments; "
            "nothing was written",
            hint="make the change by hand, then `sdd scope show` to check it",
        )
    from sdd_git.trust import pending

    existed = path.is_file()
    before = pending.yaml_surface(path, root.path) if existed else None
    write_text_atomic(path, new_text)
    pending.record_product(root, before, "sdd scope", existed=existed)


def _others(text: str, path: Path) -> dict[str, Any]:
    data = parse_yaml(text, path) or {}
    return {key: value for key, value in data.items() if key != "modules"}
