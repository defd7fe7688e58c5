"""The version of the bot protocol (the Play stream of `bummerl.v1`), which the kit and the
service exchange (`Hello.protocol`; `Welcome.protocol_min`, `protocol_max`), so that either can
say, in one line, when the other speaks a version it does not know.

`PROTOCOL` grows by one when a change of the contracts changes what a kit must do or may ask
(a new field the service must honour, a message the kit must answer); a change that only adds
information does not. `OLDEST` is the oldest kit the service still serves: raised only when the
service stops honouring what older kits rely on. A Hello without a protocol (0: a kit from before
the field) speaks protocol 1. It lives beside the contracts, below both the kit (client/) and the
service (services/), which import it; the kit's build puts it in the kit too.
"""

from __future__ import annotations

PROTOCOL = 1  # what this tree speaks: the kit says it in Hello, the service's newest
OLDEST = 1  # the oldest kit's protocol the service serves (Welcome.protocol_min)
UNSAID = 1  # what a Hello without a protocol (0) speaks


def spoken(said: int) -> int:
    """The protocol a Hello's `protocol` field means (0: none said, protocol 1)."""
    return said or UNSAID


def span(low: int, high: int) -> str:
    """`2-3`, or `1` when both are one version."""
    return str(low) if low == high else f"{low}-{high}"
