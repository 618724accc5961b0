"""JSON over HTTP on the standard library: one kept-alive connection per host, gzip, retries
with backoff, and clear errors.

Why not httpx: `http.client` keeps a connection open across calls and gzip is one
`gzip.decompress`, so a dependency (and its ~65 ms import) buys nothing here. A provider holds one
`HttpClient` for its whole life, so the calls of a run share one TCP (and TLS) connection.

The HTTP modules are imported on the first call, so importing a provider costs next to nothing.
Proxies come from the usual environment variables (HTTPS_PROXY, NO_PROXY), read as urllib reads
them. No error text ever holds a header value: the API key travels in a header, and whatever a
server answers goes through the masker with every secret header value before it becomes part of
an error, so an echo of the key, whole, in part or encoded (base64, hex, URL-encoded...), shows
as "[secret]". The masker is imported only when an error is built.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from sdd_git import __version__
from sdd_git.providers.base import ProviderError, ProviderRequest

if TYPE_CHECKING:
    from sdd_git.http.transport import Transport

Sleep = Callable[[float], None]

USER_AGENT = f"sdd/{__version__}"
MAX_RETRY_AFTER = 30.0  # seconds: a longer Retry-After is capped, not obeyed
_SNIPPET = 300  # characters of a server's error message kept in ours
# Headers whose values are not secret; every other header value is masked in error text.
_PUBLIC_HEADERS = frozenset(
    {
        "content-type",
        "accept",
        "accept-encoding",
        "user-agent",
        "anthropic-version",
        "x-sdd-role",
        "x-sdd-run",
    }
)
# Statuses that say the request itself is wrong: sending it again cannot help.
_REJECTED = (400, 413, 422)
_CONTEXT_WORDS = re.compile(r"context|too long|too many tokens|maximum.*tokens|n_ctx", re.I)


class HttpClient:
    """One provider's HTTP: a kept-alive connection per (scheme, host, port), reused call after
    call. `retries` is the number of attempts in all. A 429, a 5xx or a connection reset is tried
    again after `backoff * 2**(n-1)` seconds, or after the server's numeric Retry-After (at most
    30 s). Anything else fails at once with a ProviderError naming `provider` and the URL."""

    def __init__(
        self,
        *,
        provider: str,
        timeout: float,
        retries: int = 3,
        backoff: float = 0.5,
        sleep: Sleep = time.sleep,
        key_env: str | None = None,
        timeout_setting: str = "provider.timeout",
        transport: Transport | None = None,
    ) -> None:
        self.provider = provider
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.key_env = key_env
        self.timeout_setting = timeout_setting
        self._sleep = sleep
        self._transport = transport

    def _sender(self) -> Transport:
        if self._transport is None:
            from sdd_git.http.transport import StdlibTransport

            self._transport = StdlibTransport(self.timeout)
        return self._transport

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()

    def post_json(
        self, url: str, body: dict[str, Any], headers: Mapping[str, str]
    ) -> dict[str, Any]:
        """POST `body` as JSON to `url` and return the decoded JSON object answer."""
        return self.request("POST", url, headers, json.dumps(body).encode("utf-8"))

    def get_json(self, url: str, headers: Mapping[str, str]) -> dict[str, Any]:
        return self.request("GET", url, headers, None)

    def post_stream(
        self,
        url: str,
        body: dict[str, Any],
        headers: Mapping[str, str],
        on_chunk: Callable[[bytes], None],
    ) -> dict[str, Any] | None:
        """POST `body` as JSON and hand the answer's server-sent events to `on_chunk` as they
        arrive. Tried again only while nothing has arrived: a stream cut off half way is a
        failure, never a second, different answer joined to the first. A server that answers
        with one JSON document instead (it does not stream) gets that document returned."""
        arrived = False

        def told(chunk: bytes) -> None:
            nonlocal arrived
            arrived = True
            on_chunk(chunk)

        def retry_allowed() -> bool:
            return not arrived

        data = json.dumps(body).encode("utf-8")
        secrets = _secrets(headers)
        stream_headers = {**headers, "Accept": "text/event-stream", "Accept-Encoding": "identity"}
        try:
            got = self._request("POST", url, stream_headers, data, secrets, told, retry_allowed)
            if "event-stream" in str(got.get("content_type", "")).lower():
                return None
            return _decode(got.get("body", b""), f"{self.provider} at {_shown(url)}", secrets)
        except ProviderError as error:
            mask = _masker(secrets)
            hint = mask(error.hint) if error.hint else None
            raise ProviderError(mask(error.message), hint) from None

    def request(
        self, method: str, url: str, headers: Mapping[str, str], data: bytes | None
    ) -> dict[str, Any]:
        secrets = _secrets(headers)
        try:
            return self._request(method, url, headers, data, secrets)
        except ProviderError as error:
            # Last line of defence: nothing a server said leaves this module unmasked, whichever
            # error carries it.
            mask = _masker(secrets)
            hint = mask(error.hint) if error.hint else None
            raise ProviderError(mask(error.message), hint) from None

    def _request(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str],
        data: bytes | None,
        secrets: list[str],
        on_chunk: Callable[[bytes], None] | None = None,
        retry_allowed: Callable[[], bool] = lambda: True,
    ) -> dict[str, Any]:
        import http.client

        from sdd_git.http.transport import Request, Timeout, Unreachable

        where = f"{self.provider} at {_shown(url)}"
        if url.split("://", 1)[0].lower() not in ("http", "https"):
            raise ProviderError(
                f"{where}: not a valid URL", hint="base_url must start with http:// or https://"
            )
        all_headers = {
            "Accept": "application/json",
            "Accept-Encoding": "gzip, deflate",
            "User-Agent": USER_AGENT,
        }
        # Keys as the server reads them, whatever case the caller wrote (a stream's Accept).
        all_headers = {k: v for k, v in all_headers.items() if k.lower() not in _lower(headers)}
        if data is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers)
        attempts = max(1, self.retries)
        failure = ""
        for attempt in range(1, attempts + 1):
            retry_after: str | None = None
            try:
                answer = self._sender().send(Request(method, url, all_headers, data, on_chunk))
            except http.client.InvalidURL as exc:
                raise ProviderError(
                    f"{where}: not a valid URL ({exc})", hint="check base_url"
                ) from None
            except ValueError:
                # http.client refuses a header value with a line break, and its message quotes
                # the value: never show it, it may be the key.
                raise ProviderError(
                    f"{where}: a request header holds a line break or other character HTTP forbids",
                    hint=f"check the value of {self.key_env}"
                    if self.key_env
                    else "check the API key and provider.headers",
                ) from None
            except Timeout:
                # The server took the request and has not answered: it is alive, maybe still
                # generating (a local model on a CPU can take minutes). Retrying would only
                # queue the same work again.
                raise ProviderError(
                    f"{where}: timed out after {self.timeout:g} s without an answer "
                    "(the server accepted the request and is still working on it, or is stuck)",
                    hint=f"a slow or local model may need longer: raise {self.timeout_setting} "
                    f"(seconds; now {self.timeout:g}), e.g. provider: {{timeout: 600}} in "
                    ".sdd/config.yaml",
                ) from None
            except Unreachable as exc:
                raise ProviderError(
                    f"cannot reach {self.provider} at {_shown(url)}: "
                    f"{_reason(exc.cause, self.timeout)}",
                    hint="is the server running? check base_url",
                ) from None
            except (http.client.HTTPException, OSError) as exc:
                if not _is_reset(exc):
                    raise ProviderError(
                        f"{where}: the connection failed: {_reason(exc, self.timeout)}",
                        hint="check base_url and any proxy settings (HTTPS_PROXY, NO_PROXY)",
                    ) from None
                failure = "(the connection was reset)"
            else:
                status = answer.status
                payload = _decompressed(answer.body, answer.headers)
                if 200 <= status < 300:
                    if on_chunk is not None:  # a stream's caller reads what it was told
                        return {"content_type": answer.headers.get("content-type", ""),
                                "body": payload}  # fmt: skip
                    return _decode(payload, where, secrets)
                detail = _server_message(payload, secrets)
                if status != 429 and status < 500:
                    raise _refusal(status, detail, answer.headers, where, self.key_env)
                failure = f"(HTTP {status})" + (f": {detail}" if detail else "")
                retry_after = answer.headers.get("retry-after")
            if attempt == attempts:
                break
            if not retry_allowed():
                raise ProviderError(
                    f"{where}: the answer was cut off while it streamed {failure}",
                    hint="try again; what already arrived is not used",
                )
            self._sleep(_delay(retry_after, self.backoff, attempt))
        raise ProviderError(
            f"{where}: still failing after {attempts} attempts {failure}",
            hint="the server is overloaded or limiting the rate; try again later "
            "(provider.retries sets how often sdd tries again)",
        )


def _lower(headers: Mapping[str, str]) -> set[str]:
    return {name.lower() for name in headers}


def _decompressed(payload: bytes, headers: Mapping[str, str]) -> bytes:
    encoding = headers.get("content-encoding", "").strip().lower()
    try:
        if encoding in ("gzip", "x-gzip"):
            import gzip

            return gzip.decompress(payload)
        if encoding == "deflate":
            import zlib

            try:
                return zlib.decompress(payload)
            except zlib.error:  # some servers send raw deflate, without the zlib wrapper
                return zlib.decompress(payload, -zlib.MAX_WBITS)
    except (OSError, EOFError, ValueError) as exc:
        raise ProviderError(f"the answer claims {encoding} encoding but is not ({exc})") from None
    return payload


def _is_reset(exc: BaseException) -> bool:
    import http.client

    return isinstance(
        exc,
        ConnectionResetError
        | ConnectionAbortedError
        | BrokenPipeError
        | http.client.IncompleteRead
        | http.client.RemoteDisconnected,
    )


def _refusal(
    status: int, detail: str, headers: Any, where: str, key_env: str | None
) -> ProviderError:
    """The error for an answer that retrying will not change."""
    suffix = f": {detail}" if detail else ""
    if status in (401, 403):
        if key_env:
            hint = f"set {key_env} to a valid key for this server"
        else:
            # The likeliest cause: sdd sent no key, because none is named for this host.
            hint = (
                "no key was sent: sdd sends OPENAI_API_KEY and ANTHROPIC_API_KEY only to their "
                "own services; name this server's key variable in .sdd/config.yaml "
                "(provider: {api_key_env: MY_KEY}) or set SDD_API_KEY, and see "
                "`sdd provider show`"
            )
        # A 401 body is about the key (some servers echo part of it), so only a 403 says why.
        why = suffix if status == 403 else ""
        return ProviderError(f"{where}: the API key was refused (HTTP {status}){why}", hint=hint)
    if status == 404:
        return ProviderError(
            f"{where}: unknown model or endpoint (HTTP 404){suffix}",
            hint="check the model name and base_url",
        )
    if 300 <= status < 400:
        location = headers.get("location") if headers else None
        return ProviderError(
            f"{where}: the server redirects (HTTP {status}) to {location or 'another address'}",
            hint="set base_url to the address it redirects to",
        )
    if status in _REJECTED:
        # A validation error: the same request would be refused again, so it is not retried.
        if _CONTEXT_WORDS.search(detail):
            hint = (
                "the conversation is longer than the model's context: set provider.context to "
                "the model's context size (and provider.num_ctx for Ollama), or use a model "
                "with a longer context"
            )
        else:
            hint = "the server's own log says which part it refused"
        return ProviderError(
            f"{where}: the server rejected the request (HTTP {status}): "
            f"{detail or 'no reason given'}",
            hint=hint,
        )
    return ProviderError(f"{where}: HTTP {status}{suffix}")


def _decode(payload: bytes, where: str, secrets: list[str]) -> dict[str, Any]:
    try:
        answer = whole_characters(json.loads(payload))
    except RecursionError:
        raise ProviderError(f"{where}: the answer is nested too deep to read") from None
    except ValueError:
        # Masked whole before it is cut, so the cut cannot leave half a key unrecognised.
        text = _masker(secrets)(payload[: _SNIPPET * 4].decode("utf-8", "replace"))
        raise ProviderError(f"{where}: the answer is not JSON: {text[:_SNIPPET]!r}") from None
    if not isinstance(answer, dict):
        raise ProviderError(f"{where}: the answer is not a JSON object")
    cleaned: dict[str, Any] = answer
    return cleaned


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole_characters(value: Any) -> Any:
    """JSON may carry a lone surrogate (\\ud800), which is no character: it becomes U+FFFD,
    so nothing downstream (a log, a terminal, the next request) fails to encode it."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {whole_characters(k): whole_characters(v) for k, v in value.items()}
    if isinstance(value, list):
        return [whole_characters(v) for v in value]
    return value


def _server_message(payload: bytes, secrets: list[str]) -> str:
    """The human part of an error body: OpenAI's and Anthropic's {"error": {"message": ...}},
    Ollama's {"error": "..."}, FastAPI's {"detail": ...}, or the text itself; masked before it is
    decoded, squeezed or cut (any of which could hide a key from the masker), and after."""
    mask = _masker(secrets)
    return mask(_message(mask(payload.decode("utf-8", "replace").strip())))


def _message(text: str) -> str:
    try:
        answer = json.loads(text)
    except ValueError:
        return _clip(text)
    if isinstance(answer, dict):
        error = answer.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return _clip(error["message"])
        for found in (error, answer.get("message"), answer.get("detail")):
            if isinstance(found, str) and found:
                return _clip(found)
    return _clip(json.dumps(answer))


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…"


def _secrets(headers: Mapping[str, str]) -> list[str]:
    found: set[str] = set()
    for name, value in headers.items():
        if name.lower() in _PUBLIC_HEADERS or not value:
            continue
        found.add(value)
        found.update(part for part in value.split() if len(part) >= 8)  # "Bearer KEY" -> KEY
    return sorted(found, key=len, reverse=True)


def _masker(secrets: list[str]) -> Callable[[str], str]:
    from sdd_git.masking.masker import Masker

    return Masker(secrets)


def _shown(url: str) -> str:
    """`url` without a password in it (https://user:pass@host/ -> https://user:[secret]@host/)."""
    return re.sub(r"(://[^\s:/?#@]*):[^\s/?#]*@", r"\1:[secret]@", url)


def _reason(cause: BaseException, timeout: float) -> str:
    import socket

    if isinstance(cause, TimeoutError):
        return f"no connection within {timeout:g} s"
    if isinstance(cause, socket.gaierror):
        return f"cannot resolve the host name ({cause.strerror or cause})"
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return str(cause) or type(cause).__name__


def _delay(retry_after: str | None, backoff: float, attempt: int) -> float:
    if retry_after is not None:
        try:
            seconds = float(retry_after.strip())
        except ValueError:
            seconds = math.nan  # an HTTP date: fall back to our own backoff
        if math.isfinite(seconds) and seconds >= 0:
            return min(seconds, MAX_RETRY_AFTER)
    return float(backoff * 2 ** (attempt - 1))


class HttpProvider:
    """What the HTTP providers share: the key and a setting's headers, one client, and the
    headers of a request (a setting's first, so sdd's own win over them)."""

    name: str
    model: str
    base_url: str

    def _connect(
        self,
        api_key: str | None,
        headers: Mapping[str, str] | None,
        *,
        timeout: float,
        retries: int,
        sleep: Sleep,
        key_env: str,
    ) -> None:
        self._api_key = api_key.strip() if api_key else None  # a stray newline breaks HTTP
        self._headers = dict(headers or {})
        self._http = HttpClient(
            provider=self.name,
            timeout=timeout,
            retries=retries + 1,
            sleep=sleep,
            key_env=key_env if self._api_key else None,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    def close(self) -> None:
        self._http.close()

    def _wire_headers(self) -> dict[str, str]:
        """The wire protocol's own headers, sent with every request."""
        return {}

    def _key_headers(self, api_key: str) -> dict[str, str]:
        raise NotImplementedError

    def _request_headers(self, request: ProviderRequest | None) -> dict[str, str]:
        headers = dict(self._headers)  # sdd's own headers below win over a setting's
        headers.update(self._wire_headers())
        if request is not None:
            headers.update({"X-SDD-Role": request.role, "X-SDD-Run": request.run_id})
        if self._api_key:  # a local server (Ollama, llama.cpp) needs none
            headers.update(self._key_headers(self._api_key))
        return headers
