"""One call of one configured connector, as every caller makes it (the role's tools, the
person's `sdd change new --from`, the pull-request and deploy tools): signed in, its answer's
secrets masked. Whether the call may run at all was decided before (the guard and the boundary
for a role; the person herself for her commands)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sdd_git.connectors.base import ConnectorError, Result, Session, Unavailable
from sdd_git.connectors.config import ConnectorConfig, find_connector
from sdd_git.connectors.registry import make_connector, session_for
from sdd_git.connectors.signin import find_token, require_token
from sdd_git.errors import SddError
from sdd_git.masking.masker import MASK, looks_like_credential
from sdd_git.masking.returned import is_secret_key, mask_returned
from sdd_git.root import Root


def call_connector(
    root: Root,
    name: str,
    operation: str,
    args: Mapping[str, Any],
    *,
    mask: Callable[[str], str] | None = None,
    config: ConnectorConfig | None = None,
) -> Result:
    """Run `operation` on the configured connector `name`. `Missing` and the other connector
    errors pass through; what comes back has every credential masked (the session's token, any
    secret `mask` knows, and whatever looks like one)."""
    config = config or find_connector(root, name)
    connector = make_connector(config.kind)
    token = find_token(config)
    require_token(config, bool(getattr(connector, "needs_token", True)), token)
    session = session_for(root, config, mask, token)
    result = guarded_call(session, lambda: connector.call(session, operation, args))
    return Result(session.masked(mask_returned(result.text)), _masked(result.data, session.masked))


def guarded_call(session: Session, call: Callable[[], Result]) -> Result:
    """`call()`, with whatever it raises made one of the connector errors here, at the edge: a
    connector's own error with the service's secrets masked in its words (a token echoed in an
    error body, someone else's key), and a foreign one (a service answering in a shape the
    connector did not expect: a list for an object, `null`) as Unavailable, never a crash whose
    traceback could quote what it was handling."""
    try:
        return call()
    except ConnectorError as exc:
        exc.message = session.masked(mask_returned(exc.message))
        exc.args = (exc.message,)
        if exc.hint:
            exc.hint = session.masked(mask_returned(exc.hint))
        raise
    except SddError:
        raise
    except Exception as exc:
        raise Unavailable(
            f"{session.name}: its answer could not be read ({type(exc).__name__}); nothing "
            "was assumed from it"
        ) from None


def _masked(value: Any, mask: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return mask(mask_returned(value))
    if isinstance(value, Mapping):
        return {
            str(k): MASK
            if is_secret_key(str(k)) and isinstance(v, str) and looks_like_credential(v)
            else _masked(v, mask)
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_masked(v, mask) for v in value]
    return value
