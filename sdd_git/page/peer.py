"""Whose program is at the other end of a connection to her page.

Cookies are kept apart by host, not by port: a page that any other user of this computer serves
on another 127.0.0.1 port is sent her session cookie by her own browser. So the cookie alone
cannot tell her from another local user. On Linux the kernel can: its socket table names the
owner of every socket, and the client's end of a connection to the page is the socket whose own
address is the connection's peer address. The page looks it up once per connection, when the
connection is made, and refuses any other owner.

The table is asked for that one socket over sock_diag (the netlink interface `ss` uses: about
10 microseconds), and read from `/proc/net/tcp` and `/proc/net/tcp6` where netlink is refused
(about a millisecond each: the kernel walks its whole hash table to print them).

Only a socket still held by a program counts (its inode is not 0): a closed socket lingering in
the table (TIME_WAIT, an orphan) shows uid 0 there, which would pass for root's.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import socket
import struct
import sys
from pathlib import Path

TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_UID = 7  # the columns of a row: sl local rem st tx:rx tr:when retrnsmt uid timeout inode
_INODE = 9
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLMSG_ERROR = 2
_NLM_F_REQUEST = 1
_ALL_STATES = 0xFFFFFFFF
_NO_COOKIE = 0xFFFFFFFF
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port id
_OWNER_AT = _HEADER.size + 64  # inet_diag_msg: family..retrans (4), id (48), 3 counters, uid


def socket_owner(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """The uid that owns the live socket whose own end is `peer` and whose other end is
    `local` (the page's): the client's socket. None when there is no such socket."""
    try:
        return _asked(peer, local)
    except OSError:
        return _read(peer, local)


def _asked(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """Over sock_diag: the kernel looks up the one socket (inet_diag_req_v2 with its ids)."""
    ids = struct.pack("!HH", peer[1], local[1])
    ids += _word_address(peer[0]) + _word_address(local[0])
    ids += struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE)  # any interface, no cookie to check
    request = struct.pack("=BBBBI", socket.AF_INET, socket.IPPROTO_TCP, 0, 0, _ALL_STATES) + ids
    message = _HEADER.pack(_HEADER.size + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST, 1, 0)
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as link:
        link.settimeout(1)
        link.sendto(message + request, (0, 0))
        answer = link.recv(8192)
    kind = _HEADER.unpack_from(answer)[1]
    if kind == _NLMSG_ERROR:
        code = -struct.unpack_from("=i", answer, _HEADER.size)[0]
        if code == errno.ENOENT:
            return None
        raise OSError(code, os.strerror(code))
    if kind != _SOCK_DIAG_BY_FAMILY or len(answer) < _OWNER_AT + 8:
        raise OSError(errno.EPROTO, "an answer sock_diag does not give")
    uid, inode = struct.unpack_from("=II", answer, _OWNER_AT)
    return int(uid) if inode else None


def _word_address(host: str) -> bytes:
    """An IPv4 address as sock_diag takes it: the first of four 32-bit words."""
    return socket.inet_pton(socket.AF_INET, host) + bytes(12)


def _read(peer: tuple[str, int], local: tuple[str, int]) -> int | None:
    """From the text tables: the row whose local address is `peer` and remote is `local`."""
    for table in TABLES:
        six = table.name.endswith("6")
        wanted = (_table_address(*peer, six), _table_address(*local, six))
        try:
            with open(table, encoding="ascii") as handle:
                for line in handle:
                    fields = line.split()
                    if (
                        len(fields) > _INODE
                        and (fields[1], fields[2]) == wanted
                        and fields[_INODE] != "0"
                    ):
                        return int(fields[_UID])
        except OSError:
            continue
    return None


def _table_address(host: str, port: int, six: bool) -> str:
    """An address as the kernel prints it in its table: each 32-bit word of the address in the
    machine's own byte order, then the port, in hex capitals (IPv4 as mapped in tcp6)."""
    address = ipaddress.IPv4Address(host)
    packed = ipaddress.IPv6Address(f"::ffff:{address}").packed if six else address.packed
    words = struct.unpack(f"={len(packed) // 4}I", packed)
    return "".join(f"{word:08X}" for word in words) + f":{port:04X}"


def is_hers(peer: object, local: object) -> bool:
    """Whether the connection between `peer` and `local` (as asyncio's transport names them)
    comes from a program of the user who runs the page."""
    if not (isinstance(peer, tuple) and isinstance(local, tuple)):
        return False
    try:
        owner = socket_owner((str(peer[0]), int(peer[1])), (str(local[0]), int(local[1])))
    except (ValueError, IndexError):
        return False
    return owner is not None and owner == os.geteuid()


def can_tell_owners() -> bool:
    """Whether this system names a connection's owner: Linux, and a throwaway loopback
    connection of our own found as ours. Anything less, and the page relies on a random
    loopback address instead."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
            listening.bind(("127.0.0.1", 0))
            listening.listen(1)
            with socket.create_connection(listening.getsockname(), timeout=5):
                accepted, peer = listening.accept()
                with accepted:
                    return is_hers(peer, listening.getsockname())
    except OSError:
        return False
