"""What a remote bot's Play stream says of people (`Hello.accepts_people`, issue 30): written
to `bots.accepts_people`, which PeopleService.ListOpponents and StartGame read (with the bot's
presence: only a connected bot is offered to people)."""

from __future__ import annotations

from bummerl.v1 import common_pb2
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from db.models import PEOPLE_CASUAL, PEOPLE_RATED, Bot
from services.core.connections import factory_of, writing

Accepts = common_pb2.AcceptsPeople
TAKES: dict[Accepts, str] = {common_pb2.ACCEPTS_PEOPLE_CASUAL: PEOPLE_CASUAL,
                             common_pb2.ACCEPTS_PEOPLE_RATED: PEOPLE_RATED}


def record_accepts(bot: Bot, first: bool, value: Accepts, *,
                   sessions: sessionmaker[Session] | None = None) -> Accepts:
    """Record what the Hello of `bot`'s stream says of people (an AcceptsPeople value; an
    unknown one counts as none); the value the service took. Written when it says something,
    or on a stream's first Hello when the row still says something: a bot without a Hello
    that says so costs no write."""
    takes = TAKES.get(value)
    if takes is None and not (first and bot.accepts_people):
        return common_pb2.ACCEPTS_PEOPLE_UNSPECIFIED
    if takes != bot.accepts_people:
        with factory_of(sessions)() as s, writing(s), s.begin():
            s.execute(update(Bot).where(Bot.id == bot.id).values(accepts_people=takes))
        bot.accepts_people = takes
    return value if takes else common_pb2.ACCEPTS_PEOPLE_UNSPECIFIED
