"""Whether an address is on this machine or its private network, decided by `ipaddress`
(a string prefix cannot see that 172.16.0.0/12 is private, nor that 172.32.0.1 is not)."""

from __future__ import annotations

from urllib.parse import urlsplit

# Names that are this machine or the local network by convention, whatever they resolve to.
_LOCAL_NAMES = ("localhost", "host.docker.internal")
_LOCAL_SUFFIXES = (".local", ".localhost")


def host_of(url: str) -> str:
    """The host of a URL, or of `host[:port]` written without a scheme, in lower case."""
    try:
        host = urlsplit(url if "://" in url else f"//{url}").hostname
    except ValueError:
        return ""
    return (host or "").lower()


def is_local(url: str) -> bool:
    """True for a URL (or bare host) on loopback, a private or link-local network, or a local
    name (localhost, *.local, *.localhost, host.docker.internal)."""
    import ipaddress

    host = host_of(url)
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
