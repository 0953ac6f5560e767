"""Django's Redis cache with one client per process and server, and a connection of each thread's own for
reads; the in-process cache of page parts.

Django's `RedisCacheClient` builds a new `redis.Redis` on every call, and every thread's cache object keeps a
pool of its own; under load that construction was half of the time spent on Redis. `redis.Redis` over its
connection pool is thread-safe (and the pool reopens its connections after a fork), so one client per server
serves every thread of a process.

A `get` (a signed-in request's session, user or API token: one or two a request) goes over a connection the
thread keeps instead: taking one from the pool checks it with a poll of its socket, and the client's command
machinery records metrics for each call: a third of a GET's instructions, its reply's unpickling included.
"""

import os
import threading
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_clients: dict[tuple[str, str], Any] = {}
_clients_lock = threading.Lock()
# Each thread's read connections, by (server, options), with the process that opened them.
_held = threading.local()


class SharedRedisCacheClient(RedisCacheClient):
    # Set by RedisCacheClient.__init__; the stubs do not declare them.
    _servers: list[str]
    _pool_class: Any
    _pool_options: dict[str, Any]
    _client: Any
    _get_connection_pool_index: Any
    _serializer: Any
    _lib: Any

    def __init__(self, servers: list[str], **options: Any) -> None:
        super().__init__(servers, **options)
        # Options are part of the key: two caches on one server with other options keep their own client.
        # Built once: every cache call asks for a client.
        options_key = repr(sorted(self._pool_options.items(), key=lambda item: item[0]))
        self._idents = [(server, options_key) for server in servers]

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        return self._client_of(self._idents[self._get_connection_pool_index(write)])

    def _client_of(self, ident: tuple[str, str]) -> Any:
        client = _clients.get(ident)
        if client is None:
            with _clients_lock:
                client = _clients.get(ident)
                if client is None:
                    pool = self._pool_class.from_url(ident[0], **self._pool_options)
                    client = _clients[ident] = self._client(connection_pool=pool)
        return client

    def get(self, key: Any, default: Any) -> Any:
        value = self._read("GET", key)
        return default if value is None else self._serializer.loads(value)

    def _read(self, *command: Any) -> Any:
        """One command's reply, over this thread's own connection to the read server; a broken connection
        (the server restarted, a timeout) is closed and the command sent once more on a new one."""
        ident = self._idents[self._get_connection_pool_index(False)]
        try:
            return _held_command(self._held_connection(ident), command)
        except (self._lib.ConnectionError, self._lib.TimeoutError, OSError):
            return _held_command(self._held_connection(ident), command)

    def _held_connection(self, ident: tuple[str, str]) -> Any:
        connections = getattr(_held, "connections", None)
        if connections is None or _held.pid != os.getpid():
            # A forked child must not read replies meant for its parent: it opens its own.
            connections = _held.connections = {}
            _held.pid = os.getpid()
        connection = connections.get(ident)
        if connection is None:
            pool = self._client_of(ident).connection_pool
            connection = connections[ident] = pool.connection_class(**pool.connection_kwargs)
        return connection


def _held_command(connection: Any, command: tuple) -> Any:
    """Sends `command` and reads its reply; on any failure between the two the connection is closed, so
    that a reply never read cannot answer the next command."""
    try:
        connection.send_command(*command)
        return connection.read_response()
    except BaseException:
        connection.disconnect()
        raise


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
