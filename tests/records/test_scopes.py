"""The scope tree in memory/product.yaml: the person's edits, the derived leads, typed scopes."""

from __future__ import annotations

import pytest
import yaml

from sdd_git import lockfile
from sdd_git.errors import InsideRunError, LockError, RecordError, SddError, UsageError
from sdd_git.records import scopes
from sdd_git.records.scopes import Module, Scope, ScopeTree, Service
from sdd_git.root import Root

CONTRACT_EXAMPLE = """\
product: Expenses app
modules:
  - name: money
    services: [{name: expenses, owner: builder}, {name: billing, owner: qa-author}]
  - name: people
    services: [{name: accounts, owner: builder}]
"""

COMMENTED = """\
# The product, in her words.
product: Expenses app   # what she calls it
modules:
  # Money comes first.
  - name: money   # the money side
    services:
      - name: expenses  # the one she uses daily
        owner: builder
      # billing later
# closing note: keep this last
"""


def add_role(root: Root, name: str, scope: str) -> None:
    path = root.sdd / "roles" / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}\njob: Plan {name} work\nlevel: 50\n"
        f"toolPolicy.delegation: deny\nproduces: plan\nscope: {scope}\n---\nRules.\n"
    )


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


# --- reading and writing -------------------------------------------------------------------


def test_sdd_init_s_name_key_is_the_product_name_and_stays_the_key(root: Root) -> None:
    assert root.product.read_text() == "name: Expenses\nmodules: []\n"
    assert scopes.load(root) == ScopeTree("Expenses", (), "name")
    scopes.add_module(root, "money")
    data = yaml.safe_load(root.product.read_text())
    assert data == {"name": "Expenses", "modules": [{"name": "money", "services": []}]}


def test_a_product_key_file_reads_as_contract_shows_and_keeps_its_key(root: Root) -> None:
    root.product.write_text(CONTRACT_EXAMPLE)
    tree = scopes.load(root)
    assert tree == ScopeTree(
        "Expenses app",
        (
            Module("money", (Service("expenses", "builder"), Service("billing", "qa-author"))),
            Module("people", (Service("accounts", "builder"),)),
        ),
        "product",
    )
    scopes.add_service(root, "payroll", "people")
    text = root.product.read_text()
    assert text.startswith("product: Expenses app\n")
    assert "name: Expenses app" not in text
    # Untouched lines stay byte for byte; the flow list grows in its own style.
    assert text.splitlines()[:4] == CONTRACT_EXAMPLE.splitlines()[:4]
    assert "services: [{name: accounts, owner: builder}, {name: payroll}]" in text


def test_add_then_remove_edits_the_tree(root: Root) -> None:
    assert scopes.add_module(root, "money") == Module("money")
    assert scopes.add_service(root, "expenses", "money", owner="builder") == Service(
        "expenses", "builder"
    )
    scopes.add_service(root, "billing", "module:money")
    scopes.add_module(root, "people")
    assert scopes.load(root).modules == (
        Module("money", (Service("expenses", "builder"), Service("billing"))),
        Module("people"),
    )
    assert scopes.remove(root, "billing") == Scope("service", "billing")
    assert scopes.remove(root, "module:people") == Scope("module", "people")
    assert scopes.load(root).modules == (Module("money", (Service("expenses", "builder"),)),)


def test_a_missing_product_file_has_no_scopes_and_an_add_makes_it(root: Root) -> None:
    root.product.unlink()
    assert scopes.load(root) == ScopeTree(None)
    scopes.add_module(root, "money")
    data = yaml.safe_load(root.product.read_text())
    assert data == {"name": "product", "modules": [{"name": "money", "services": []}]}


def test_names_yaml_would_read_as_something_else_are_quoted(root: Root) -> None:
    scopes.add_module(root, "no")
    scopes.add_service(root, "2024", "no")
    assert scopes.load(root).modules == (Module("no", (Service("2024"),)),)


def test_comments_in_product_yaml_survive_an_add(root: Root) -> None:
    root.product.write_text(COMMENTED)
    scopes.add_service(root, "billing", "money", owner="qa-author")
    scopes.add_module(root, "people")
    text = root.product.read_text()
    assert comment_lines(text) == comment_lines(COMMENTED)
    assert "product: Expenses app   # what she calls it" in text
    assert "- name: expenses  # the one she uses daily" in text
    assert text.splitlines()[-1] == "# closing note: keep this last"
    assert [m.name for m in scopes.load(root).modules] == ["money", "people"]


def test_comments_around_a_removed_entry_stay(root: Root) -> None:
    root.product.write_text(COMMENTED)
    scopes.add_module(root, "people")
    scopes.remove(root, "expenses")
    text = root.product.read_text()
    for comment in ("# The product, in her words.", "# Money comes first.", "# billing later"):
        assert comment in text
    assert text.splitlines()[-1] == "# closing note: keep this last"
    assert "the one she uses daily" not in text  # the entry's own comment goes with it
    assert scopes.load(root).modules == (Module("money"), Module("people"))


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Money", "a_b", "-money", "money!", "x" * 41, ""])
def test_bad_names_are_refused_with_the_file_key_and_a_fix(root: Root, name: str) -> None:
    before = root.product.read_bytes()
    with pytest.raises(UsageError) as caught:
        scopes.add_module(root, name)
    assert "memory/product.yaml" in caught.value.message
    assert "modules[].name" in caught.value.message
    assert "lowercase letters, digits and '-'" in (caught.value.hint or "")
    assert root.product.read_bytes() == before


def test_product_is_no_module_or_service_name(root: Root) -> None:
    with pytest.raises(UsageError, match="'product' names the whole product"):
        scopes.add_module(root, "product")
    scopes.add_module(root, "money")
    with pytest.raises(UsageError, match="'product' names the whole product"):
        scopes.add_service(root, "product", "money")


def test_a_bad_service_name_names_its_key_and_suggests_one(root: Root) -> None:
    scopes.add_module(root, "money")
    with pytest.raises(UsageError) as caught:
        scopes.add_service(root, "Billing Desk", "money")
    assert "modules[].services[].name" in caught.value.message
    assert "billing-desk" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("call", "key", "what"),
    [
        (lambda r: scopes.add_module(r, "money"), "modules[0].name", "already a module"),
        (lambda r: scopes.add_module(r, "billing"), "modules[0].services[1].name", "service"),
        (
            lambda r: scopes.add_service(r, "accounts", "money"),
            "modules[1].services[0].name",
            "already a service of module people",
        ),
        (lambda r: scopes.add_service(r, "people", "money"), "modules[1].name", "a module"),
    ],
)
def test_duplicates_across_modules_and_services_are_refused(
    root: Root, call: object, key: str, what: str
) -> None:
    root.product.write_text(CONTRACT_EXAMPLE)
    before = root.product.read_bytes()
    with pytest.raises(UsageError) as caught:
        call(root)  # type: ignore[operator]
    message = caught.value.message
    assert message.startswith("memory/product.yaml:") or "/memory/product.yaml:" in message
    assert key in message and what in message
    assert "unique across modules and services" in (caught.value.hint or "")
    assert root.product.read_bytes() == before


def test_a_duplicate_written_by_hand_is_reported_with_its_line(root: Root) -> None:
    root.product.write_text(CONTRACT_EXAMPLE + "  - name: billing\n")
    with pytest.raises(RecordError) as caught:
        scopes.load(root)
    assert ":7: modules[2].name: 'billing' is already a service of module money" in (
        caught.value.message
    )
    assert "rename one of them" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "name: X\nmodules:\n  - name: Money\n",
            ":3: modules[0].name: 'Money' is not a scope name",
        ),
        ("name: X\nmodules:\n  - name: m\n    services:\n      - {name: s, ownr: b}\n", ":5:"),
        ("name: X\nmodules: {money: []}\n", ":2: modules: expected a list"),
        ("name: X\nmodules:\n  - name: 2024\n", ":3: modules[0].name: 2024 (a number)"),
    ],
)
def test_a_bad_hand_edit_is_reported_with_line_and_key(root: Root, text: str, where: str) -> None:
    root.product.write_text(text)
    with pytest.raises(RecordError) as caught:
        scopes.load(root)
    assert where in caught.value.message
    assert caught.value.hint


def test_a_broken_yaml_file_is_left_byte_identical_and_named_with_its_line(root: Root) -> None:
    broken = b"name: Expenses\nmodules:\n  - name: money\n    services: [unclosed\n# note\n"
    root.product.write_bytes(broken)
    attempts = (
        lambda: scopes.add_module(root, "people"),
        lambda: scopes.add_service(root, "expenses", "money"),
        lambda: scopes.remove(root, "money"),
        lambda: scopes.load(root),
    )
    for attempt in attempts:
        with pytest.raises(RecordError) as caught:
            attempt()
        assert "memory/product.yaml:" in caught.value.message
        line = caught.value.message.split("product.yaml:")[1].split(":")[0]
        assert line.isdigit()
        assert root.product.read_bytes() == broken


def test_the_owner_must_be_a_known_role(root: Root) -> None:
    scopes.add_module(root, "money")
    before = root.product.read_bytes()
    with pytest.raises(UsageError) as caught:
        scopes.add_service(root, "expenses", "money", owner="expenses-dev")
    assert "no role 'expenses-dev'" in caught.value.message
    assert "sdd role list" in (caught.value.hint or "")
    assert root.product.read_bytes() == before
    add_role(root, "expenses-dev", "service:expenses")
    assert scopes.add_service(root, "expenses", "money", owner="expenses-dev").owner == (
        "expenses-dev"
    )


def test_a_module_with_services_is_not_removed(root: Root) -> None:
    root.product.write_text(CONTRACT_EXAMPLE)
    with pytest.raises(UsageError) as caught:
        scopes.remove(root, "money")
    assert "still holds services: expenses, billing" in caught.value.message
    assert "sdd scope remove expenses" in (caught.value.hint or "")
    assert root.product.read_text() == CONTRACT_EXAMPLE


def test_a_service_goes_into_a_module_only(root: Root) -> None:
    root.product.write_text(CONTRACT_EXAMPLE)
    with pytest.raises(SddError, match="not a module"):
        scopes.add_service(root, "payroll", "expenses")
    with pytest.raises(RecordError, match="no module 'travel'"):
        scopes.add_service(root, "payroll", "travel")


def test_edits_are_person_writes(root: Root, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDD_RUN_ID", "run-1")
    with pytest.raises(InsideRunError):
        scopes.add_module(root, "money")
    monkeypatch.delenv("SDD_RUN_ID")
    monkeypatch.setattr(lockfile, "DEFAULT_WAIT_SECONDS", 0.1)
    with lockfile.hold(root.record_lock), pytest.raises(LockError):
        scopes.add_module(root, "money")
    assert root.product.read_text() == "name: Expenses\nmodules: []\n"


# --- leads -----------------------------------------------------------------------------------


def test_one_module_with_one_service_has_no_leads(root: Root) -> None:
    scopes.add_module(root, "money")
    scopes.add_service(root, "expenses", "money", owner="builder")
    assert scopes.view(root).as_json() == {
        "lead": None,
        "modules": [
            {
                "name": "money",
                "lead": None,
                "services": [{"name": "expenses", "owner": "builder"}],
            }
        ],
    }


def test_a_module_with_two_services_has_a_module_lead(root: Root) -> None:
    scopes.add_module(root, "money")
    scopes.add_service(root, "expenses", "money", owner="builder")
    scopes.add_service(root, "billing", "money")
    shown = scopes.view(root).as_json()
    assert shown["lead"] is None
    assert shown["modules"][0]["lead"] == "module-lead"  # the template, until a role binds


def test_two_modules_have_a_product_lead(root: Root) -> None:
    scopes.add_module(root, "money")
    scopes.add_module(root, "people")
    shown = scopes.view(root).as_json()
    assert shown["lead"] == "product-lead"
    assert [m["lead"] for m in shown["modules"]] == [None, None]


def test_a_lead_is_the_role_bound_to_that_scope(root: Root) -> None:
    root.product.write_text(CONTRACT_EXAMPLE)
    add_role(root, "money-lead", "module:money")
    add_role(root, "people-lead", "module:people")  # people has one service: no lead yet
    add_role(root, "head", "product")
    view = scopes.view(root)
    assert view.as_json()["lead"] == "head"
    assert [m["lead"] for m in view.as_json()["modules"]] == ["money-lead", None]
    assert view.leads.of("money") == scopes.Lead("money-lead", bound=True)
    assert view.leads.product == scopes.Lead("head", bound=True)


def test_leads_among_is_the_2_plus_rule_alone() -> None:
    one = ScopeTree("P", (Module("a", (Service("s"),)),))
    assert scopes.leads_among(one, []) == scopes.Leads(None, (("a", None),))
    two = ScopeTree("P", (Module("a", (Service("s"), Service("t"))), Module("b")))
    leads = scopes.leads_among(two, [])
    assert leads.product == scopes.Lead("product-lead", bound=False)
    assert leads.of("a") == scopes.Lead("module-lead", bound=False)
    assert leads.of("b") is None


# --- typed scopes ----------------------------------------------------------------------------


TREE = ScopeTree(
    "Expenses app",
    (
        Module("money", (Service("expenses", "builder"), Service("billing"))),
        Module("people", (Service("accounts", "builder"),)),
    ),
)


@pytest.mark.parametrize(
    ("text", "kind", "name", "typed"),
    [
        ("product", "product", "product", "product"),
        ("module:money", "module", "money", "module:money"),
        ("service:billing", "service", "billing", "service:billing"),
        ("money", "module", "money", "module:money"),
        ("accounts", "service", "accounts", "service:accounts"),
    ],
)
def test_scope_of_resolves_typed_forms_and_bare_names(
    text: str, kind: str, name: str, typed: str
) -> None:
    scope = scopes.scope_of(TREE, text)
    assert (scope.kind, scope.name, scope.typed) == (kind, name, typed)
    got_kind, got_name = scope  # it unpacks, for routing
    assert (got_kind, got_name) == (kind, name)


def test_scope_of_a_service_finds_its_module_and_owner_in_the_tree() -> None:
    scope = scopes.scope_of(TREE, "service:expenses")
    assert TREE.holder(scope.name) == TREE.modules[0]
    assert TREE.service(scope.name) == Service("expenses", "builder")


@pytest.mark.parametrize(
    ("text", "error", "words"),
    [
        ("module:expenses", UsageError, "'expenses' is a service, not a module"),
        ("service:money", UsageError, "'money' is a module, not a service"),
        ("service:payroll", RecordError, "no service 'payroll' in memory/product.yaml"),
        ("travel", RecordError, "no module or service 'travel'"),
        ("team:money", UsageError, "is not a scope"),
        ("module:", UsageError, "empty"),
    ],
)
def test_scope_of_refuses_what_is_not_there(text: str, error: type, words: str) -> None:
    with pytest.raises(error) as caught:
        scopes.scope_of(TREE, text)
    assert words in caught.value.message
    assert caught.value.hint


def test_a_scope_name_fits_a_role_file_s_scope(root: Root) -> None:
    # The typed form a role binds with must load as a ROLE.md scope.
    scopes.add_module(root, "money-2")
    add_role(root, "lead-2", f"module:{scopes.load(root).modules[0].name}")
    from sdd_git.roles.registry import load_registry

    role = load_registry(root).get("lead-2")
    assert role is not None and role.scope == "module:money-2"
