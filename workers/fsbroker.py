"""The embedded broker: kombu's filesystem transport, made safe for several processes.

kombu's filesystem transport writes a message file in place and a consumer may pick it up
before it is written (an empty file, and the worker dies on the JSON error); consumers also move
files to the system temp folder, which may be another file system (copy, not rename). Here a
message is written to `<queue folder>/../tmp/` and renamed into the queue folder (atomic), and a
consumer claims a message by renaming it into `<queue folder>/../claimed/` (atomic: exactly one
consumer wins), then reads and deletes it.

A consumer with nothing to read waits for the queue folder to change, not for a poll: kombu's
virtual transport sleeps `polling_interval` between two looks at the folder (0.1 s: every house
move waited for it), and here that sleep is a wait on an inotify watch of the folder (a message
renamed into it, or written there), cut short by the first event (`Wake`). The watch is set up
before the consumer's first look, so a message published between a look and the wait wakes it
all the same (the kernel queues the event). Where inotify is unavailable (not Linux, no
inotify_simple, out of watches) the wait is the plain sleep, and `polling_interval` is the
longest a message waits either way (a missed event, an overflowed event queue).

Everything else is kombu's.

Celery uses it for the embedded default as `bummerlfs://` (registered in workers.app).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import time
import uuid
from queue import Empty
from typing import Any

from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads


class Channel(filesystem.Channel):
    def _side_folder(self, name: str) -> str:
        folder = os.path.join(os.path.dirname(os.path.abspath(self.data_folder_out)), name)
        os.makedirs(folder, exist_ok=True)
        return folder

    def _put(self, queue, message, **kwargs):  # type: ignore[no-untyped-def,override]
        name = f"{int(filesystem.monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        temporary = os.path.join(self._side_folder("tmp"), name)
        with open(temporary, "wb") as f:
            f.write(str_to_bytes(dumps(message)))
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, os.path.join(self.data_folder_out, name))

    def _get(self, queue, timeout=None):  # type: ignore[no-untyped-def]
        suffix = f".{queue}.msg"
        claimed_folder = self._side_folder("claimed")
        for name in sorted(os.listdir(self.data_folder_in)):
            if not name.endswith(suffix) or name.partition(".")[2] != suffix[1:]:
                continue
            claimed = os.path.join(claimed_folder, f"{os.getpid()}-{name}")
            try:
                os.rename(os.path.join(self.data_folder_in, name), claimed)
            except OSError:
                continue  # another consumer took it
            with open(claimed, "rb") as f:
                payload = f.read()
            os.remove(claimed)
            return loads(bytes_to_str(payload))
        raise Empty()

    def basic_ack(self, delivery_tag, multiple=False):  # type: ignore[no-untyped-def]
        super().basic_ack(delivery_tag, multiple)
        self._poke()

    def basic_reject(self, delivery_tag, requeue=False):  # type: ignore[no-untyped-def]
        super().basic_reject(delivery_tag, requeue)
        self._poke()

    def _poke(self) -> None:
        """The consumer may wait with its prefetch slot taken: wake it (Wake)."""
        wake = getattr(self.connection, "wake", None)
        if wake is not None:
            wake.poke()


log = logging.getLogger(__name__)


class Wake:
    """Waits up to a given time for a change in `folder` (a new message: inotify) or a `poke`
    (an acknowledgement, which frees the consumer's prefetch slot: a message that came while the
    slot was taken was seen and left, and its event is spent). Without inotify, only a poke or
    the time ends the wait."""

    def __init__(self, folder: str) -> None:
        self.inotify: Any = None
        self.poked, self.poker = os.pipe()
        os.set_blocking(self.poked, False)
        os.set_blocking(self.poker, False)
        try:
            from inotify_simple import INotify, flags

            inotify = INotify()
            try:
                inotify.add_watch(folder, flags.MOVED_TO | flags.CLOSE_WRITE)
            except OSError:
                inotify.close()
                raise
            self.inotify = inotify
        except (ImportError, OSError) as e:
            log.info("embedded broker: no inotify (%s); polling %s", e, folder)

    def wait(self, seconds: float) -> None:
        poller = select.poll()  # not select.select: it fails on descriptors past 1024
        for fd in [self.poked] + ([self.inotify.fileno()] if self.inotify is not None else []):
            poller.register(fd, select.POLLIN)
        ready = {fd for fd, _ in poller.poll(max(0.0, seconds) * 1000)}
        if self.poked in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(self.poked, 4096)
        if self.inotify is not None and self.inotify.fileno() in ready:
            self.inotify.read(timeout=0)  # drop the events: the next look reads the folder

    def poke(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self.poker, b"!")

    def close(self) -> None:
        if self.inotify is not None:
            self.inotify.close()
            self.inotify = None
        for fd in (self.poked, self.poker):
            with contextlib.suppress(OSError):
                os.close(fd)


def stopping() -> bool:
    """Whether this process is a Celery worker told to stop (its signal handler sets it); the
    worker's loop looks only between two drains, which wait up to 2 s each."""
    from celery.worker import state

    return bool(state.should_stop is not None or state.should_terminate is not None)


class Transport(filesystem.Transport):
    Channel = Channel
    driver_name = "bummerlfs"
    wake: Wake | None = None

    def drain_events(self, connection, timeout=None):  # type: ignore[no-untyped-def,override]
        """kombu's loop (virtual.Transport.drain_events), the sleep between two looks at the
        folder replaced by `Wake.wait`; the watch is made at the first call (a publisher's
        connection, which never drains, holds none)."""
        if self.wake is None:
            options = self.client.transport_options if self.client is not None else {}
            self.wake = Wake(options.get("data_folder_in", "."))
        assert self.cycle is not None
        started = time.monotonic()
        interval = self.polling_interval
        if timeout and interval and interval > timeout:
            interval = timeout
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
            except Empty:
                if timeout is not None and time.monotonic() - started >= timeout:
                    raise TimeoutError() from None
                if stopping():  # end the wait now: the worker's loop checks it between drains
                    raise TimeoutError() from None
                if interval is not None:
                    self.wake.wait(interval)
            else:
                break

    def close_connection(self, connection):  # type: ignore[no-untyped-def]
        if self.wake is not None:
            self.wake.close()
            self.wake = None
        super().close_connection(connection)
