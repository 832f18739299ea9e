"""Listening sockets that several processes share by port: ``SO_REUSEPORT`` (Linux and the
BSDs), for ``mcpwire serve --workers N``. The kernel spreads new connections over the
processes listening on the port (on Linux by a hash of the connection's addresses), so each
worker accepts its own connections with no lock and no shared accept queue."""

from __future__ import annotations

import socket

import trio

__all__ = ["reuse_port_available", "reuse_port_listeners"]


def reuse_port_available() -> bool:
    """Whether this platform lets several sockets listen on one port (``SO_REUSEPORT``)."""
    return hasattr(socket, "SO_REUSEPORT")


async def reuse_port_listeners(host: str, port: int) -> list[trio.SocketListener]:
    """Like ``trio.open_tcp_listeners(port, host=host)``, with ``SO_REUSEPORT`` set on each
    socket before it binds. ``port`` must be the one the other workers use (not 0)."""
    if not reuse_port_available():
        raise OSError("this platform has no SO_REUSEPORT")
    infos = await trio.socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    listeners: list[trio.SocketListener] = []
    try:
        for family, kind, proto, _name, address in infos:
            sock = trio.socket.socket(family, kind, proto)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                await sock.bind(address)
                sock.listen(socket.SOMAXCONN)
            except BaseException:
                sock.close()
                raise
            listeners.append(trio.SocketListener(sock))
    except BaseException:
        for listener in listeners:
            await trio.aclose_forcefully(listener)
        raise
    return listeners
