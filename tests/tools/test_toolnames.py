"""The plain table of tool names below tools/ says what the tools' own declarations say."""

from __future__ import annotations

from sdd_git import toolnames
from sdd_git.tools import catalog
from sdd_git.tools.toolbox import DECLARED, LOOP_SCHEMAS, TOOLS


def test_the_plain_table_is_the_declarations() -> None:
    assert list(toolnames.TOOL_CLASSES.items()) == list(catalog.TOOL_CLASSES.items())
    assert toolnames.WRITE_PATH_ARGS == catalog.WRITE_PATH_ARGS
    assert toolnames.READ_PATH_ARGS == catalog.READ_PATH_ARGS
    assert toolnames.CHANGE_DRAFTS == catalog.CHANGE_DRAFTS
    assert tuple(LOOP_SCHEMAS) == toolnames.LOOP_TOOLS


def test_the_connector_tools_are_declared() -> None:
    assert toolnames.CONNECTOR_TOOLS == catalog.CONNECTOR_TOOLS
    assert toolnames.CODE_HOST_TOOLS == catalog.CODE_HOST_TOOLS
    assert set(catalog.CONNECTOR_TOOLS) | set(catalog.CODE_HOST_TOOLS) <= set(TOOLS)


def test_every_declared_tool_has_its_name_in_its_schema() -> None:
    for name, tool in DECLARED.items():
        assert tool.name == name == tool.schema.name
