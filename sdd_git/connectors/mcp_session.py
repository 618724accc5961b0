"""Reaching an MCP server: one session per server per run, started by the run's first call to
it and closed, its process reaped, when the run ends (`base.run_lifetime`, which the runner
opens).

    first call:  start (in its sandbox) -> initialize -> the call's work        (~0.9 s, stdio)
    later calls: is it still there? (its process, then a ping) -> the work      (a few ms)
    run's end:   close the session -> kill what is left of its process group -> reap

Why a session may be kept: what a call checks never depends on an earlier call. The server's
target (its argv, environment, sandbox, product, headers) is worked out from her confirmed
config on every call and compared with the kept one; a change ends the old session. The
connector lists the tools before every call in the same session (`mcp.McpConnector.call`), so
its refusal reads the description the server gives now, not the one it gave at the start.

A kept server that died since the last call (its process exited, or it does not answer a ping,
or an HTTP server forgot the session) is started again, once, by the next call; if that fails
too, the error says both. Only the check is ever repeated, never the call: a tool call that
fails on the way is never sent twice, and its session is dropped (the next call starts anew).
Each call keeps its own timeout (`connectors.NAME.timeout`), from the moment it is made: the
first one's covers the start and the handshake.

What a stdio server is while it is kept: sdd's child in a process group of its own, `keep`-ed
by the reaper (so the cleanup after a role's command does not end it), with sdd not dumpable
until the run's last server is closed (so it cannot read sdd's environment through /proc).
Outside a run (a person command), the session lives for the one call, as before.

The SDK's client is asynchronous: a run's sessions live in one event loop on a thread of its
own (anyio's blocking portal), which the synchronous connector calls into; the `mcp` and
`anyio` packages are imported only when a server is reached."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from sdd_git import reaper
from sdd_git.connectors.base import (
    ConnectorError,
    Missing,
    NotSignedIn,
    Refused,
    Unavailable,
    current_run,
)
from sdd_git.connectors.mcp_sandbox import NOT_A_PROGRAM, Placement

if TYPE_CHECKING:
    from concurrent.futures import Future

TIMEOUT_SECONDS = 30.0
_STDERR_TAIL = 600
_PING_SECONDS = 5.0  # a kept server that cannot answer a ping in this long is started again
_CLOSE_SECONDS = 3.0  # the SDK's own shutdown: stdin closed, 2 s grace, then its kill
_LATE_SECONDS = 1.0  # how long past a call's timeout its thread waits for the loop to answer
_RUN_KEY = "mcp"  # under which a run keeps its MCP servers
# JSON-RPC error codes. MCP's "resource not found" is the one clear not-found a server can give;
# the next three say the request as made was refused (not the server being down).
_NOT_FOUND = -32002
_REFUSED = (-32600, -32601, -32602)

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """Where and how to reach one configured server, checked before anything starts."""

    server: str
    argv: tuple[str, ...] = ()  # stdio: the command as the config gives it
    program: str = ""  # its first word, found on the child's PATH
    url: str = ""  # streamable HTTP
    env: Mapping[str, str] = field(default_factory=dict)  # the child's whole environment
    headers: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    timeout: float = TIMEOUT_SECONDS
    product: Path | None = None  # read-only to a server in the sandbox
    placement: Placement = NOT_A_PROGRAM  # where a stdio server runs


@dataclass
class Progress:
    """How far a session got, for the error that says where it failed: whether the handshake
    was done, and the HTTP statuses the server answered (the SDK turns a 401 into a generic
    error)."""

    initialized: bool = False
    statuses: list[int] = field(default_factory=list)


def reach(
    target: Target, doing: str, work: Callable[[Any], Awaitable[T]], masked: Callable[[str], str]
) -> tuple[T, str]:
    """`work(client)` on the server's session, within the target's timeout: the run's kept
    session, or one started now. Gives back what the work returned, and, when a kept server
    had died and was started again for this call, why (else ""). Every failure on the way is
    one of the connector errors, with the server's placement said when it runs outside the
    sandbox."""
    run = current_run()
    if run is not None:
        try:
            servers = run.get(_RUN_KEY, Servers)
        except RuntimeError:  # the run's keep is closed (interpreter exit): one session only
            servers = None
        if servers is not None:
            return servers.call(target, doing, work, masked)
    once = Servers()
    try:
        return once.call(target, doing, work, masked)
    finally:
        once.close()


class Servers:
    """The MCP servers one run has started, by connector name; the run's `Kept`. The first
    server starts the event loop they share and makes sdd not dumpable; `close` ends them all,
    reaps what escaped their groups, and puts both back."""

    def __init__(self) -> None:
        self._servers: dict[str, _Server] = {}
        self._lock = threading.Lock()
        self._portal_cm: Any = None
        self._portal: Any = None
        self._subreaper = False
        self._before: set[int] = set()
        self._dumpable = False
        self._closed = False

    def call(
        self,
        target: Target,
        doing: str,
        work: Callable[[Any], Awaitable[T]],
        masked: Callable[[str], str],
    ) -> tuple[T, str]:
        with self._lock:
            if self._closed:
                raise Unavailable(f"{target.server}: the run has ended; its MCP servers are closed")
            try:
                return self._call(target, doing, work, masked)
            except ConnectorError as error:
                if target.placement.outside and target.placement.warning not in error.message:
                    error.message += f"; {target.placement.warning}"
                    error.args = (error.message,)
                raise

    def _call(
        self,
        target: Target,
        doing: str,
        work: Callable[[Any], Awaitable[T]],
        masked: Callable[[str], str],
    ) -> tuple[T, str]:
        deadline = time.monotonic() + target.timeout
        server = self._servers.get(target.server)
        if server is not None and not _same(server.target, target):
            self._drop(server)  # her config changed during the run: the old session goes
            server = None
        restarted = ""
        if server is not None:
            gone = server.gone(deadline)
            if gone:
                said = server.stderr()
                restarted = gone + (f"; its stderr ends: {masked(said)}" if said else "")
                self._drop(server, grace=0.0)
                server = None
        if server is None:
            server = self._servers[target.server] = _Server(target, self._loop())
            try:
                server.open(deadline)
            except BaseException as error:
                mapped = self._failed(server, error, doing, masked)
                if restarted:
                    mapped.message = (
                        f"{target.server}: the MCP server had stopped since the last call of this "
                        f"run ({restarted}) and was started again once, which failed too: "
                        f"{mapped.message.removeprefix(f'{target.server}: ')}"
                    )
                    mapped.args = (mapped.message,)
                raise mapped from None
        try:
            return server.run(work, deadline), restarted
        except BaseException as error:
            mapped = self._failed(server, error, doing, masked, keep=_answered(error))
            raise mapped from None

    def _failed(
        self,
        server: _Server,
        error: BaseException,
        doing: str,
        masked: Callable[[str], str],
        keep: bool = False,
    ) -> ConnectorError:
        """The error to raise for `error`; the session is dropped unless the server answered
        (a JSON-RPC error, or a refusal of the connector's own): then it is sound. Ctrl-C
        ends the server at once and goes on up."""
        if isinstance(error, KeyboardInterrupt | SystemExit):
            self._drop(server, grace=0.0)
            raise error
        said = server.stderr()
        if not keep:
            self._drop(server, grace=0.0)
        if isinstance(error, ConnectorError):
            return error
        return mapped(error, server.target, doing, server.progress, said, masked)

    def _loop(self) -> Any:
        """The run's event loop (a blocking portal), started with its first server."""
        if self._portal is None:
            from anyio.from_thread import start_blocking_portal

            self._subreaper = reaper.become_subreaper()
            self._before = set(reaper.children_of({os.getpid()})) if self._subreaper else set()
            self._dumpable = reaper.set_dumpable(False)
            self._portal_cm = start_blocking_portal(name="sdd-mcp")
            self._portal = self._portal_cm.__enter__()
        return self._portal

    def _drop(self, server: _Server, grace: float = _CLOSE_SECONDS) -> None:
        if self._servers.get(server.target.server) is server:
            del self._servers[server.target.server]
        server.close(grace)

    def close(self) -> None:
        """End every server, then the loop; reap what escaped; sdd dumpable again if it was."""
        locked = self._lock.acquire(timeout=_CLOSE_SECONDS)  # a call stuck past its timeout
        try:
            if self._closed:
                return
            self._closed = True
            for server in list(self._servers.values()):
                self._drop(server)
            if self._portal is not None:
                with suppress(Exception):
                    self._portal.call(self._portal.stop, True)  # cancel what is left
                with suppress(Exception):
                    self._portal_cm.__exit__(None, None, None)
            if self._subreaper:
                reaper.end_descendants(self._before)
            if self._dumpable:
                reaper.set_dumpable(True)
        finally:
            if locked:
                self._lock.release()


def _same(kept: Target, now: Target) -> bool:
    """The same server as the kept session's: all but the call's own timeout."""
    return replace(kept, timeout=0.0) == replace(now, timeout=0.0)


class _Server:
    """One server's session: started and initialized by a task of the run's event loop, which
    holds it open until `close`; the calls are other tasks of that loop."""

    def __init__(self, target: Target, portal: Any) -> None:
        self.target = target
        self.progress = Progress()
        self._portal = portal
        self._scratch = Path(tempfile.mkdtemp(prefix="sdd-mcp-"))
        self._pid_file = self._scratch / "pid"
        self._errlog = open(  # noqa: SIM115 - open for the session's life, closed by close()
            self._scratch / "stderr", "w+", encoding="utf-8", errors="replace"
        )
        self._client: Any = None
        self._release: Any = None  # the loop's event that ends the holding task
        self._held: Future[None] | None = None
        self._pid: int | None = None
        self._closed = False

    def open(self, deadline: float) -> None:
        from concurrent.futures import Future

        ready: Future[Any] = Future()
        self._held = self._portal.start_task_soon(self._hold, ready, deadline)
        self._client = _waited(ready, deadline)
        self._pid = _pid(self._pid_file)
        if self._pid is not None:
            reaper.keep(self._pid)

    async def _hold(self, ready: Future[Any], deadline: float) -> None:
        import anyio
        from mcp import ClientSession

        self._release = anyio.Event()
        try:
            async with (
                transport(self.target, self._errlog, self._pid_file, self.progress) as streams,
                ClientSession(streams[0], streams[1]) as client,
            ):
                with anyio.fail_after(max(0.0, deadline - time.monotonic())):
                    await client.initialize()
                self.progress.initialized = True
                ready.set_result(client)
                await self._release.wait()
        except Exception as error:  # kept for `open`; once open, `gone` sees the task ended
            if not ready.done():
                ready.set_exception(error)
        except BaseException as error:  # cancelled (the call's deadline, or the run's end)
            if not ready.done():
                ready.set_exception(TimeoutError() if _cancelled(error) else error)
            raise

    def run(self, work: Callable[[Any], Awaitable[T]], deadline: float) -> T:
        future: Future[T] = self._portal.start_task_soon(self._work, work, deadline)
        return _waited(future, deadline)

    async def _work(self, work: Callable[[Any], Awaitable[T]], deadline: float) -> T:
        import anyio

        with anyio.fail_after(max(0.0, deadline - time.monotonic())):
            return await work(self._client)

    def gone(self, deadline: float) -> str:
        """Why the kept session cannot be used any more, in words; "" while it can."""
        if self._held is None or self._held.done():
            return "its session had ended"
        if self._pid is not None and not _running(self._pid):
            return "its process had exited"
        try:
            self.run(_ping, min(deadline, time.monotonic() + _PING_SECONDS))
        except Exception as error:
            leaf = _leaves(error)[0]
            return f"it did not answer a ping ({type(leaf).__name__})"
        return ""

    def stderr(self) -> str:
        return _tail(self._errlog)

    def close(self, grace: float) -> None:
        """Close the session as the SDK does (stdin closed, a grace, its kill), within `grace`
        seconds; then kill whatever is left of the server's process group, always."""
        if self._closed:
            return
        self._closed = True
        try:
            held = self._held
            if held is not None and not held.done() and self._release is not None and grace:
                with suppress(Exception):
                    self._portal.call(self._release.set)
                with suppress(Exception):
                    held.result(timeout=grace)
        finally:
            _end_group(self._pid_file)
            if self._held is not None and not self._held.done():
                self._held.cancel()  # the loop stops waiting on what was killed
                with suppress(Exception):
                    self._held.result(timeout=_LATE_SECONDS)
            if self._pid is not None:
                reaper.let_go(self._pid)
            self._errlog.close()
            shutil.rmtree(self._scratch, ignore_errors=True)


def _cancelled(error: BaseException) -> bool:
    import anyio

    return isinstance(error, anyio.get_cancelled_exc_class())


async def _ping(client: Any) -> None:
    await client.send_ping()


def _waited(future: Future[T], deadline: float) -> T:
    """The future's result; past the deadline (and a little, for the loop's own timeout to
    say it first) it is cancelled and this is a TimeoutError."""
    try:
        return future.result(timeout=max(0.0, deadline - time.monotonic()) + _LATE_SECONDS)
    except TimeoutError:
        future.cancel()
        raise
    except BaseException:
        future.cancel()  # Ctrl-C in this thread: the loop's task stops too
        raise


def _pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def _running(pid: int) -> bool:
    """Whether `pid` is still there and not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def _end_group(pid_file: Path) -> None:
    """Kill whatever is left of the server's process group (a helper it started and left).
    The SDK already stopped the server itself; this catches what outlived it."""
    group = _pid(pid_file)
    if group is not None:
        reaper.kill_group(group)


@asynccontextmanager
async def transport(
    target: Target, errlog: TextIO, pid_file: Path, progress: Progress
) -> AsyncIterator[Any]:
    if target.url:
        from mcp.client import streamable_http

        async def seen(response: Any) -> None:
            if response.status_code >= 400:
                progress.statuses.append(response.status_code)

        if hasattr(streamable_http, "streamable_http_client"):  # mcp >= 1.24, and 2
            from mcp.shared._httpx_utils import create_mcp_http_client

            http = create_mcp_http_client(headers=dict(target.headers))
            http.event_hooks["response"].append(seen)
            async with (
                http,
                streamable_http.streamable_http_client(target.url, http_client=http) as streams,
            ):
                yield streams
        else:  # older mcp 1
            async with streamable_http.streamablehttp_client(  # type: ignore[attr-defined,unused-ignore]
                target.url, headers=dict(target.headers)
            ) as streams:
                yield streams
        return
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from sdd_git.sandbox.server import OFF, contained

    # With no cwd of its own the server starts in an empty scratch folder, never in the product:
    # `python -m x` and `npx x` would load a product file a role wrote.
    with contained(
        (target.program, *target.argv[1:]),
        target.env,
        product=target.product,
        cwd=target.cwd,
        pid_file=pid_file,
        sandboxed=target.placement.sandbox != OFF,
    ) as launch:
        parameters = StdioServerParameters(
            command=launch.argv[0], args=list(launch.argv[1:]), cwd=launch.cwd
        )
        async with stdio_client(parameters, errlog=errlog) as streams:
            yield streams


def snippet(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# -- foreign errors, mapped at this edge --------------------------------------------------------


def _tail(errlog: TextIO) -> str:
    with suppress(OSError, ValueError):
        errlog.flush()
        size = errlog.seek(0, os.SEEK_END)
        errlog.seek(max(0, size - 4 * _STDERR_TAIL))  # a server's stderr may be endless
        lines = [line for line in errlog.read().splitlines() if line.strip()]
        return "\n".join(lines)[-_STDERR_TAIL:]
    return ""


def _leaves(error: BaseException) -> list[BaseException]:
    """The errors inside task groups' exception groups, innermost first."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _code(error: BaseException) -> int | None:
    code = getattr(getattr(error, "error", None), "code", None)
    return code if isinstance(code, int) else None


def _answered(error: BaseException) -> bool:
    """Whether the server answered (a JSON-RPC error), or the connector refused on its own
    listing: the session is sound either way, and is kept."""
    leaves = _leaves(error)
    return all(isinstance(leaf, ConnectorError) or _code(leaf) is not None for leaf in leaves)


def mapped(
    error: BaseException,
    target: Target,
    doing: str,
    progress: Progress,
    stderr: str,
    masked: Callable[[str], str],
) -> ConnectorError:
    """One connector error for whatever the SDK, the transport or the server raised. Before
    the handshake is done, every failure means the server cannot be used (Unavailable, or
    NotSignedIn for a refused token); after it, the server's JSON-RPC error says what it is."""
    name = target.server
    where = masked(snippet(target.url or shlex.join(target.argv), 160))
    said = f"; its stderr ends: {masked(stderr)}" if stderr else ""
    leaves = _leaves(error)
    for leaf in leaves:
        if isinstance(leaf, ConnectorError):
            return leaf
    refused_sign_in = [status for status in progress.statuses if status in (401, 403)]
    if refused_sign_in:
        return NotSignedIn(
            f"{name}: the MCP server at {target.url} did not accept the sign-in "
            f"({refused_sign_in[0]})",
            hint=f"sdd connect {name}, or set connectors.{name}.token_env",
        )
    if any(isinstance(leaf, TimeoutError) for leaf in leaves):
        step = doing if progress.initialized else "start a session"
        return Unavailable(
            f"{name}: the MCP server did not {step} within {target.timeout:g} s; it was "
            f"stopped{said}",
            hint=f"connectors.{name}.timeout: {max(60, int(target.timeout * 2))}",
        )
    first = leaves[0] if leaves else error
    code = _code(first)
    words = masked(snippet(str(getattr(getattr(first, "error", None), "message", "") or first)))
    if not progress.initialized:
        status = f" (HTTP {progress.statuses[0]})" if progress.statuses else ""
        if isinstance(first, OSError) or type(first).__name__.endswith(("ConnectError", "Timeout")):
            return Unavailable(
                f"{name}: cannot reach the MCP server ({where}): {words}{said}",
                hint="is the server running, and is the command or url right?",
            )
        return Unavailable(
            f"{name}: the MCP server ({where}) did not start a session: {words}{status}{said}",
            hint="its own words (stderr) are quoted above"
            if stderr
            else "is the command or url right?",
        )
    if code is not None:  # the server answered the call with a JSON-RPC error
        if code == _NOT_FOUND:
            return Missing(f"{doing.removeprefix('run ')} of MCP server {name}", words)
        if code in _REFUSED:
            return Refused(f"{name}: the MCP server refused to {doing}: {words}")
        return Unavailable(f"{name}: the MCP server failed to {doing}: {words} (code {code}){said}")
    return Unavailable(
        f"{name}: the MCP server could not {doing}: {type(first).__name__}: {words}{said}"
    )
