"""Signing in with a password, with failed attempts limited per account and per client address.

The counts live in the default cache, which every worker shares: the database cache, or Redis when
REDIS_URL is set. A window starts at the first failure; once an account or an address has had its limit of
failures in it, every attempt is refused, the right password too, until the window ends. The client address
is REMOTE_ADDR, or with NUM_PROXIES trusted proxies in front the address the nearest of them saw (the
X-Forwarded-For entry that many places from the right): never a value the client chooses."""

import hashlib

from django.conf import settings
from django.contrib.auth import authenticate
from django.core.cache import cache


class LoginLimited(Exception):
    """Too many failed sign-ins for the account or from the address."""

    def __init__(self):
        minutes = settings.LOGIN_LOCKOUT_MINUTES
        super().__init__(
            "Too many failed sign-ins for this account or from this address; "
            f"try again in {minutes} minute{'s' if minutes != 1 else ''}."
        )


def client_address(request) -> str:
    """The address the request came from, as far as trusted proxies (NUM_PROXIES) vouch for it."""
    remote = request.META.get("REMOTE_ADDR", "")
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if not settings.NUM_PROXIES or not forwarded:
        return remote
    hops = forwarded.split(",")
    return hops[-min(settings.NUM_PROXIES, len(hops))].strip()


def _keys(*, username: str, address: str) -> dict[str, int]:
    """Cache key -> its limit; hashed, so any username or address makes a valid key."""

    def key(kind: str, value: str) -> str:
        return f"login-failures:{kind}:{hashlib.sha256(value.encode('utf-8', 'replace')).hexdigest()}"

    return {
        key("account", username.casefold()): settings.LOGIN_FAILURES_PER_ACCOUNT,
        key("address", address): settings.LOGIN_FAILURES_PER_ADDRESS,
    }


def user_authenticate(*, request, username: str, password: str):
    """The user with this username and password, or None; raises LoginLimited while the account or the
    address is locked out, without checking the password."""
    keys = _keys(username=username, address=client_address(request))
    counts = cache.get_many(list(keys))
    if any(counts.get(key, 0) >= limit for key, limit in keys.items()):
        raise LoginLimited
    user = authenticate(request, username=username, password=password)
    if user is None:
        window = settings.LOGIN_LOCKOUT_MINUTES * 60
        for key in keys:
            cache.add(key, 0, window)  # the window starts at the first failure
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.set(key, 1, window)
    else:
        cache.delete(next(iter(keys)))  # the account's count; the address keeps its own
    return user
