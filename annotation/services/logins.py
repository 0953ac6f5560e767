"""Signing in with a password, with failed attempts limited per account and per client address.

The counts live in the default cache, which every worker shares: the database cache, or Redis when
REDIS_URL is set. A window starts at the first failure and ends LOGIN_LOCKOUT_MINUTES later, on every cache
backend (its end is stored beside the count); once an account or an address has had its limit of failures
in it, every attempt is refused, the right password too, until the window ends. The client address
is REMOTE_ADDR, or with NUM_PROXIES trusted proxies in front the address the nearest of them saw (the
X-Forwarded-For entry that many places from the right): never a value the client chooses."""

import hashlib
import time

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


def _counts_read(keys: dict[str, int]) -> dict:
    """The failure counts of `keys` with the ends of their windows (`<key>:until`), in one read."""
    return cache.get_many([*keys, *(f"{key}:until" for key in keys)])


def _locked(keys: dict[str, int], counts: dict, now: float) -> bool:
    return any(
        counts.get(key, 0) >= limit and counts.get(f"{key}:until", 0) > now for key, limit in keys.items()
    )


def _failure_count(key: str, until: float | None, now: float) -> None:
    """One more failure in the key's window: the first failure starts it, and it ends LOGIN_LOCKOUT_MINUTES
    later, an end stored as `<key>:until`. The count is kept to that end whatever the backend's `incr` does
    with expiry (Django's `BaseCache.incr`, which the database cache uses, saves it again with the default
    timeout: the count used to end 5 minutes after the last failure)."""
    until_key = f"{key}:until"
    if until is not None and until <= now:  # over, and not yet dropped by the backend
        cache.delete_many([key, until_key])
    if until is None or until <= now:
        until = now + settings.LOGIN_LOCKOUT_MINUTES * 60
        if not cache.add(until_key, until, until - now):  # another failure started it meanwhile
            until = cache.get(until_key, until)
    left = max(until - now, 1)
    cache.add(key, 0, left)
    try:
        cache.incr(key)
    except ValueError:  # dropped between add and incr
        cache.set(key, 1, left)
    cache.touch(key, left)


def user_authenticate(*, request, username: str, password: str):
    """The user with this username and password, or None; raises LoginLimited while the account or the
    address is locked out, without checking the password."""
    keys = _keys(username=username, address=client_address(request))
    counts = _counts_read(keys)
    if _locked(keys, counts, time.time()):
        raise LoginLimited
    user = authenticate(request, username=username, password=password)
    if user is None:
        now = time.time()
        for key in keys:
            _failure_count(key, counts.get(f"{key}:until"), now)
    else:
        account = next(iter(keys))
        cache.delete_many([account, f"{account}:until"])  # the account's count; the address keeps its own
    return user
