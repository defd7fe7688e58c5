"""The Redis broker: kombu's Redis transport, with one client per channel for its plain commands.

kombu makes a new `redis.Redis` for every publish and every acknowledgement
(`Channel.conn_or_acquire`), and setting one up (its table of response callbacks) costs more CPU
than the command itself: about 0.4 ms of the 1.1 ms a task's publish took, on the service's
thread that announces house turns and in the worker that acknowledges them. A client takes a
connection from the channel's pool for each command (it is thread-safe), so one per channel does
the same work; it is dropped with the channel's pools (after a fork, on reconnecting). Everything
else is kombu's.

It also keeps the channel's connection parameters once read. When the consumer drops a lost
connection, kombu may close a channel whose transport has already let go of its connection: the
channel's unacknowledged messages are then put back over a new pool, whose parameters kombu reads
from that connection, and the worker died of "'NoneType' object has no attribute 'hostname'"
(seen in the chaos suite, after a Redis pause). With the parameters kept, they are put back.

Celery uses it for `redis://` and `rediss://` brokers (`broker_transport`, set in workers.app).
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis


class Channel(redis.Channel):
    _plain_client: Any = None
    _params: dict[bool, dict[str, Any]] | None = None  # _connparams, by `asynchronous`

    def _connparams(self, asynchronous: bool = False) -> Any:
        known = self._params if self._params is not None else {}
        if self.connection.client is None and asynchronous in known:
            return dict(known[asynchronous])  # the connection is gone: as it was
        params = super()._connparams(asynchronous=asynchronous)
        self._params = {**known, asynchronous: dict(params)}
        return params

    def _create_client(self, asynchronous: bool = False) -> Any:
        if asynchronous:
            return super()._create_client(asynchronous=True)
        if self._plain_client is None:
            self._plain_client = super()._create_client()
        return self._plain_client

    def _disconnect_pools(self) -> None:
        self._plain_client = None
        super()._disconnect_pools()


class Transport(redis.Transport):
    Channel = Channel
