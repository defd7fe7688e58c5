"""The Redis broker transport (workers.redisbroker) on a real Redis: kombu's, with one client per
channel for its plain commands instead of a new one per publish and per acknowledgement."""

from __future__ import annotations

from workers import redisbroker
from workers.testing import redis_site


def test_one_client_per_channel_carries_every_publish_and_ack(redis_url):
    app, _ = redis_site(redis_url)
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        assert isinstance(channel, redisbroker.Channel)
        made: list[object] = []
        make = channel.Client
        channel.Client = lambda **kwargs: made.append(kwargs) or make(**kwargs)
        queue = connection.SimpleQueue("redisbroker-test")
        try:
            for n in range(5):
                queue.put({"n": n})
            received = []
            for _ in range(5):
                message = queue.get(timeout=5)
                received.append(message.payload["n"])
                message.ack()
            assert received == [0, 1, 2, 3, 4]
            assert len(made) == 1, made  # kombu's own Redis channel: one per command
            # After a fork (or a reconnect) the channel's pools are new, and so is its client.
            client = channel._create_client()
            channel._after_fork()
            assert channel._create_client() is not client
            assert channel._create_client().ping()
            queue.put({"n": 5})
            assert queue.get(timeout=5).payload == {"n": 5}
        finally:
            queue.close()


def test_a_channel_closed_after_its_connection_puts_its_unacked_messages_back(redis_url):
    """kombu may close a channel after its transport let go of the connection (the consumer
    dropping a lost broker connection): its unacknowledged messages still go back to their
    queue, and the close does not fail (it killed the worker: "'NoneType' object has no
    attribute 'hostname'")."""
    app, _ = redis_site(redis_url)
    with app.connection_for_write() as connection:
        queue = connection.SimpleQueue("redisbroker-restore-test")
        try:
            queue.put({"n": 1})
            message = queue.get(timeout=5)  # delivered, never acknowledged
            assert message.payload == {"n": 1}
            channel = queue.channel
            transport = channel.connection
            client, transport.client = transport.client, None  # as kombu leaves it
            try:
                channel.close()  # puts the unacknowledged message back
            finally:
                transport.client = client
        finally:
            queue.close()
    with app.connection_for_write() as connection:
        again = connection.SimpleQueue("redisbroker-restore-test")
        try:
            message = again.get(timeout=5)
            assert message.payload == {"n": 1}
            message.ack()
        finally:
            again.close()
