"""Django's Redis cache with one client per process and server; the in-process cache of page parts.

Django's `RedisCacheClient` builds a new `redis.Redis` on every call, and every thread's cache object keeps a
pool of its own; under load that construction was half of the time spent on Redis. `redis.Redis` over its
connection pool is thread-safe (and the pool reopens its connections after a fork), so one client per server
serves every thread of a process.
"""

import threading
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_clients: dict[tuple[str, str], Any] = {}
_clients_lock = threading.Lock()


class SharedRedisCacheClient(RedisCacheClient):
    # Set by RedisCacheClient.__init__; the stubs do not declare them.
    _servers: list[str]
    _pool_class: Any
    _pool_options: dict[str, Any]
    _client: Any
    _get_connection_pool_index: Any

    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        # Options are part of the key: two caches on one server with other options keep their own client.
        # Built once: every cache call asks for a client.
        options_key = repr(sorted(self._pool_options.items(), key=lambda item: item[0]))
        self._idents = [(server, options_key) for server in servers]

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        ident = self._idents[self._get_connection_pool_index(write)]
        client = _clients.get(ident)
        if client is None:
            with _clients_lock:
                client = _clients.get(ident)
                if client is None:
                    pool = self._pool_class.from_url(ident[0], **self._pool_options)
                    client = _clients[ident] = self._client(connection_pool=pool)
        return client


class SharedRedisCache(RedisCache):
    """`RedisCache` whose client is shared by every thread and call of the process."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedRedisCacheClient


def _string_check(value: Any) -> None:
    if not isinstance(value, str):
        raise TypeError(f"FragmentCache holds strings, not {type(value).__name__}")


class FragmentCache(LocMemCache):
    """Django's in-process cache for rendered parts of pages (`{% cache %}`), each kept as the string it is.

    A part is an immutable string, so LocMemCache's pickling on the way in and out buys nothing; with the
    key's validation (the key `{% cache %}` makes is short ASCII) it was half of a part's cost, the tag's
    own work included (18 → 9 µs), and the workbench renders thirteen to seventeen parts on every label.
    Holds strings only.
    """

    # LocMemCache's own; the stubs do not declare them.
    _cache: Any
    _lock: Any
    _has_expired: Any
    _delete: Any
    _set: Any

    def __init__(self, name: str, params: dict[str, Any]) -> None:
        # A store of its own: a LocMemCache of the same LOCATION would find strings where it expects pickles.
        super().__init__(f"fragments:{name}", params)

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        key = self.make_key(key, version=version)
        with self._lock:
            if self._has_expired(key):
                self._delete(key)
                return default
            self._cache.move_to_end(key, last=False)
            return self._cache[key]

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        _string_check(value)
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            self._set(key, value, timeout)

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        _string_check(value)
        key = self.make_and_validate_key(key, version=version)
        with self._lock:
            if not self._has_expired(key):
                return False
            self._set(key, value, timeout)
            return True
