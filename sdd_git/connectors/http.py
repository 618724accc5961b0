"""HTTP for connectors, on the standard library: one request, its status mapped to the connector
error family at this edge, and the next page of a paginated answer.

Statuses: 404 and 410 are `Missing` (the record is not there), and so is 403 when the service
hides what one may not see; 401 is `NotSignedIn`; 400, 403, 405, 406, 409 and 422 are `Refused`
with the service's reason (GitHub and GitLab answer 405 to a merge that cannot be made); 429
and 5xx, a refused connection or a timeout are `Unavailable`. No error text holds a header
value, and the service's words pass through the session's masker first."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urljoin, urlsplit

from sdd_git import __version__
from sdd_git.connectors.base import Missing, NotSignedIn, Refused, Session, Unavailable
from sdd_git.http import transport

TIMEOUT_SECONDS = 30.0  # for each step: connecting, and each read of the answer
# For the whole call: a server that drips its answer a byte at a time never trips the timeout
# of a single read, so the call as a whole has its own end.
DEADLINE_SECONDS = 120.0
MAX_BODY = 8 * 1024 * 1024  # a log longer than this is cut, and said to be cut
_SNIPPET = 300


class Answer(transport.Answer):
    """An answer as a connector reads it: JSON that is not JSON is a connector error."""

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            raise Unavailable("the service answered with something that is not JSON") from None


def default_transport() -> transport.Transport:
    """A connection for one call, closed after it (a test puts its own double here)."""
    return transport.StdlibTransport(
        TIMEOUT_SECONDS, keep_alive=False, deadline=DEADLINE_SECONDS, max_body=MAX_BODY
    )


def request(
    session: Session,
    method: str,
    path: str,
    *,
    source: str,
    query: Mapping[str, Any] | None = None,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    form: bool = False,
    missing_on_403: bool = False,
    redirect_ok: bool = False,
) -> Answer:
    """`method` `path` (appended to the session's base URL, or a full URL of the same host),
    with the given headers (the connector adds its own sign-in header; a Content-Type among
    them is kept, e.g. JSON Patch). `source` names the record in a `missing:` answer ("issue
    acme/app#7"). With `redirect_ok` a 3xx answer is returned as it is, for the caller to
    decide where its Location may lead (redirects are never followed here)."""
    url = _url(session.base_url, path, query)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Unavailable(f"{session.name}: base_url {session.base_url!r} is not an http(s) URL")
    sent = {"User-Agent": f"sdd/{__version__}", "Accept": "application/json", **(headers or {})}
    payload = _payload(sent, body, form)
    if any("\r" in str(v) or "\n" in str(v) for v in sent.values()):
        # http.client would refuse it with the value in its error: a token with a line break.
        raise Unavailable(
            f"{session.name}: a header of the request holds a line break (is the token "
            "copied with one?); nothing was sent",
            hint=f"sign in again: sdd connect {session.name}",
        )
    answer = _sent(session, transport.Request(method, url, sent, payload))
    if redirect_ok and 300 <= answer.status < 400 and answer.headers.get("location"):
        return answer
    return _checked(session, answer, source, missing_on_403)


def _payload(sent: dict[str, str], body: Any, form: bool) -> bytes | None:
    """The body's bytes, and its Content-Type into `sent` unless one is given."""
    if body is None:
        return None
    given_type = any(name.lower() == "content-type" for name in sent)
    if form:
        if not given_type:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        return urlencode(body).encode()
    if not given_type:
        sent["Content-Type"] = "application/json; charset=utf-8"
    return json.dumps(body).encode()


def _sent(session: Session, request: transport.Request) -> Answer:
    import http.client

    parts = urlsplit(request.url)
    sender = default_transport()
    try:
        got = sender.send(request)
    except transport.DeadlinePassed:
        raise Unavailable(
            f"{session.name}: {parts.scheme}://{parts.netloc} took longer than "
            f"{DEADLINE_SECONDS:g} s to answer; the call was ended"
        ) from None
    except (
        transport.Unreachable,
        transport.Timeout,
        OSError,
        ValueError,
        http.client.HTTPException,
    ) as exc:
        cause = exc.cause if isinstance(exc, transport.Unreachable | transport.Timeout) else exc
        raise Unavailable(
            f"{session.name}: no answer from {parts.scheme}://{parts.netloc}: "
            f"{type(cause).__name__}: {_masked(session, str(cause))[:_SNIPPET]}"
        ) from None
    finally:
        sender.close()
    return Answer(got.status, got.headers, got.body)


def _masked(session: Session, text: str) -> str:
    """The service's words, with its secrets and the session's (and the run's) masked."""
    from sdd_git.masking.returned import mask_returned

    return session.masked(mask_returned(text))


def _url(base: str, path: str, query: Mapping[str, Any] | None) -> str:
    if path.startswith(("http://", "https://")):
        url = path
        # The same scheme too: an https service's link to http on its own host would carry
        # the token in clear.
        there, here = urlsplit(url), urlsplit(base)
        if (there.scheme, there.netloc) != (here.scheme, here.netloc):
            from sdd_git.masking.returned import mask_returned

            shown = mask_returned(f"{there.scheme}://{there.hostname or ''}")
            raise Unavailable(f"a link points away from the service ({shown})")
    else:
        url = urljoin(base.rstrip("/") + "/", path.lstrip("/"))
    if query:
        kept = {k: v for k, v in query.items() if v is not None}
        url += ("&" if "?" in url else "?") + urlencode(kept, doseq=True)
    return url


def _reason(session: Session, answer: Answer) -> str:
    try:
        data = json.loads(answer.body)
    except ValueError:
        data = None
    said = ""
    if isinstance(data, dict):
        for key in ("message", "error", "errorMessages", "errors", "error_description"):
            if data.get(key):
                said = json.dumps(data[key]) if not isinstance(data[key], str) else data[key]
                break
    if not said:
        said = answer.text()
    return _masked(session, " ".join(said.split()))[:_SNIPPET]


def _checked(session: Session, answer: Answer, source: str, missing_on_403: bool) -> Answer:
    status = answer.status
    if 200 <= status < 300:
        return answer
    reason = _reason(session, answer)
    if status in (404, 410) or (status == 403 and missing_on_403):
        raise Missing(f"{source} on {session.name}", f"the service answered {status}")
    if status == 401:
        raise NotSignedIn(
            f"{session.name} refused the sign-in ({status}): {reason}",
            hint=f"sign in again: sdd connect {session.name}",
        )
    if status in (400, 403, 405, 406, 409, 422):
        raise Refused(f"{session.name} refused it ({status}): {reason}")
    raise Unavailable(f"{session.name} could not answer ({status}): {reason}")
