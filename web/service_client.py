"""The web as a client of the engine service's PeopleService and HostingService (gRPC): the one
door through which a person's every action enters, exactly as a bot's does.

The web holds its own credential (`BUMMERL_WEB_TOKEN`, sent as `authorization: Bearer ...`),
server-side only: the browser never sees it. Each call that acts for a person names the
`person_id` of the browser's session; the service checks that the person owns the seat. A
HostingService call (`call(..., person_session=...)`) carries the person's session token in the
`bummerl-session` metadata instead: the service checks that session is live and that the
person is an author of the bot. The web never writes a match itself.

One gRPC channel per app (thread-safe, shared by every request). At most `SERVICE_CALLS` calls
are in flight at once: when the service is busy the others wait here, in turn, for up to
`SERVICE_QUEUE_SECONDS` (then a 503 "busy", nothing sent), so that waiting in a queue does
not use up a call's own deadline (`SERVICE_TIMEOUT_SECONDS`, 10 s) at the service.

A refused call becomes a `Refused` with the HTTP status it maps to and the service's message
(which names the rule of an illegal action, e.g. "R3.4 must follow suit").
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

import grpc
from flask import Flask, current_app

# gRPC status → HTTP status of the web's answer.
HTTP_OF = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


@dataclass
class Refused(Exception):
    """The service refused a call (or could not be reached): `status` is the HTTP status,
    `code` the gRPC status's name, `message` the service's own words."""

    status: int
    code: str
    message: str
    rule: str | None = None  # the rule an illegal action breaks (`bummerl-rule` metadata)
    retry_after: int | None = None  # s, of a RESOURCE_EXHAUSTED (`retry-after` metadata)

    def __str__(self) -> str:
        return self.message


def service_address(app: Flask) -> str:
    return (app.config.get("SERVICE_ADDRESS") or os.environ.get("BUMMERL_SERVICE_ADDRESS")
            or "127.0.0.1:50051")


def web_token(app: Flask) -> str | None:
    return app.config.get("WEB_TOKEN") or os.environ.get("BUMMERL_WEB_TOKEN") or None


class Client:
    """The PeopleService and HostingService stubs of one app, with its credential."""

    def __init__(self, app: Flask) -> None:
        from bummerl.v1 import hosting_pb2_grpc, people_pb2_grpc

        self.address = service_address(app)
        self.token = web_token(app)
        self.timeout = float(app.config.get("SERVICE_TIMEOUT_SECONDS", 10))
        self.slots = threading.BoundedSemaphore(int(app.config.get("SERVICE_CALLS", 32)))
        self.queue_s = float(app.config.get("SERVICE_QUEUE_SECONDS", 30))
        self.channel = grpc.insecure_channel(self.address)
        self.stub = people_pb2_grpc.PeopleServiceStub(self.channel)
        self.hosting = hosting_pb2_grpc.HostingServiceStub(self.channel)

    def call(self, method: str, request: Any, person_session: str | None = None) -> Any:
        """PeopleService's `method`; with `person_session`, HostingService's, for that
        person."""
        if not self.token:
            raise Refused(503, "UNAVAILABLE", "this web server has no credential for the engine "
                          "service (BUMMERL_WEB_TOKEN is not set): people cannot play here; "
                          "`bummerl up` sets it")
        if not self.slots.acquire(timeout=self.queue_s):
            raise Refused(503, "UNAVAILABLE", f"the engine service at {self.address} is busy: "
                          f"this call waited {self.queue_s:g} s for its turn; nothing was done, "
                          "try again")
        metadata: tuple[tuple[str, str], ...] = (("authorization", f"Bearer {self.token}"),)
        stub: Any = self.stub
        if person_session is not None:
            stub, metadata = self.hosting, (*metadata, ("bummerl-session", person_session))
        try:
            return getattr(stub, method)(request, timeout=self.timeout, metadata=metadata)
        except grpc.RpcError as e:
            call: Any = e
            code = call.code()
            message = call.details() or code.name
            if code == grpc.StatusCode.UNAVAILABLE:
                message = f"the engine service at {self.address} does not answer ({message})"
            trailing = dict(call.trailing_metadata() or ())
            rule = str(trailing["bummerl-rule"]) if "bummerl-rule" in trailing else None
            retry = str(trailing.get("retry-after", ""))
            raise Refused(HTTP_OF.get(code, 502), code.name, message, rule,
                          int(retry) if retry.isdigit() else None) from None
        finally:
            self.slots.release()

    def close(self) -> None:
        self.channel.close()


_lock = threading.Lock()


def client() -> Client:
    """The current app's client (made on first use)."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    found: Client | None = app.extensions.get("bummerl.people")
    if found is None:
        with _lock:
            found = app.extensions.get("bummerl.people")
            if found is None:
                found = app.extensions["bummerl.people"] = Client(app)
    return found
