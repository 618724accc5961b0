"""`sdd scope`: add, remove and show the product's modules and services."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sdd_git.root import Root
from tests.conftest import SddRunner

EXAMPLE = """\
product: Expenses app  # her name for it
modules:
  - name: money
    services: [{name: expenses, owner: builder}, {name: billing, owner: qa-author}]
  - name: people
    services: [{name: accounts, owner: builder}]
"""


def add_role(root: Root, name: str, scope: str) -> None:
    path = root.sdd / "roles" / name / "ROLE.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nrole: {name}\njob: Plan {name} work\nlevel: 50\n"
        f"toolPolicy.delegation: deny\nproduces: plan\nscope: {scope}\n---\nRules.\n"
    )


def test_add_prints_the_typed_scope_and_says_what_happened(sdd: SddRunner, root: Root) -> None:
    added = sdd("scope", "add", "module", "money")
    assert added.code == 0, added.stderr
    assert added.stdout == "module:money\n"
    assert "added module money" in added.stderr
    service = sdd("scope", "add", "service", "expenses", "--module", "money", "--owner", "builder")
    assert service.code == 0, service.stderr
    assert service.stdout == "service:expenses\n"
    assert "owned by builder" in service.stderr
    assert "owner: builder" in root.product.read_text()


def test_show_draws_the_tree_with_owners_and_leads(sdd: SddRunner, root: Root) -> None:
    root.product.write_text(EXAMPLE)
    add_role(root, "money-lead", "module:money")
    shown = sdd("scope", "show")
    assert shown.code == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("product Expenses app")
    assert "lead: product-lead (no role has `scope: product` yet)" in lines[0]
    assert lines[1].startswith("  module money") and lines[1].endswith("lead: money-lead")
    assert lines[2].startswith("    service expenses") and lines[2].endswith("owner: builder")
    assert lines[3].endswith("owner: qa-author")
    assert lines[4].strip() == "module people"  # one service: no module lead
    assert lines[5].endswith("owner: builder")


def test_show_json_is_exactly_the_contract_shape(sdd: SddRunner, root: Root) -> None:
    root.product.write_text(EXAMPLE)
    shown = sdd("scope", "show", "--json")
    assert shown.code == 0, shown.stderr
    assert json.loads(shown.stdout) == {
        "lead": "product-lead",
        "modules": [
            {
                "name": "money",
                "lead": "module-lead",
                "services": [
                    {"name": "expenses", "owner": "builder"},
                    {"name": "billing", "owner": "qa-author"},
                ],
            },
            {
                "name": "people",
                "lead": None,
                "services": [{"name": "accounts", "owner": "builder"}],
            },
        ],
    }


def test_show_json_of_a_new_root_has_no_modules_and_no_lead(sdd: SddRunner) -> None:
    shown = sdd("scope", "show", "--json")
    assert shown.code == 0
    assert json.loads(shown.stdout) == {"lead": None, "modules": []}
    text = sdd("scope", "show")
    assert text.stdout == "product Expenses\n"
    assert "sdd scope add module NAME" in text.stderr


def test_the_2_plus_rules_as_she_builds_the_tree(sdd: SddRunner) -> None:
    def leads() -> tuple[object, list[object]]:
        shown = json.loads(sdd("scope", "show", "--json").stdout)
        return shown["lead"], [m["lead"] for m in shown["modules"]]

    sdd("scope", "add", "module", "money")
    sdd("scope", "add", "service", "expenses", "--module", "money")
    assert leads() == (None, [None])
    sdd("scope", "add", "service", "billing", "--module", "money")
    assert leads() == (None, ["module-lead"])
    sdd("scope", "add", "module", "people")
    assert leads() == ("product-lead", ["module-lead", None])


def test_remove_a_service_then_its_module(sdd: SddRunner, root: Root) -> None:
    root.product.write_text(EXAMPLE)
    refused = sdd("scope", "remove", "people")
    assert refused.code == 2
    assert "error: memory/product.yaml:5: module 'people' still holds services: accounts" in (
        refused.stderr
    )
    assert "hint: remove its services first (sdd scope remove accounts)" in refused.stderr
    assert sdd("scope", "remove", "accounts").code == 0
    gone = sdd("scope", "remove", "people")
    assert gone.code == 0, gone.stderr
    assert "removed module people" in gone.stderr
    assert "people" not in root.product.read_text()
    assert root.product.read_text().startswith("product: Expenses app  # her name for it\n")


def test_an_unknown_owner_is_refused_with_a_hint(sdd: SddRunner, root: Root) -> None:
    sdd("scope", "add", "module", "money")
    before = root.product.read_bytes()
    result = sdd("scope", "add", "service", "expenses", "--module", "money", "--owner", "nobody")
    assert result.code == 2
    assert "error: no role 'nobody' to own service 'expenses'" in result.stderr
    assert "hint: `sdd role list` shows the roles" in result.stderr
    assert root.product.read_bytes() == before


def test_duplicates_and_bad_names_are_refused_clearly(sdd: SddRunner, root: Root) -> None:
    root.product.write_text(EXAMPLE)
    twice = sdd("scope", "add", "service", "billing", "--module", "people")
    assert twice.code == 2
    assert (
        "error: memory/product.yaml:4: modules[0].services[1].name: 'billing' is already a "
        "service of module money"
    ) in twice.stderr
    assert "hint: names are unique across modules and services" in twice.stderr
    bad = sdd("scope", "add", "module", "Travel Desk")
    assert bad.code == 2
    assert "error: 'Travel Desk' is not a module name (memory/product.yaml, modules[].name)" in (
        bad.stderr
    )
    assert "(e.g. travel-desk)" in bad.stderr
    assert root.product.read_text() == EXAMPLE


def test_a_broken_product_yaml_is_reported_with_its_line_and_left_alone(
    sdd: SddRunner, root: Root
) -> None:
    broken = b"name: Expenses\nmodules:\n  - name: money\n    services: [oops\n"
    root.product.write_bytes(broken)
    for args in (("show",), ("add", "module", "people"), ("remove", "money")):
        result = sdd("scope", *args)
        assert result.code == 1, args
        assert result.stderr.startswith("error: memory/product.yaml:"), result.stderr
        assert "hint: " in result.stderr
        assert root.product.read_bytes() == broken


def test_scope_edits_refuse_inside_a_role_run(
    sdd: SddRunner, root: Root, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SDD_RUN_ID", "run-1")
    result = sdd("scope", "add", "module", "money")
    assert result.code == 1
    assert "person commands cannot run inside a role run" in result.stderr
    assert root.product.read_text() == "name: Expenses\nmodules: []\n"


def test_scope_show_reads_without_ruamel_or_git(root: Root) -> None:
    root.product.write_text(EXAMPLE)
    probe = (
        "import sys\n"
        "from sdd_git.cli.main import main\n"
        "try:\n    main(['scope', 'show'])\nexcept SystemExit:\n    pass\n"
        "print([m for m in ('ruamel', 'pygit2', 'git') if m in sys.modules], file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=root.path, capture_output=True, text=True, check=True
    )
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_help_lists_scope(sdd: SddRunner) -> None:
    helped = sdd("--help")
    assert "  scope " in helped.stdout
    assert "Name the product's modules and services, and their owners." in helped.stdout
