"""The database breaker (services.core.breaker) as a value: one per engine, open/close report
a change once, listeners hear each change, `check` refuses with the outage's UNAVAILABLE."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine

from services.core import breaker
from services.core.errors import Unavailable
from services.core.failures import UNAVAILABLE_MESSAGE, failure_of


def test_one_breaker_per_engine_and_each_change_heard_once():
    first, second = create_engine("sqlite://"), create_engine("sqlite://")
    down = breaker.of(first)
    assert breaker.of(first) is down and breaker.of(second) is not down
    heard: list[bool] = []
    stop = down.listen(heard.append)
    down.check()  # closed: nothing raised
    assert down.open() and not down.open() and down.is_open
    with pytest.raises(Unavailable) as info:
        down.check()
    assert failure_of(info.value).code == "UNAVAILABLE"
    assert failure_of(info.value).message == UNAVAILABLE_MESSAGE
    assert not breaker.of(second).is_open  # another database is not affected
    assert down.close() and not down.close() and not down.is_open
    stop()
    down.open()
    assert heard == [True, False]  # the third change came after `stop`

