"""The scripted provider: replays a YAML file of replies instead of calling a model.

It is the test seam and the offline demo. Item N answers the Nth provider call of the run,
counted across resumes. With SDD_SCRIPT_TRANSCRIPT set, each call appends one JSON line with the
role, run, messages and tools exactly as a real model would have received them.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sdd_git.providers.base import ProviderError, ProviderReply, ProviderRequest, ToolCall

TRANSCRIPT_ENV = "SDD_SCRIPT_TRANSCRIPT"


class ScriptProvider:
    name = "script"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.model = f"script:{path.name}"
        self._calls: list[Any] | None = None

    def _load(self) -> list[Any]:
        if self._calls is None:
            from sdd_git.yamlio import read_mapping

            data = read_mapping(self.path, None)  # a script she named
            calls = data.get("calls")
            if not isinstance(calls, list):
                raise ProviderError(
                    f"{self.path}: key 'calls' must be a list of replies",
                    hint="calls:\n  - say: 'Done.'",
                )
            self._calls = calls
        return self._calls

    def complete(self, request: ProviderRequest) -> ProviderReply:
        calls = self._load()
        transcript = os.environ.get(TRANSCRIPT_ENV)
        if transcript:
            line = {
                "role": request.role,
                "run": request.run_id,
                "messages": request.messages,
                "tools": [asdict(tool) for tool in request.tools],
            }
            with open(transcript, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        index = request.call_index
        mine = [c for c in calls if isinstance(c, dict) and c.get("role") == request.role]
        if mine and request.role_call_index:
            # A network's runs share one file: a run of role R answers its Nth call with the
            # Nth item addressed to R, skipping the others' (CONTRACT §9).
            if request.role_call_index > len(mine):
                raise ProviderError(
                    f"script exhausted after {len(mine)} calls addressed to {request.role}"
                )
            item = mine[request.role_call_index - 1]
            index = calls.index(item) + 1
        elif index > len(calls):
            raise ProviderError(f"script exhausted after {len(calls)} calls")
        else:
            item = calls[index - 1]
        if not isinstance(item, dict):
            raise ProviderError(f"{self.path}: call {index} must be a mapping (say, tool_calls)")
        expected = item.get("role")
        if expected is not None and expected != request.role:
            raise ProviderError(
                f"{self.path}: call {index} must carry the role '{expected}', "
                f"but it carries '{request.role}'"
            )
        calls_out = []
        for number, raw in enumerate(item.get("tool_calls") or [], start=1):
            if not isinstance(raw, dict) or not isinstance(raw.get("tool"), str):
                raise ProviderError(f"{self.path}: call {index}: a tool call needs 'tool'")
            args = raw.get("args") or {}
            calls_out.append(ToolCall(f"call-{index}-{number}", raw["tool"], dict(args)))
        text = item.get("say")
        message: dict[str, Any] = {
            "role": "assistant",
            "content": text,
            "tool_calls": [{"id": c.id, "name": c.name, "args": c.args} for c in calls_out],
            "provider": "script",
            "raw": item,
        }
        return ProviderReply(str(text) if text is not None else None, tuple(calls_out), message)
