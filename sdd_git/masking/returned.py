"""Secrets in what a connector gives back, and the mask a connector's session carries.

A service may return a credential in a record (a token pasted into an issue, a webhook URL in a
job's log, a `password` field of a build's parameters). What the role reads has it masked: the
credentials whose shape is known (GitHub, GitLab, Slack, AWS, JWTs, private keys, URLs with a
password), and any value under a secret-named key that looks like a credential
(`masker.looks_like_credential`). Ordinary identifiers (commit hashes, run ids) stay readable:
only a secret-named key makes an unknown shape a secret."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from sdd_git.masking.masker import MASK, Masker, looks_like_credential, url_credentials

# Credentials whose shape says what they are.
_KNOWN = re.compile(
    r"""
    \b(?:gh[pousr]_[A-Za-z0-9]{30,}            # GitHub tokens (classic, OAuth, app, refresh)
      |github_pat_[A-Za-z0-9_]{30,}            # GitHub fine-grained tokens
      |glpat-[A-Za-z0-9_-]{20,}                # GitLab personal access tokens
      |gl(?:oas|dt|rt|ptt|ft|cbt|imt|agent|soat|ffct)-[A-Za-z0-9_-]{20,}  # other GitLab tokens
      |xox[abposre]-[A-Za-z0-9-]{10,}          # Slack tokens
      |xapp-[0-9]-[A-Za-z0-9-]{10,}            # Slack app tokens
      |(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}     # AWS access key ids
      |AIza[0-9A-Za-z_-]{35}                   # Google API keys
      |sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}    # OpenAI, Anthropic keys
      |npm_[A-Za-z0-9]{36}                     # npm tokens
      |AKC[a-zA-Z0-9]{10,}                     # JFrog API keys
      |cmVmd[A-Za-z0-9]{50,}                   # JFrog reference tokens (base64 of "reftkn")
      |eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}  # JSON Web Tokens
    )
    | https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+  # Slack webhooks
    | https://[a-z0-9.-]*webhook\.office\.com/[^\s"'<>]+                        # Teams webhooks
    | -----BEGIN[A-Z ]*PRIVATE\ KEY-----.*?(?:-----END[A-Z ]*PRIVATE\ KEY-----|\Z)
    """,
    re.VERBOSE | re.DOTALL,
)
# `"token": "value"`, `password=value`, `api_key: value`: a secret-named key and its value.
_KEY = (
    r"(?:[A-Za-z0-9]*[_-])*(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|auth|"
    r"authorization|credentials?|private[_-]?key|session|cookie|signature)(?:[_-][A-Za-z0-9]+)*"
)
_KEYED = re.compile(
    rf"""(?ix)
    (["']?\b{_KEY}["']?\s*[:=]\s*)          # the key and its separator
    (?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|(?:(?:Bearer|Basic|token)\s+)?([^\s,;"'<>}}\])]+))
    """
)


_SECRET_KEY = re.compile(rf"(?i)^{_KEY}$")


def is_secret_key(key: str) -> bool:
    """Whether a field of a returned record is named like a secret (`token`, `api_key`...)."""
    return bool(_SECRET_KEY.match(key))


def mask_returned(text: str) -> str:
    """`text` from a service, with every credential it holds masked."""
    text = _KNOWN.sub(MASK, text)
    for password in url_credentials(text):
        if len(password) >= 4:
            text = text.replace(password, MASK)

    def keyed(match: re.Match[str]) -> str:
        value = next((g for g in match.groups()[1:] if g is not None), "")
        if not looks_like_credential(value) or value == MASK:
            return match.group(0)
        return match.group(0).replace(value, MASK)

    return _KEYED.sub(keyed, text)


def session_mask(
    tokens: Iterable[str | None], outer: Callable[[str], str] | None = None
) -> Callable[[str], str]:
    """The mask a connector's session carries: its own token in every form the masker knows,
    then `outer` (the run's masker, which knows every other secret)."""
    own = Masker([t for t in tokens if t])
    if outer is None:
        return own

    def both(text: str) -> str:
        return outer(own(text))

    return both
