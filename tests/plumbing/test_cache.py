"""The Redis cache shares one client per process and server, across calls, threads and cache objects."""

import pytest

from plumbing.cache import SharedRedisCache
from plumbing.threads import map_parallel
from tests.conftest import REDIS_URL, redis_reachable

pytestmark = pytest.mark.skipif(not redis_reachable(), reason=f"no Redis at {REDIS_URL}")


def fresh_cache() -> SharedRedisCache:
    return SharedRedisCache(REDIS_URL, {})


def test_every_call_and_cache_object_gets_the_same_client():
    first, second = fresh_cache(), fresh_cache()
    client = first._cache.get_client(write=True)
    assert first._cache.get_client() is client
    assert second._cache.get_client(write=True) is client


def test_threads_share_the_client_and_each_sees_the_others_writes():
    cache = fresh_cache()
    cache.delete("plumbing-cache-counter")
    cache.set("plumbing-cache-counter", 0)

    def bump(_):
        own = fresh_cache()
        own.incr("plumbing-cache-counter")
        return own._cache.get_client()

    clients = map_parallel(bump, {n: (n,) for n in range(16)}, workers=8)
    assert len({id(client) for client in clients.values()}) == 1
    assert cache.get("plumbing-cache-counter") == 16
    cache.delete("plumbing-cache-counter")


def test_other_options_keep_their_own_client():
    plain = fresh_cache()._cache.get_client()
    other = SharedRedisCache(REDIS_URL, {"OPTIONS": {"socket_timeout": 5}})._cache.get_client()
    assert other is not plain
