"""A model for the real Codex to talk to: a loopback server that speaks the OpenAI Responses
stream as Codex reads it (`POST /v1/responses`, server-sent events), answering each request with
the next scripted tool call and, once the script is spent, a last message. What Codex sends
back for each call (its refusal, or the command's output) is kept by call id.

Only the wire is stood in for: the Codex that runs is the npm package's own binary, with its
own rules loader, hooks and sandbox (tests/routines/validators.py installs it)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Call:
    """One tool call: `exec_command` with its JSON arguments, or a freeform tool (Codex's
    `apply_patch`) with its raw input."""

    name: str
    arguments: dict[str, Any] | None = None
    input: str | None = None


def shell(command: str) -> Call:
    # login=false: a login shell would read the machine's profile and lose the test's PATH.
    return Call("exec_command", {"cmd": command, "login": False})


def patch(text: str) -> Call:
    return Call("apply_patch", input=text)


@dataclass
class ScriptedModel:
    calls: list[Call]
    outputs: dict[str, str] = field(default_factory=dict)  # call id -> what Codex sent back
    _served: int = 0

    def __post_init__(self) -> None:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = model.answer(json.loads(self.rfile.read(length) or b"{}"))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def answer(self, request: dict[str, Any]) -> bytes:
        for item in request.get("input", []):
            if isinstance(item, dict) and str(item.get("type", "")).endswith("call_output"):
                self.outputs[str(item["call_id"])] = str(item.get("output", ""))
        turn, self._served = self._served, self._served + 1
        response = {"id": f"resp_{turn}"}
        events: list[dict[str, Any]] = [{"type": "response.created", "response": response}]
        events.append(
            {"type": "response.output_item.done", "output_index": 0, "item": self._item(turn)}
        )
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events.append({"type": "response.completed", "response": {**response, "usage": usage}})
        return b"".join(
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events
        )

    def _item(self, turn: int) -> dict[str, Any]:
        if turn >= len(self.calls):
            text = [{"type": "output_text", "text": "done"}]
            return {"type": "message", "role": "assistant", "id": f"msg_{turn}", "content": text}
        call, call_id = self.calls[turn], f"call_{turn}"
        if call.input is not None:
            return {"type": "custom_tool_call", "id": f"ctc_{turn}", "call_id": call_id,
                    "name": call.name, "input": call.input}  # fmt: skip
        return {"type": "function_call", "id": f"fc_{turn}", "call_id": call_id,
                "name": call.name, "arguments": json.dumps(call.arguments)}  # fmt: skip

    def output(self, turn: int) -> str:
        """What Codex sent back for the call of that turn."""
        return self.outputs[f"call_{turn}"]


def run_codex(
    binary: Path,
    project: Path,
    model: ScriptedModel,
    codex_home: Path,
    *flags: str,
    path: list[Path] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`codex exec` in `project`, its model the scripted one. `--trust` trusts the project, so
    Codex loads its `.codex/` folder (rules and hooks) as it would once she trusted it."""
    codex_home.mkdir(parents=True, exist_ok=True)
    # A model Codex knows (its bundled catalog), so it offers the tools it offers that model,
    # apply_patch among them; only the provider's address is ours.
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "scripted"\n\n[model_providers.scripted]\n'
        f'name = "scripted"\nbase_url = "{model.base_url}"\nwire_api = "responses"\n'
        'env_key = "SCRIPTED_API_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n',
        encoding="utf-8",
    )
    dirs = [str(p) for p in path or []]
    env = {**os.environ, "CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "not-a-secret"}
    env["PATH"] = os.pathsep.join([*dirs, env.get("PATH", "")])
    return subprocess.run(
        [str(binary), "exec", "--json", "--trust", "--skip-git-repo-check", "-C", str(project),
         *flags, "do the task"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )  # fmt: skip
