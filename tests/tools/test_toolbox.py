from __future__ import annotations

import json
from typing import Any

import pytest

from sdd_git.providers.base import ToolSchema
from sdd_git.tools.catalog import TOOL_CLASSES
from sdd_git.tools.toolbox import LOOP_SCHEMAS, TOOLS, schemas

RUNNER_RUN = {name for name, cls in TOOL_CLASSES.items() if cls == "loop"} | {"handoff"}
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
