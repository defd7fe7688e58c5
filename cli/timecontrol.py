"""`--time-control MOVE[+BANK]`, as `bummerl tournament create` and `bummerl test start` take
it: the move time and the time bank, each in milliseconds or with an `s` for seconds
(`2000+10000`, `2s+10s`, `1500`); a bank left out is the service's default."""

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

    move, plus, bank = text.partition("+")
    return ms(move), ms(bank) if plus else None
