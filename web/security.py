"""The web's guards for people (they sign in and act, so the web now takes POSTs):

- CSRF: Flask-WTF's `CSRFProtect` on every POST (forms carry `csrf_token()`, the table's
  fetches send it as `X-CSRFToken`); a POST without a valid token is a 400 naming it.
- The session: Flask's signed cookie (keyed by `SECRET_KEY`: `BUMMERL_WEB_SECRET`, else a
  random key per process) holds the person's id and name only, never the web's credential for
  the service. The cookie is HttpOnly, SameSite=Lax, and Secure whenever the request came over
  TLS (`request.is_secure`) or `SESSION_COOKIE_SECURE` is set.
- Log-in, sign-up and guest attempts are rate-limited per client address (the `limits`
  library, Flask-Limiter's core: a moving window per app, `LOGIN_LIMIT`, guests
  `GUEST_LIMIT`, in memory or at `RATELIMIT_STORAGE_URI`, e.g. redis://): past it a 429 says
  when to retry.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, current_app, request
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFError, CSRFProtect
from limits import RateLimitItem, parse_many, storage, strategies
from werkzeug.exceptions import TooManyRequests

csrf = CSRFProtect()


@dataclass
class Attempts:
    """The rate limit of log-in, sign-up and guest attempts of one app."""

    limits: dict[str, list[RateLimitItem]]  # what (login, signup, guest) → its limits
    window: strategies.MovingWindowRateLimiter

    def hit(self, what: str) -> None:
        """Count an attempt of the client's address; TooManyRequests past the limit."""
        key = request.remote_addr or "unknown"
        for limit in self.limits[what]:
            if not self.window.hit(limit, what, key):
                reset = self.window.get_window_stats(limit, what, key).reset_time
                wait = max(1, int(reset - time.time()) + 1)
                raise TooManyRequests(f"too many {what} attempts from your address (at most "
                                      f"{limit}): try again in {wait} s", retry_after=wait)


def attempt(what: str) -> None:
    """Count one `what` attempt (login, signup, guest) of this request's address."""
    attempts: Attempts = current_app.extensions["bummerl.attempts"]
    attempts.hit(what)


def local_path(target: str) -> str | None:
    """`target` if it is a path of this site (`/...`), else None: never an open redirect.
    Browsers drop tabs and newlines anywhere in a URL, strip spaces and control characters
    around it and read a backslash as a slash, so `/<tab>/host` or `/\\host` lead to another
    host: any character outside printable ASCII (the space included), a backslash, a leading
    `//`, a scheme or a host makes it None."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return None
    if any(not "!" <= c <= "~" for c in target):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return None
    return target


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, Secure under TLS."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return bool(app.config["SESSION_COOKIE_SECURE"]) or request.is_secure


def install(app: Flask) -> None:
    app.config.setdefault("SECRET_KEY", None)
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = (os.environ.get("BUMMERL_WEB_SECRET")
                                    or secrets.token_urlsafe(32))
    app.config.update(SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
                      SESSION_COOKIE_NAME="bummerl_session", WTF_CSRF_TIME_LIMIT=None)
    app.config.setdefault("RATELIMIT_STORAGE_URI", "memory://")
    app.session_interface = SessionInterface()
    csrf.init_app(app)
    login = parse_many(app.config["LOGIN_LIMIT"])
    app.extensions["bummerl.attempts"] = Attempts(
        {"login": login, "signup": login, "guest": parse_many(app.config["GUEST_LIMIT"])},
        strategies.MovingWindowRateLimiter(
            storage.storage_from_string(app.config["RATELIMIT_STORAGE_URI"])))

    @app.errorhandler(CSRFError)
    def csrf_error(e: CSRFError) -> Any:
        from web.errors import error_response

        return error_response(400, "Refused: no valid CSRF token",
                              f"this POST carries no valid CSRF token ({e.description}); "
                              "reload the page and try again")

    @app.after_request
    def headers(response: Any) -> Any:
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

