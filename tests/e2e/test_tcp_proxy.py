"""The test proxy forwards, and black-holes the connections open at the time (no cluster)."""

from __future__ import annotations

import socket
import threading

from tests.e2e.processes import free_loopback_port
from tests.e2e.tcp_proxy import TcpProxy

TIMEOUT_S = 2.0


def _echo_server() -> tuple[socket.socket, int]:
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    port: int = server.getsockname()[1]
    return server, port


def _echo(conn: socket.socket) -> None:
    with conn:
        while data := conn.recv(1024):
            conn.sendall(data)


def _round_trip(sock: socket.socket, payload: bytes) -> bytes:
    sock.sendall(payload)
    return sock.recv(1024)


def test_a_black_hole_silences_open_connections_and_lets_new_ones_through() -> None:
    server, target = _echo_server()
    port = free_loopback_port()
    with server, TcpProxy(port, target) as proxy:
        proxy.start()
        old = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
        assert _round_trip(old, b"before") == b"before"

        assert proxy.black_hole() == 1
        old.sendall(b"lost")
        try:
            answer: bytes | None = old.recv(1024)
        except TimeoutError:
            answer = None
        new = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT_S)
        fresh = _round_trip(new, b"after")
        old.close()
        new.close()

    # Neither an answer nor a close (b"") came back on the old connection: silence.
    assert answer is None
    assert fresh == b"after"
    assert proxy.connections == 2
