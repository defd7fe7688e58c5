"""The engine service: the one door to every match (docs/architecture.md).

- `services.api`: the gRPC adapters and the request policy (the server, the servicers, the
  request guard, errors as gRPC statuses, TLS, health).
- `services.ops`: the plain functions of bots and the operator (registering and authenticating
  bots, challenges, suspending, rotating tokens, aborting matches).
- `services.live`: the streams: a bot's Play stream, spectators, the fan-out of committed
  changes in the process and between replicas (the change bus), presence, revocation.
- `services.core`: applying, persisting and timing every action of a match, and creating and
  reading matches; the values, errors and settings every layer shares.

Arrows point one way: api → ops → live → core → db, engine, bummerl (tests/test_layers.py).
"""
