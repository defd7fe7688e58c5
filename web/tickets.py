"""A table stream's ticket: what lets a browser open its table's stream at the socket tier
(`web.sockets`), which has no Flask session of its own.

The web gives the table page a ticket once it has checked that the session's person holds a
seat: the person, the match and the SHA-256 of the session's token (never the token), signed
with the web's `SECRET_KEY` (itsdangerous, with its own salt, so a ticket is no cookie and no
cookie a ticket) and stamped with its time. The socket tier takes a ticket for
`TICKET_SECONDS` and only while its session is live (db.people.live_session_hashes): a session
revoked later ends the stream too.
"""

from __future__ import annotations

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer

from db.settings import sha256

SALT = "bummerl.table-stream"
TICKET_SECONDS = 12 * 3600  # past it the stream is refused: the page reloads its table every 2 s


class BadTicket(ValueError):
    """A ticket that is forged, expired or not for this match."""


def issue(secret: str, person_id: int, match_id: int, session_token: str) -> str:
    """The ticket of `person_id`'s stream of table `match_id` (session `session_token`)."""
    serializer = URLSafeTimedSerializer(secret, salt=SALT)
    return str(serializer.dumps([person_id, match_id, sha256(session_token)]))


def read(secret: str, ticket: str, match_id: int, max_age: int = TICKET_SECONDS
         ) -> tuple[int, str]:
    """The person and session hash of a good `ticket` for table `match_id`; else BadTicket
    naming what is wrong."""
    serializer = URLSafeTimedSerializer(secret, salt=SALT)
    try:
        person_id, ticket_match, session = serializer.loads(ticket, max_age=max_age)
    except SignatureExpired:
        raise BadTicket("the ticket has expired: reload the table") from None
    except (BadSignature, ValueError, TypeError):
        raise BadTicket("the ticket is not one this site issued") from None
    if ticket_match != match_id:
        raise BadTicket(f"the ticket is for table {ticket_match}, not {match_id}")
    return int(person_id), str(session)
