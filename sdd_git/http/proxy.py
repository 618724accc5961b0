"""Which proxy a request goes through: HTTPS_PROXY / HTTP_PROXY (and their lower-case forms),
read as urllib reads them, except for a host NO_PROXY names and for loopback, which never go
through one (a local model server, a test's server)."""

from __future__ import annotations

import ipaddress
from urllib.parse import unquote, urlsplit


def proxy_for(scheme: str, host: str) -> str | None:
    """The proxy URL for this scheme and host, or None (loopback, NO_PROXY, or none set)."""
    import urllib.request

    if is_loopback(host):
        return None
    proxy = urllib.request.getproxies().get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    return proxy


def is_loopback(host: str) -> bool:
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def address(proxy: str) -> tuple[str, int]:
    """The proxy's host and port (80 when it names none)."""
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return parts.hostname or "", parts.port or 80


def credentials(proxy: str) -> dict[str, str]:
    """The Proxy-Authorization header for a proxy URL with a user in it, else nothing."""
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if not parts.username:
        return {}
    import base64

    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode()}
