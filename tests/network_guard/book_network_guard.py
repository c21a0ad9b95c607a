"""Refuse every network connection that leaves this machine; the loopback (127.0.0.1, ::1) stays open.

The book runs offline: its tests, its notebooks and the site build must never reach the internet.
`activate()` (called by the tests' conftest) blocks the network in the pytest process and, through
`BOOK_BLOCK_NETWORK=1` and this folder on `PYTHONPATH` (whose `sitecustomize.py` calls `install()`),
in every Python process the tests start: notebook kernels, the site build, scripts. nbval talks to
kernels over ZeroMQ on 127.0.0.1 and the site checks serve the site on 127.0.0.1, so the loopback is
allowed; Unix sockets are too.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Any

ENV_FLAG = "BOOK_BLOCK_NETWORK"
GUARD_DIR = Path(__file__).resolve().parent
LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"}

_true_connect = socket.socket.connect
_true_connect_ex = socket.socket.connect_ex
_true_sendto = socket.socket.sendto
_true_getaddrinfo = socket.getaddrinfo


class NetworkBlockedError(RuntimeError):
    """Raised on any attempt to reach a host other than this machine while the guard is on.

    A RuntimeError, not an OSError, so that libraries that retry or fall back on connection errors
    cannot swallow it silently.
    """


def is_local(host: Any) -> bool:
    """True for the loopback addresses, "localhost", and the "any" address of a server socket."""
    if host is None or host in ("", b""):
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    host = host.split("%", 1)[0].strip("[]").lower()
    if host in LOCAL_NAMES or host == socket.gethostname().lower():
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _check(address: Any, what: str) -> None:
    if isinstance(address, tuple) and address and not is_local(address[0]):
        port = f":{address[1]}" if len(address) > 1 else ""
        raise NetworkBlockedError(
            f"{what} {address[0]}{port} refused: the book runs offline and its tests block every "
            f"non-local network connection ({ENV_FLAG}=1, tests/network_guard)"
        )


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(address, "connection to")
    return _true_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(address, "connection to")
    return _true_connect_ex(self, address)


def _guarded_sendto(self: socket.socket, data: Any, *args: Any) -> int:
    _check(args[-1] if args else None, "datagram to")
    return _true_sendto(self, data, *args)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    _check((host,), "name lookup of")
    return _true_getaddrinfo(host, *args, **kwargs)


def install() -> None:
    """Block non-local connections, datagrams and name lookups in this process."""
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = _guarded_sendto  # type: ignore[method-assign,assignment]
    socket.getaddrinfo = _guarded_getaddrinfo


def uninstall() -> None:
    """Restore the real socket functions."""
    socket.socket.connect = _true_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _true_connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = _true_sendto  # type: ignore[method-assign]
    socket.getaddrinfo = _true_getaddrinfo


def is_installed() -> bool:
    return socket.socket.connect is _guarded_connect


def activate(environ: os._Environ[str] | dict[str, str] = os.environ) -> None:
    """Block the network here and in every Python process started from here on."""
    environ[ENV_FLAG] = "1"
    paths = [p for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(GUARD_DIR) not in paths:
        environ["PYTHONPATH"] = os.pathsep.join([str(GUARD_DIR), *paths])
    install()
