"""Django's Redis cache with one client per process and server.

Django's `RedisCacheClient` builds a new `redis.Redis` on every call, and every thread's cache object keeps a
pool of its own; under load that construction was half of the time spent on Redis. `redis.Redis` over its
connection pool is thread-safe (and the pool reopens its connections after a fork), so one client per server
serves every thread of a process.
"""

import threading
from typing import Any

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

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        server = self._servers[index]
        # Options are part of the key: two caches on one server with other options keep their own client.
        ident = (server, repr(sorted(self._pool_options.items(), key=lambda item: item[0])))
        client = _clients.get(ident)
        if client is None:
            with _clients_lock:
                client = _clients.get(ident)
                if client is None:
                    pool = self._pool_class.from_url(server, **self._pool_options)
                    client = _clients[ident] = self._client(connection_pool=pool)
        return client


class SharedRedisCache(RedisCache):
    """`RedisCache` whose client is shared by every thread and call of the process."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedRedisCacheClient
