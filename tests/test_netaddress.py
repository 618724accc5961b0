"""One `is_local`, on ipaddress: the private ranges whole, not their string prefixes."""

from __future__ import annotations

import pytest

from sdd_git.netaddress import is_local


@pytest.mark.parametrize(
    "url",
    [
        "http://172.16.0.1:8000/v1",
        "http://172.31.255.254/v1",
        "http://10.1.2.3:11434",
        "http://192.168.1.20/v1",
        "http://127.0.0.1:8080/v1",
        "http://127.9.9.9/",
        "http://[::1]:8080/v1",
        "http://localhost:11434",
        "http://LOCALHOST/",
        "http://gpu.local:8000",
        "http://host.docker.internal:11434",
        "localhost:11434",
        "10.0.0.1",
    ],
)
def test_local_addresses_are_local(url: str) -> None:
    assert is_local(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com/v1",
        "https://8.8.8.8/",
        "http://172.32.0.1/",  # just past 172.16.0.0/12
        "http://172.15.255.255/",
        "http://11.0.0.1/",
        "http://[2001:4860:4860::8888]/",
        "",
    ],
)
def test_public_addresses_are_not_local(url: str) -> None:
    assert not is_local(url)
