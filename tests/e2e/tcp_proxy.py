"""A TCP forwarder on loopback that starts listening when the test says so.

It lets a daemon be pointed at an API server address where nothing answers yet, and then makes
the real API server appear there: TLS passes through untouched, so the daemon's kubeconfig (CA
and client certificate) works through it as it would directly.

`black_hole` makes every connection open at that moment go silent, the way a dead NAT entry or
a hung load balancer does: both sockets stay open and whatever arrives on either is dropped,
so neither end sees an error or a close, only silence. Connections made afterwards are
forwarded as usual.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

BUFFER_BYTES = 65536


class _Connection:
    """One client connection and its upstream twin; forwards until black-holed."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.forwarding = threading.Event()
        self.forwarding.set()

    def pump(self, source: socket.socket, sink: socket.socket) -> None:
        """Copies bytes one way until either side closes, then closes the other direction."""
        try:
            while data := source.recv(BUFFER_BYTES):
                if self.forwarding.is_set():
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            # A black hole passes nothing on, not even a close.
            if self.forwarding.is_set():
                with contextlib.suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)


class TcpProxy:
    def __init__(self, listen_port: int, target_port: int, host: str = "127.0.0.1") -> None:
        self.listen_port = listen_port
        self.target_port = target_port
        self.host = host
        self.connections = 0
        self._server: socket.socket | None = None
        self._sockets: list[socket.socket] = []
        self._connections: list[_Connection] = []
        self._lock = threading.Lock()

    def start(self) -> None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((self.host, self.listen_port))
        server.listen(64)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def black_hole(self) -> int:
        """Silences every connection open now; returns how many there were."""
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            connection.forwarding.clear()
        return len(connections)

    def stop(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
            server, self._server = self._server, None
        for sock in [*sockets, *([server] if server else [])]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def __enter__(self) -> TcpProxy:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # stopped
            try:
                upstream = socket.create_connection((self.host, self.target_port))
            except OSError:
                client.close()
                continue
            connection = _Connection(client, upstream)
            with self._lock:
                self.connections += 1
                self._sockets.extend((client, upstream))
                self._connections.append(connection)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=connection.pump, args=(source, sink), daemon=True).start()
