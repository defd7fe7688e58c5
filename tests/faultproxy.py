"""A TCP proxy a test controls, in front of a real server (PostgreSQL, Redis), to inject network
faults without touching the server itself:

- `refuse()`: every open connection is closed and new ones are refused (the server is down);
- `blackhole()`: connections stay open but nothing is forwarded either way, and new connections
  are accepted and never answered (packets dropped: nobody says anything);
- `restore()`: forwards again (connections that lost bytes while black-holed are broken; the
  client is expected to drop them).

    with FaultProxy(5432) as proxy:
        url = f"postgresql+psycopg://postgres@127.0.0.1:{proxy.port}/test"
        proxy.blackhole(); ...; proxy.restore()
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

PASS, REFUSE, BLACKHOLE = "pass", "refuse", "blackhole"


class FaultProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.mode = PASS
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                         name=f"faultproxy-{target_port}")
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    # --- the test's controls -----------------------------------------------------------------
    def start(self) -> FaultProxy:
        self._thread.start()
        self._run(self._listen())
        return self

    def refuse(self) -> None:
        self.mode = REFUSE
        self._run(self._close_all())

    def blackhole(self) -> None:
        self.mode = BLACKHOLE

    def restore(self) -> None:
        self.mode = PASS
        if self._server is None:
            self._run(self._listen())

    def stop(self) -> None:
        self.mode = REFUSE
        self._run(self._close_all())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- inside the proxy's event loop -------------------------------------------------------
    def _run(self, coroutine) -> None:  # type: ignore[no-untyped-def]
        asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close_all(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()  # a reset, as from a server that went away
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        if self.mode != PASS:  # black-holed: accept, read and drop, never answer
            await self._drain(reader, None)
            self._forget(writer)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            self._forget(writer)
            return
        self._writers.add(up_writer)
        await asyncio.gather(self._drain(reader, up_writer), self._drain(up_reader, writer))
        self._forget(writer)
        self._forget(up_writer)

    async def _drain(self, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter | None) -> None:
        """Forward what `reader` receives to `writer` while passing; drop it otherwise."""
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                if self.mode == PASS and writer is not None:
                    writer.write(data)
                    await writer.drain()
        if writer is not None and self.mode == PASS:
            writer.transport.abort()  # one side closed: close the other

    def _forget(self, writer: asyncio.StreamWriter) -> None:
        self._writers.discard(writer)
        writer.transport.abort()
