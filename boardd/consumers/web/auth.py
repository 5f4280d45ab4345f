"""Arbiter login: scrypt password hashes, server-side sessions, CSRF tokens, login throttling.

Pure apart from :func:`secrets` randomness: times are passed in, so tests drive expiry.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass

__all__ = ["LoginThrottle", "Session", "SessionStore", "hash_password", "verify_password"]

_LOGGER = logging.getLogger(__name__)

#: scrypt cost (RFC 7914): N=2^14, r=8, p=1 needs 16 MiB and ~50 ms; fine for a login form.
_N, _R, _P = 2**14, 8, 1
_DKLEN = 32


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str, *, n: int = _N, r: int = _R, p: int = _P) -> str:
    """Hash a password for the configuration file: ``scrypt$N$r$p$salt$hash`` (base64url).

    Raises:
        ValueError: empty password.
    """
    if not password:
        raise ValueError("empty password")
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=_DKLEN, maxmem=128 * 1024 * 1024)
    return f"scrypt${n}${r}${p}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, encoded: str) -> bool:
    """Check ``password`` against a :func:`hash_password` string. Malformed hashes never match."""
    try:
        scheme, n, r, p, salt, digest = encoded.split("$")
        if scheme != "scrypt":
            return False
        expected = _unb64(digest)
        actual = hashlib.scrypt(password.encode(), salt=_unb64(salt), n=int(n), r=int(r), p=int(p),
                                dklen=len(expected), maxmem=128 * 1024 * 1024)
    except (ValueError, TypeError):
        _LOGGER.warning("malformed password hash in the configuration")
        return False
    return hmac.compare_digest(actual, expected)


@dataclass(slots=True)
class Session:
    """A logged-in arbiter."""

    token: str
    user: str
    csrf: str
    created: float
    last_seen: float


class SessionStore:
    """In-memory sessions (a restart logs everybody out, which is acceptable on a hall LAN).

    Args:
        idle_timeout: seconds without a request before a session ends.
        max_age: absolute lifetime of a session in seconds.
    """

    def __init__(self, *, idle_timeout: float = 4 * 3600, max_age: float = 16 * 3600) -> None:
        self.idle_timeout = idle_timeout
        self.max_age = max_age
        self._sessions: dict[str, Session] = {}

    def create(self, user: str, now: float) -> Session:
        """A new session with fresh random token and CSRF token."""
        self.expire(now)
        session = Session(token=secrets.token_urlsafe(32), user=user, csrf=secrets.token_urlsafe(32),
                          created=now, last_seen=now)
        self._sessions[session.token] = session
        return session

    def get(self, token: str | None, now: float) -> Session | None:
        """The live session of ``token`` (and touch it), or None."""
        if not token:
            return None
        session = self._sessions.get(token)
        if session is None:
            return None
        if now - session.last_seen > self.idle_timeout or now - session.created > self.max_age:
            del self._sessions[token]
            return None
        session.last_seen = now
        return session

    def delete(self, token: str | None) -> None:
        """Log out."""
        if token:
            self._sessions.pop(token, None)

    def expire(self, now: float) -> None:
        """Drop every expired session."""
        for token, session in list(self._sessions.items()):
            if now - session.last_seen > self.idle_timeout or now - session.created > self.max_age:
                del self._sessions[token]

    def __len__(self) -> int:
        return len(self._sessions)


class LoginThrottle:
    """After ``limit`` failed logins from one address, refuse that address for ``lockout`` seconds."""

    def __init__(self, *, limit: int = 5, lockout: float = 60.0) -> None:
        self.limit = limit
        self.lockout = lockout
        self._failures: dict[str, tuple[int, float]] = {}

    def is_locked(self, address: str, now: float) -> bool:
        """Whether ``address`` must wait."""
        count, since = self._failures.get(address, (0, now))
        if count >= self.limit and now - since < self.lockout:
            return True
        if count >= self.limit:
            del self._failures[address]
        return False

    def failed(self, address: str, now: float) -> None:
        """Count one failed attempt."""
        count, _ = self._failures.get(address, (0, now))
        self._failures[address] = (count + 1, now)

    def succeeded(self, address: str) -> None:
        """Forget the failures of ``address``."""
        self._failures.pop(address, None)
