from __future__ import annotations

import json
from typing import Any

import pytest

from sdd_git.providers.base import ToolSchema
from sdd_git.root import Root
from sdd_git.tools.base import ToolContext, ToolFailed
from sdd_git.tools.catalog import TOOL_CLASSES
from sdd_git.tools.toolbox import LOOP_SCHEMAS, TOOLS, schemas
from tests.tools import make_context

RUNNER_RUN = {name for name, cls in TOOL_CLASSES.items() if cls == "loop"}
JSON_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


def check_schema(node: Any, where: str) -> None:
    """A structural check of the JSON Schema subset the tools use."""
    assert isinstance(node, dict), where
    kinds = node.get("type") if isinstance(node.get("type"), list) else [node.get("type")]
    assert kinds and all(k in JSON_TYPES for k in kinds), f"{where}: type {node.get('type')!r}"
    if "description" in node:
        assert isinstance(node["description"], str) and node["description"].strip(), where
    if "object" in kinds:
        properties = node.get("properties")
        assert isinstance(properties, dict), f"{where}: properties"
        required = node.get("required", [])
        assert isinstance(required, list) and set(required) <= set(properties), where
        assert node.get("additionalProperties", False) in (False, True), where
        for key, value in properties.items():
            check_schema(value, f"{where}.{key}")
    if "array" in kinds:
        check_schema(node.get("items"), f"{where}[]")
    if "enum" in node:
        assert isinstance(node["enum"], list) and node["enum"], where


def test_every_executable_tool_has_an_executor_of_its_class() -> None:
    expected = {name for name in TOOL_CLASSES if name not in RUNNER_RUN}
    assert set(TOOLS) == expected
    for name, tool in TOOLS.items():
        assert tool.name == name
        assert tool.tool_class == TOOL_CLASSES[name], name
        assert tool.schema.name == name


def test_every_schema_is_a_json_schema_object() -> None:
    for name, schema in {**{n: t.schema for n, t in TOOLS.items()}, **LOOP_SCHEMAS}.items():
        assert isinstance(schema, ToolSchema)
        assert schema.parameters["type"] == "object", name
        check_schema(schema.parameters, name)
        assert schema.description.strip() and "\n" not in schema.description, name
        json.dumps(schema.parameters)


def test_purpose_is_required_where_the_person_is_asked() -> None:
    for name in ("write_file", "delete_file", "run_command"):
        parameters = TOOLS[name].schema.parameters
        assert "purpose" in parameters["required"], name
        assert parameters["properties"]["purpose"]["description"] == (
            "in plain words, why: shown to the person"
        )


def test_loop_schemas() -> None:
    assert set(LOOP_SCHEMAS) == {n for n, c in TOOL_CLASSES.items() if c == "loop"}
    gaps = LOOP_SCHEMAS["report_gaps"].parameters["properties"]["gaps"]["items"]
    assert gaps["required"] == ["id", "cites", "text"]
    assert LOOP_SCHEMAS["submit_revision"].parameters["required"] == ["changed", "text"]
    assert LOOP_SCHEMAS["submit_draft"].parameters["required"] == ["text"]


def test_schemas_by_name_in_order() -> None:
    picked = schemas(["git_status", "submit_draft", "read_file", "handoff"])
    assert [s.name for s in picked] == ["git_status", "submit_draft", "read_file", "handoff"]
    with pytest.raises(KeyError):
        schemas(["format_disk"])


def bounded_arguments() -> list[tuple[str, str, int, bool]]:
    """(tool, argument, limit, a list of texts) for every length bound in a tool's schema."""
    found = []
    for name, tool in TOOLS.items():
        for key, prop in tool.schema.parameters["properties"].items():
            if "maxLength" in prop:
                found.append((name, key, prop["maxLength"], False))
            elif "maxLength" in (prop.get("items") or {}):
                found.append((name, key, prop["items"]["maxLength"], True))
    return found


def test_ids_and_names_are_bounded_in_the_schema_and_no_bound_is_large() -> None:
    found = {(tool, key): limit for tool, key, limit, _ in bounded_arguments()}
    for where in [
        ("draft_reading", "change"),
        ("draft_scenarios", "change"),
        ("read_record", "id"),
        ("propose_qa_result", "scenario"),
        ("git_tag", "name"),
        ("git_push", "branch"),
        ("use_skill", "name"),
    ]:
        assert where in found, where
    # llama.cpp spells a bound out as nested grammar rules and aborts on about 1,000
    assert max(found.values()) <= 500


@pytest.mark.parametrize(("tool", "key", "limit", "listed"), bounded_arguments())
def test_an_argument_over_its_bound_is_refused_before_the_tool_runs(
    tool: str, key: str, limit: int, listed: bool, root: Root
) -> None:
    ctx: ToolContext = make_context(root)
    long = "a" * (limit + 1)
    with pytest.raises(ToolFailed, match=f"it takes at most {limit:,}"):
        TOOLS[tool].run({key: [long] if listed else long}, ctx)
    at_limit = "a" * limit  # the bound itself is fine: the tool goes on to its own checks
    try:
        TOOLS[tool].run({key: [at_limit] if listed else at_limit}, ctx)
    except ToolFailed as exc:
        assert "at most" not in str(exc)
