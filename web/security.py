"""The web's guards for people (they sign in and act, so the web now takes POSTs):

- CSRF: Flask-WTF's `CSRFProtect` on every POST (forms carry `csrf_token()`, the table's
  fetches send it as `X-CSRFToken`); a POST without a valid token is a 400 naming it.
- The session: Flask's signed cookie (keyed by `SECRET_KEY`: `BUMMERL_WEB_SECRET`, else a
  random key per process) holds the person's id and name and the session's token, never the
  web's credential for the service; the service can revoke the session (web.accounts). The
  cookie is HttpOnly, SameSite=Lax, and Secure whenever the request came over TLS
  (`request.is_secure`) or `SESSION_COOKIE_SECURE` is set.
- A proxy in front (`TRUSTED_PROXIES`, `BUMMERL_WEB_TRUSTED_PROXIES`: how many; default 0):
  werkzeug's ProxyFix takes the scheme, host and client address from that many hops of
  X-Forwarded-Proto/-Host/-For; with 0 these headers are ignored (a client cannot choose the
  address the limits count).
- Log-in, sign-up, bot-claim and guest attempts are rate-limited per client address (the `limits`
  library, Flask-Limiter's core: a moving window per app, `LOGIN_LIMIT`, guests
  `GUEST_LIMIT`, in memory or at `RATELIMIT_STORAGE_URI`, e.g. redis://). Failed log-ins back
  off (`Backoff`): past `LOGIN_FREE_FAILURES` for one name from one address, and past
  `LOGIN_FREE_ADDRESS_FAILURES` from one address, each further try waits 1, 2, 4 ... s (at most
  `LOGIN_BACKOFF_MAX_SECONDS`). No name is ever locked for another address.
- Every 429 carries Retry-After; every answer a Content-Security-Policy (`CSP`: scripts and
  styles only from this site, no frames) and its companions.
"""

from __future__ import annotations

import math
import os
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, current_app, g, request
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFError, CSRFProtect
from limits import RateLimitItem, parse_many, storage, strategies
from werkzeug.exceptions import TooManyRequests
from werkzeug.middleware.proxy_fix import ProxyFix

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
       "frame-ancestors 'none'")
DEFAULT_RETRY_AFTER = 1  # seconds, for a 429 that says no more

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


@dataclass
class Backoff:
    """Failed log-ins back off, per (name, address) and per address: past `free` failures
    (counted over `window` s from the first), each further one makes the next try wait 1, 2,
    4 ... s, at most `most` s. A key `fail/...` counts failures, a key `wait/...` lives as long
    as the wait (the `limits` storage: in memory, or shared at RATELIMIT_STORAGE_URI)."""

    storage: storage.Storage
    free: int  # failures of one name from one address before the waits begin
    free_address: int  # failures from one address, any names
    most: int  # the longest wait, s
    window: int  # failures are counted this long from the first, s

    def _keys(self, name: str) -> list[tuple[str, int]]:
        address = request.remote_addr or "unknown"
        return [(f"{address}/{name.strip().lower()[:40]}", self.free),
                (address, self.free_address)]

    def wait(self, name: str) -> int:
        """The seconds until `name` may be tried from this address again (0: now)."""
        now = time.time()
        waits = [self.storage.get_expiry(f"login-wait/{key}") - now
                 for key, _ in self._keys(name) if self.storage.get(f"login-wait/{key}") > 0]
        # whole seconds, rounded up; Redis keeps whole seconds (its TTL rounds), so a wait that
        # reads a hair over a whole second (the clock moved between now and the read) is that second
        return max((max(1, math.ceil(w - 0.05)) for w in waits), default=0)

    def failed(self, name: str) -> None:
        for key, free in self._keys(name):
            count = self.storage.incr(f"login-fail/{key}", self.window)
            if count > free:
                self.storage.incr(f"login-wait/{key}", min(self.most, 2 ** min(count - free - 1,
                                                                                16)))

    def succeeded(self, name: str) -> None:
        key, _ = self._keys(name)[0]
        self.storage.clear(f"login-fail/{key}")
        self.storage.clear(f"login-wait/{key}")


def _backoff() -> Backoff:
    found: Backoff = current_app.extensions["bummerl.backoff"]
    return found


def login_allowed(name: str) -> None:
    """TooManyRequests (with Retry-After) while failed log-ins of `name` or of this address
    make it wait."""
    wait = _backoff().wait(name)
    if wait:
        raise TooManyRequests(f"too many failed log-ins from your address: try again in {wait} s",
                              retry_after=wait)


def login_failed(name: str) -> None:
    _backoff().failed(name)


def login_succeeded(name: str) -> None:
    _backoff().succeeded(name)


def attempt(what: str) -> None:
    """Count one `what` attempt (login, signup, claim (of a bot's authorship: web.hosted),
    guest) of this request's address."""
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


def sockets_url(app: Flask) -> str | None:
    """The socket tier's URL as the browser reaches it (`SOCKETS_URL`, else
    BUMMERL_SOCKETS_URL), without a trailing slash ("/": "", the web's own address); None: the
    web's own table feed."""
    url = app.config.get("SOCKETS_URL") or os.environ.get("BUMMERL_SOCKETS_URL") or ""
    if url == "/":  # behind the web's own address (an ingress routes /sockets/ to the tier)
        return ""
    return url.rstrip("/") or None


def sockets_origin(app: Flask) -> str | None:
    """The socket tier's origin when it is not the web's own (for the CSP's connect-src)."""
    parts = urlsplit(sockets_url(app) or "")
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None


def install(app: Flask) -> None:
    app.config.setdefault("SECRET_KEY", None)
    if not app.config["SECRET_KEY"]:
        app.config["SECRET_KEY"] = (os.environ.get("BUMMERL_WEB_SECRET")
                                    or secrets.token_urlsafe(32))
    app.config.update(SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Lax",
                      SESSION_COOKIE_NAME="bummerl_session", WTF_CSRF_TIME_LIMIT=None)
    app.config.setdefault("RATELIMIT_STORAGE_URI", "memory://")
    proxies = app.config.get("TRUSTED_PROXIES")
    proxies = int(os.environ.get("BUMMERL_WEB_TRUSTED_PROXIES") or 0) if proxies is None \
        else int(proxies)
    if proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies,  # type: ignore[method-assign]
                                x_proto=proxies, x_host=proxies)
    app.session_interface = SessionInterface()
    csrf.init_app(app)
    login = parse_many(app.config["LOGIN_LIMIT"])
    counts = storage.storage_from_string(app.config["RATELIMIT_STORAGE_URI"])
    assert isinstance(counts, storage.Storage)  # (not an asyncio one)
    app.extensions["bummerl.attempts"] = Attempts(
        {"login": login, "signup": login, "claim": login,
         "guest": parse_many(app.config["GUEST_LIMIT"])},
        strategies.MovingWindowRateLimiter(counts))
    app.extensions["bummerl.backoff"] = Backoff(
        counts, int(app.config["LOGIN_FREE_FAILURES"]),
        int(app.config["LOGIN_FREE_ADDRESS_FAILURES"]),
        int(app.config["LOGIN_BACKOFF_MAX_SECONDS"]), int(app.config["LOGIN_FAILURES_SECONDS"]))

    @app.errorhandler(CSRFError)
    def csrf_error(e: CSRFError) -> Any:
        from web.errors import error_response

        return error_response(400, "Refused: no valid CSRF token",
                              f"this POST carries no valid CSRF token ({e.description}); "
                              "reload the page and try again")

    @app.errorhandler(TooManyRequests)
    def too_many(e: TooManyRequests) -> Any:
        from web.errors import error_response

        g.retry_after = e.retry_after
        return error_response(429, "Too many attempts", e.description or "")

    @app.after_request
    def headers(response: Any) -> Any:
        csp, origin = CSP, sockets_origin(app)
        if origin:  # the tables' streams come from the socket tier's origin
            csp = CSP.replace("connect-src 'self'", f"connect-src 'self' {origin}")
        response.headers.setdefault("Content-Security-Policy", csp)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        if response.status_code == 429 and "Retry-After" not in response.headers:
            response.headers["Retry-After"] = str(g.get("retry_after") or DEFAULT_RETRY_AFTER)
        return response

