"""The embedded broker: kombu's filesystem transport, made safe for several processes.

kombu's filesystem transport writes a message file in place and a consumer may pick it up
before it is written (an empty file, and the worker dies on the JSON error); consumers also move
files to the system temp folder, which may be another file system (copy, not rename). Here a
message is written to `<queue folder>/../tmp/` and renamed into the queue folder (atomic), and a
consumer claims a message by renaming it into `<queue folder>/../claimed/` (atomic: exactly one
consumer wins), then reads and deletes it. Everything else is kombu's.

Celery uses it for the embedded default as `bummerlfs://` (registered in workers.app).
"""

from __future__ import annotations

import os
import uuid
from queue import Empty

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


class Transport(filesystem.Transport):
    Channel = Channel
    driver_name = "bummerlfs"
