"""`--time-control MOVE[+BANK]`, one syntax for `bummerl tournament create` and `bummerl test
start` (cli/timecontrol.py)."""

import pytest

from cli import timecontrol
from client.errors import KitError


@pytest.mark.parametrize(("text", "parsed"), [
    ("2000+10000", (2000, 10000)), ("2s+10s", (2000, 10000)), ("1.5s+4000", (1500, 4000)),
    ("1500", (1500, None)), (" 3S + 0 ", (3000, 0)), ("200+0", (200, 0)),
])
def test_a_time_control_is_ms_or_seconds_with_an_optional_bank(text, parsed):
    assert timecontrol.parse(text) == parsed


@pytest.mark.parametrize(("text", "says"), [
    ("fast", "'fast' is not a time"), ("1s+x", "'x' is not a time"),
    ("-5+10", "'-5' is not a time of 0 or more"), ("nan", "'nan' is not a time of 0"),
    ("1+inf", "'inf' is not a time of 0"), ("", "'' is not a time"),
    ("1+1", "a move time of 1 ms is below the floor of 200 ms"),
    ("0.199s+10s", "a move time of 199 ms is below the floor of 200 ms"),
])
def test_a_bad_time_control_names_what_is_wrong(text, says):
    with pytest.raises(KitError, match=says):
        timecontrol.parse(text)
