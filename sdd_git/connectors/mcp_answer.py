"""What the role reads of an MCP tool's answer: its text blocks as they are, every other block
said by type and size (an image is not something a role can read as text), and no more than
MAX_TEXT characters, the cut said so."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

MAX_TEXT = 1_000_000  # characters of a tool's answer the role reads; the rest is cut, and said so


def rendered(content: list[dict[str, Any]], structured: Any) -> str:
    """The tool's answer as text: its text blocks, and every other block said by type and size
    (an image is not something the role can read as text)."""
    parts: list[str] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind in ("image", "audio"):
            parts.append(f"[{kind}: {block.get('mimeType', '?')}, {size(block.get('data'))}]")
        elif kind == "resource_link":
            named = f" ({block['name']})" if block.get("name") else ""
            parts.append(f"[resource link: {block.get('uri', '?')}{named}]")
        elif kind == "resource":
            resource = block.get("resource") or {}
            uri, mime = resource.get("uri", "?"), resource.get("mimeType")
            if "text" in resource:
                parts.append(f"[resource {uri}]\n{resource['text']}")
            else:
                parts.append(f"[resource {uri}: {mime or '?'}, {size(resource.get('blob'))}]")
        else:
            parts.append(f"[{kind} content]")
    if not parts and structured is not None:
        parts.append(json.dumps(structured, indent=2, sort_keys=True))
    text = "\n".join(parts)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n[... cut: {len(text) - MAX_TEXT} more characters]"
    return text


def size(data: Any) -> str:
    if not isinstance(data, str):
        return "size unknown"
    try:
        count = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        count = len(data) * 3 // 4
    return f"{count} bytes"
