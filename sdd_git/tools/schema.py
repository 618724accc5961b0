"""The schema a tool offers a model: its arguments as a JSON Schema object, with bounds."""

from __future__ import annotations

from typing import Any

from sdd_git.providers.base import ToolSchema

# Upper bounds on the length of ids and names, in characters. They are in the schema, so a
# server that decodes under the schema's grammar (llama.cpp, vLLM, Ollama) cannot let a small
# model write an id for minutes; and Args refuses a longer value from any server. Kept small:
# llama.cpp spells a bound out as nested rules and refuses a grammar of a few thousand (a bound
# of 1,024 on a path crashed llama-cpp-python 0.3.36), so paths and free text have none.
ID_CHARS = 64  # a change, record, scenario, skill or tag name, a deploy target
NAME_CHARS = 100  # a branch or remote name


def bounded(chars: int, description: str) -> dict[str, Any]:
    """A string property of at most `chars` characters."""
    return {"type": "string", "maxLength": chars, "description": description}


def text_property(description: str) -> dict[str, Any]:
    """A string property."""
    return {"type": "string", "description": description}


def make_schema(
    name: str, description: str, properties: dict[str, Any], required: tuple[str, ...] = ()
) -> ToolSchema:
    return ToolSchema(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        },
    )


# Asked of every consequential tool: the person reads it on the stop.
PURPOSE = text_property("in plain words, why: shown to the person")
