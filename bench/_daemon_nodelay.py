"""``python -m bench._daemon_nodelay run --config FILE``: ``boardd`` with TCP_NODELAY on its MQTT sockets.

A what-if for the benchmark only: paho-mqtt (under aiomqtt) leaves Nagle's algorithm on,
so a QoS 1 publish that follows a QoS 0 one (which the broker never answers) waits for
the broker's delayed ACK. This wrapper sets ``TCP_NODELAY`` on the sockets paho opens
and then runs the unchanged ``boardd`` command line, to measure what the fix would give.
"""

from __future__ import annotations

import socket
from typing import Any

import paho.mqtt.client as paho

from boardd.cli import main

_original = paho.Client._create_socket_connection


def _nodelay_connection(self: Any) -> socket.socket:
    sock = _original(self)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


paho.Client._create_socket_connection = _nodelay_connection  # type: ignore[method-assign]

if __name__ == "__main__":
    raise SystemExit(main())
