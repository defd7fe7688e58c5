"""The web: the operators' dashboard (ladder standings, live matches, simulations, tournaments;
read-only) and the people's table (play a bot or a friend from the browser: web.play,
web.accounts, web.people), where every action of a person enters through the engine service's
PeopleService (web.service_client) and the web still writes nothing itself.

`create_app(config)` builds the Flask app (the database URL comes from `config["DATABASE_URL"]`,
else the environment's `DATABASE_URL`, else the SQLite file under var/). It only reads the
shared database; it never shows what a seat of a running match holds (only the public action
log) nor a running match's seed, which decides every deck.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

DEFAULTS: dict[str, Any] = {
    "DATABASE_URL": None,  # None: db.base.database_url() (DATABASE_URL or SQLite under var/)
    "LIVE_POLL_SECONDS": 0.2,  # how often the live poller reads the database's change markers
    "MAX_STREAMS": 64,  # live event streams open at once (each holds a server thread)
    "KEEPALIVE_SECONDS": 15,  # a comment on an idle stream (finds closed tabs)
    "STREAM_SECONDS": 600,  # a stream ends after this; the browser reconnects by itself
    "SERVICE_ADDRESS": None,  # engine service for /health: BUMMERL_SERVICE_ADDRESS or default
    "BROKER_URL": None,  # Celery broker for /health: BUMMERL_BROKER_URL or REDIS_URL (if Redis)
    "PAGE_SIZE": 25,  # matches per page
    "STANDINGS_ROWS": 200,  # rows per profile the standings page shows (?all=1: every one)
    # People at the table (web.play, web.accounts): the service's PeopleService is the door.
    "WEB_TOKEN": None,  # the web's credential for PeopleService: BUMMERL_WEB_TOKEN
    "SECRET_KEY": None,  # signs the session cookie: BUMMERL_WEB_SECRET, else random per process
    # The socket tier's address as the browser reaches it (web.sockets; BUMMERL_SOCKETS_URL,
    # e.g. http://127.0.0.1:8001 or /sockets-host behind one address): the tables' live streams
    # come from there. None: from this web's own table feed (web.tablefeed).
    "SOCKETS_URL": None,
    "LOGIN_LIMIT": "10 per minute;50 per hour",  # log-in and sign-up attempts per address
    "GUEST_LIMIT": "30 per minute",  # guests started per address
    "LOGIN_FREE_FAILURES": 3,  # failed log-ins of a name from an address before the backoff
    "LOGIN_FREE_ADDRESS_FAILURES": 20,  # failed log-ins from an address (any names) before it
    "LOGIN_BACKOFF_MAX_SECONDS": 60,  # the backoff's waits: 1, 2, 4 ... s, at most this
    "LOGIN_FAILURES_SECONDS": 900,  # failures count this long from the first
    "TRUSTED_PROXIES": None,  # proxies in front (X-Forwarded-*): BUMMERL_WEB_TRUSTED_PROXIES, 0
    "TABLE_POLL_SECONDS": 0.025,  # how often the table poller reads the open tables' seqs
    "TABLE_STREAMS": 256,  # table event streams open at once (past it: the page polls)
    "SERVICE_CALLS": 32,  # calls to PeopleService in flight at once; the rest wait their turn
    "SERVICE_QUEUE_SECONDS": 30,  # ... at most this long, then "the service is busy" (503)
    # The largest request body (a 413 past it): the site takes small forms and JSON only
    # (a sign-up, an action); the one upload, a hosted bot's files, has its own cap
    # (web.hosted.BODY_BYTES).
    "MAX_CONTENT_LENGTH": 64 * 1024,
    "ANALYSE_LIMIT": "5 per 10 minutes",  # analyses one person may ask for (a 429 past it)
    "KIT_DIR": None,  # the folder of the kit's wheel (web.kit): BUMMERL_KIT_DIR, else var/kit
}


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """A new dashboard app; `config` overrides `DEFAULTS` (and any Flask setting)."""
    from db.base import make_session_factory
    from web import (
        accounts,
        bots,
        errors,
        exports,
        filters,
        health,
        live,
        matches,
        people,
        play,
        ratings,
        security,
        simulations,
        tournaments,
        versiontests,
    )
    from web.db import read_only

    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    app.config.from_mapping(config or {})
    sessions = make_session_factory(app.config["DATABASE_URL"])
    read_only(sessions.kw["bind"])
    app.extensions["bummerl.sessions"] = sessions
    app.jinja_env.filters.update(filters.FILTERS)
    app.jinja_env.globals.update(filters.GLOBALS)
    for blueprint in (health.bp, ratings.bp, matches.bp, bots.bp, simulations.bp, exports.bp,
                      tournaments.bp, versiontests.bp, accounts.bp, play.bp, people.bp):
        app.register_blueprint(blueprint)
    from web import analyses, coach, hosted, kit

    app.register_blueprint(analyses.bp)
    app.register_blueprint(hosted.bp)
    app.register_blueprint(coach.bp)
    app.register_blueprint(kit.bp)
    security.install(app)
    accounts.install_context(app)
    live.install(app)
    play.install(app)
    errors.install(app)
    return app
