"""What a child process gets of sdd's own environment: a short list of names, nothing else.

A variable's name says nothing sure about its value: CI engines put tokens under plain names
(`CI_JOB_JWT`, `ACTIONS_ID_TOKEN_REQUEST_TOKEN`), and so does anyone (`MY_THING`). So a child
process (a role's command in the sandbox, sdd's own git calls for a role, an MCP server) starts
from this list, never from "everything but what looks secret"; what sdd sets itself (SDD_RUN_ID,
git's hardening) and what her confirmed config names for that one child are added by its caller.
"""

from __future__ import annotations

from collections.abc import Mapping

# The locale's own categories, by name: `LC_*` as a pattern would pass any variable so named,
# and ssh's `SendEnv LC_*` is a known way to carry other values under such names.
LOCALE = (
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_ADDRESS",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_IDENTIFICATION",
    "LC_MEASUREMENT",
    "LC_MESSAGES",
    "LC_MONETARY",
    "LC_NAME",
    "LC_NUMERIC",
    "LC_PAPER",
    "LC_TELEPHONE",
    "LC_TIME",
)
# The identity she set for git in her environment is hers, and a commit made for her needs it.
GIT_IDENTITY = tuple(
    f"GIT_{who}_{what}" for who in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL", "DATE")
)
# How her machine reaches the network and whom it trusts there: a command the stop allowed the
# network fails without them behind a proxy. A proxy address holding a password is a secret and
# is dropped by the caller, as any allowed variable whose value holds one.
NETWORK = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)
# Not PWD: it names the folder sdd was started in, never the child's own (the product, a scratch
# folder); bash and bubblewrap set the right one.
CHILD_ENV: tuple[str, ...] = (
    "PATH",
    "HOME",
    *LOCALE,
    "TERM",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    *GIT_IDENTITY,
    *NETWORK,
)


def allowed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` that CHILD_ENV names, and no other."""
    return {name: environ[name] for name in CHILD_ENV if name in environ}
