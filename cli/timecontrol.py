"""`--time-control MOVE[+BANK]`, as `bummerl tournament create` and `bummerl test start` take
it: the move time and the time bank, each in milliseconds or with an `s` for seconds
(`2000+10000`, `2s+10s`, `1500`); a bank left out is the service's default. A move time below
the service's floor (services.core.bounds.MIN_MOVE_MS, docs/service.md "Time controls") is
refused here, naming the flag, before anything is sent."""

from __future__ import annotations

from client.errors import KitError

METAVAR = "MOVE[+BANK]"
HELP = ("the move time and the time bank, each in ms or with s for seconds: 2000+10000, 2s+10s "
        "(default: the service's; a bank left out: the service's)")


def parse(text: str) -> tuple[int, int | None]:
    """(move_ms, bank_ms or None) of `text`; KitError naming what is wrong."""
    def ms(part: str) -> int:
        part = part.strip().lower()
        try:
            value = float(part[:-1]) * 1000 if part.endswith("s") else float(part)
        except ValueError:
            raise KitError(f"--time-control {text!r}: {part!r} is not a time (MOVE[+BANK], in "
                           "ms or with s: 2000+10000, 2s+10s)") from None
        if not 0 <= value < 2**62:  # NaN and infinity too
            raise KitError(f"--time-control {text!r}: {part!r} is not a time of 0 or more")
        return int(value)

    from services.core.bounds import MIN_MOVE_MS

    move, plus, bank = text.partition("+")
    move_ms = ms(move)
    if 0 < move_ms < MIN_MOVE_MS:  # (0: the service's default)
        raise KitError(f"--time-control {text!r}: a move time of {move_ms} ms is below the "
                       f"floor of {MIN_MOVE_MS} ms (a turn's round trip through the service "
                       f"needs it; docs/service.md, 'Time controls'): e.g. --time-control "
                       f"{MIN_MOVE_MS}+{ms(bank) if plus else 10000}")
    return move_ms, ms(bank) if plus else None
