"""A tiny JSON-over-HTTP POST on the standard library: retries with backoff, and clear errors.

The HTTP modules are imported on the first call, so importing a provider costs next to nothing.
Proxies come from the usual environment variables (HTTPS_PROXY, NO_PROXY), as urllib reads them.
No error text ever holds a header value: the API key travels in a header, and whatever a server
answers goes through the masker (masking.py) with every secret header value before it becomes
part of an error, so an echo of the key, whole, in part or encoded (base64, hex, URL-encoded...),
shows as "[secret]". The masker is imported only when an error is built.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from sdd_git.providers.base import ProviderError

if TYPE_CHECKING:
    import urllib.request

Sleep = Callable[[float], None]

MAX_RETRY_AFTER = 30.0  # seconds: a longer Retry-After is capped, not obeyed
_SNIPPET = 300  # characters of a server's error message kept in ours
# Headers whose values are not secret; every other header value is masked in error text.
_PUBLIC_HEADERS = frozenset(
    {"content-type", "accept", "user-agent", "anthropic-version", "x-sdd-role", "x-sdd-run"}
)


def post_json(
    url: str,
    body: dict[str, Any],
    headers: Mapping[str, str],
    *,
    timeout: float,
    retries: int = 3,
    backoff: float = 0.5,
    sleep: Sleep = time.sleep,
    provider: str,
    key_env: str | None = None,
) -> dict[str, Any]:
    """POST `body` as JSON to `url` and return the decoded JSON object answer.

    `retries` is the number of attempts in all. A 429, a 5xx or a connection reset is tried
    again after `backoff * 2**(n-1)` seconds, or after the server's numeric Retry-After (at most
    30 s). Anything else fails at once with a ProviderError naming `provider` and `url`.
    """
    secrets = _secrets(headers)
    try:
        return _post(
            url, body, headers, timeout, retries, backoff, sleep, provider, key_env, secrets
        )
    except ProviderError as error:
        # Last line of defence: nothing a server said leaves this module unmasked, whichever
        # error carries it.
        mask = _masker(secrets)
        raise ProviderError(mask(error.message), mask(error.hint) if error.hint else None) from None


def _post(
    url: str,
    body: dict[str, Any],
    headers: Mapping[str, str],
    timeout: float,
    retries: int,
    backoff: float,
    sleep: Sleep,
    provider: str,
    key_env: str | None,
    secrets: list[str],
) -> dict[str, Any]:
    import http.client
    import urllib.error
    import urllib.request

    where = f"{provider} at {_shown(url)}"
    attempts = max(1, retries)
    data = json.dumps(body).encode("utf-8")
    all_headers = {"Content-Type": "application/json", "Accept": "application/json"}
    all_headers.update(headers)
    if url.split("://", 1)[0].lower() not in ("http", "https"):
        raise ProviderError(
            f"{where}: not a valid URL", hint="base_url must start with http:// or https://"
        )
    request = urllib.request.Request(url, data=data, headers=all_headers, method="POST")
    opener = _opener()
    failure = ""
    for attempt in range(1, attempts + 1):
        retry_after: str | None = None
        try:
            with opener.open(request, timeout=timeout) as response:
                payload: bytes = response.read()
            return _decode(payload, where, secrets)
        except http.client.InvalidURL as exc:
            raise ProviderError(
                f"{where}: not a valid URL ({exc})", hint="check base_url"
            ) from None
        except ValueError:
            # http.client refuses a header value with a line break, and its message quotes the
            # value: never show it, it may be the key.
            raise ProviderError(
                f"{where}: a request header holds a line break or other character HTTP forbids",
                hint=f"check the value of {key_env}" if key_env else "check the API key",
            ) from None
        except urllib.error.HTTPError as exc:
            status = exc.code
            detail = _server_message(_read(exc), secrets)
            if status != 429 and status < 500:
                raise _refusal(status, detail, exc.headers, where, key_env) from None
            failure = f"(HTTP {status})" + (f": {detail}" if detail else "")
            retry_after = exc.headers.get("Retry-After") if exc.headers else None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            cause: BaseException = exc
            if isinstance(exc, urllib.error.URLError):
                reason = exc.reason
                cause = reason if isinstance(reason, BaseException) else OSError(str(reason))
            if not isinstance(
                cause, ConnectionResetError | ConnectionAbortedError | BrokenPipeError
            ) and not isinstance(cause, http.client.IncompleteRead):
                raise ProviderError(
                    f"cannot reach {provider} at {_shown(url)}: {_reason(cause, timeout)}",
                    hint="is the server running? check base_url",
                ) from None
            failure = "(the connection was reset)"
        if attempt == attempts:
            break
        sleep(_delay(retry_after, backoff, attempt))
    raise ProviderError(
        f"{where}: still failing after {attempts} attempts {failure}",
        hint="the server is overloaded or limiting the rate; try again later",
    )


def _opener() -> urllib.request.OpenerDirector:
    """An opener that honours proxy settings but follows no redirect (a POST must not become a
    GET on the way): a redirect is reported with where it points."""
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None

    return urllib.request.build_opener(NoRedirect)


def _refusal(
    status: int, detail: str, headers: Any, where: str, key_env: str | None
) -> ProviderError:
    """The error for an answer that retrying will not change."""
    suffix = f": {detail}" if detail else ""
    if status in (401, 403):
        hint = f"set {key_env} to a valid key for this server" if key_env else "check the API key"
        # A 401 body is about the key (some servers echo part of it), so only a 403 says why.
        why = suffix if status == 403 else ""
        return ProviderError(f"{where}: the API key was refused (HTTP {status}){why}", hint=hint)
    if status == 404:
        return ProviderError(
            f"{where}: unknown model or endpoint (HTTP 404){suffix}",
            hint="check the model name and base_url",
        )
    if 300 <= status < 400:
        location = headers.get("Location") if headers else None
        return ProviderError(
            f"{where}: the server redirects (HTTP {status}) to {location or 'another address'}",
            hint="set base_url to the address it redirects to",
        )
    if status == 400 and detail:
        return ProviderError(f"{where}: {detail} (HTTP 400)")
    return ProviderError(f"{where}: HTTP {status}{suffix}")


def _decode(payload: bytes, where: str, secrets: list[str]) -> dict[str, Any]:
    try:
        answer = json.loads(payload)
    except ValueError:
        # Masked whole before it is cut, so the cut cannot leave half a key unrecognised.
        text = _masker(secrets)(payload[: _SNIPPET * 4].decode("utf-8", "replace"))
        raise ProviderError(f"{where}: the answer is not JSON: {text[:_SNIPPET]!r}") from None
    if not isinstance(answer, dict):
        raise ProviderError(f"{where}: the answer is not a JSON object")
    cleaned: dict[str, Any] = whole_characters(answer)
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


def _read(exc: Any) -> bytes:
    try:
        data = exc.read()
    except Exception:
        return b""
    return data if isinstance(data, bytes) else b""


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
    from sdd_git.masker import Masker

    return Masker(secrets)


def _shown(url: str) -> str:
    """`url` without a password in it (https://user:pass@host/ -> https://user:[secret]@host/)."""
    return re.sub(r"(://[^\s:/?#@]*):[^\s/?#]*@", r"\1:[secret]@", url)


def _reason(cause: BaseException, timeout: float) -> str:
    import socket

    if isinstance(cause, TimeoutError):
        return f"no answer within {timeout:g} s"
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
