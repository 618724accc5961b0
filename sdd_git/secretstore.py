"""The OS keyring, through `keyring`: the one place sdd keeps a secret she gave it (a
connector's token from `sdd connect`, a model key from `sdd keys set`).

Service "sdd-git"; the user name says what the secret is for (a connector's name, or
`model-key/NAME`). `keyring` is imported here only, and only when a secret is looked up or
stored: `sdd --help` and `sdd role list` never load it. Every error says what to do instead
(`hint`), since the caller knows the other route (a variable)."""

from __future__ import annotations

from typing import Any

from sdd_git.errors import SddError

KEYRING_SERVICE = "sdd-git"
MODEL_KEY_PREFIX = "model-key/"  # `sdd keys set NAME` keeps the key under model-key/NAME


def model_key(name: str) -> str | None:
    """The model key `sdd keys set NAME` stored, or None."""
    return get_secret(MODEL_KEY_PREFIX + name)


class NoKeyring(SddError):
    """No OS keyring on this machine (a CI runner, a container): secrets go in a variable."""


def get_secret(user: str) -> str | None:
    """The secret kept under `user`, or None (also when there is no keyring at all)."""
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, user) or None
    except (KeyringError, OSError, RuntimeError, ValueError):
        return None  # no backend, a locked or broken one: nothing kept this way


def require_keyring(hint: str) -> None:
    """Refuse at once when there is no OS keyring to keep a secret in: before she is asked for
    it, not after she pasted it."""
    keyring, _ = _keyring(hint)
    try:
        from keyring.backends import fail

        backend = keyring.get_keyring()
        priority = float(getattr(backend, "priority", 1))
    except Exception:  # a backend that cannot even say what it is keeps nothing
        raise no_keyring(hint) from None
    # `fail` and `null` are keyring's own "none here"; an empty chain ranks below them.
    if isinstance(backend, fail.Keyring) or priority <= 0:
        raise no_keyring(hint)


def store_secret(user: str, secret: str, what: str, hint: str) -> str:
    """Keep `secret` under `user`; gives back the keyring's name. `what` names it in errors."""
    keyring, errors = _keyring(hint)
    try:
        keyring.set_password(KEYRING_SERVICE, user, secret)
    except errors.NoKeyringError:
        raise no_keyring(hint) from None
    except (errors.KeyringError, OSError, RuntimeError) as exc:
        raise NoKeyring(
            f"the OS keyring refused {what} ({type(exc).__name__})", hint=hint
        ) from None
    return backend_name(keyring)


def delete_secret(user: str, what: str) -> bool:
    """Remove the secret under `user`; False when none was there."""
    keyring, errors = _keyring("remove it with your keyring's own tool (service sdd-git)")
    try:
        if keyring.get_password(KEYRING_SERVICE, user) is None:
            return False
        keyring.delete_password(KEYRING_SERVICE, user)
    except errors.NoKeyringError:
        raise no_keyring("there is nothing to remove") from None
    except errors.PasswordDeleteError:
        return False
    except (errors.KeyringError, OSError, RuntimeError) as exc:
        raise NoKeyring(
            f"the OS keyring could not remove {what} ({type(exc).__name__})",
            hint="remove it with your keyring's own tool (service sdd-git)",
        ) from None
    return True


def _keyring(hint: str) -> tuple[Any, Any]:
    try:
        import keyring
        from keyring import errors
    except ImportError:
        raise NoKeyring(
            "the keyring package is not installed, so sdd cannot keep a secret",
            hint="pip install keyring, or " + hint,
        ) from None
    return keyring, errors


def backend_name(keyring: Any) -> str:
    try:
        backend = keyring.get_keyring()
        return str(getattr(backend, "name", type(backend).__name__))
    except Exception:  # only for the message
        return "the OS keyring"


def no_keyring(hint: str) -> NoKeyring:
    return NoKeyring(
        "there is no OS keyring here to keep the secret in (as on most CI runners)", hint=hint
    )
