"""The Redis cache shares one client per process and server, across calls, threads and cache objects; each
thread reads over a connection of its own."""

import os

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


def held(cache: SharedRedisCache):
    """This thread's read connection to the cache's server."""
    return cache._cache._held_connection(cache._cache._idents[0])


def test_a_get_reads_what_was_set_over_the_threads_own_connection():
    cache = fresh_cache()
    cache.set("plumbing-cache-held", {"a": [1, 2]})
    cache.set("plumbing-cache-number", 7)
    cache.delete("plumbing-cache-absent")
    assert cache.get("plumbing-cache-held") == {"a": [1, 2]}
    assert cache.get("plumbing-cache-number") == 7
    assert cache.get("plumbing-cache-absent", "default") == "default"
    connection = held(cache)
    assert fresh_cache().get("plumbing-cache-number") == 7 and held(fresh_cache()) is connection
    others = map_parallel(
        lambda _: (fresh_cache().get("plumbing-cache-number"), held(fresh_cache())), {1: (1,)}
    )
    value, other = others[1]
    assert value == 7 and other is not connection
    cache.delete_many(["plumbing-cache-held", "plumbing-cache-number"])


def test_a_connection_the_server_closed_is_opened_again():
    cache = fresh_cache()
    cache.set("plumbing-cache-killed", "still here")
    assert cache.get("plumbing-cache-killed") == "still here"
    host, port = held(cache)._sock.getsockname()[:2]
    assert cache._cache.get_client().client_kill_filter(addr=f"{host}:{port}") == 1
    assert cache.get("plumbing-cache-killed") == "still here"
    cache.delete("plumbing-cache-killed")


def test_a_reply_left_unread_never_answers_the_next_get(monkeypatch):
    """A GET stopped between its command and its reply closes the connection: the next GET reads its own."""
    cache = fresh_cache()
    cache.set_many({"plumbing-cache-first": "first", "plumbing-cache-second": "second"})
    connection = held(cache)
    read_response = connection.read_response

    def interrupted(*args, **kwargs):
        monkeypatch.setattr(connection, "read_response", read_response)
        raise KeyboardInterrupt

    monkeypatch.setattr(connection, "read_response", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cache.get("plumbing-cache-first")
    assert cache.get("plumbing-cache-second") == "second"
    cache.delete_many(["plumbing-cache-first", "plumbing-cache-second"])


def test_a_forked_child_reads_over_a_connection_of_its_own():
    """Parent and child GET at the same time, each its own key: over one shared socket replies would cross."""
    cache = fresh_cache()
    cache.set_many({"plumbing-cache-parent": "parent", "plumbing-cache-child": "child"})
    assert cache.get("plumbing-cache-parent") == "parent"  # the parent's connection is open before the fork
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: exits without pytest's teardown
        os.close(reader)
        wrong = sum(cache.get("plumbing-cache-child") != "child" for _ in range(300))
        os.write(writer, str(wrong).encode())
        os._exit(0)
    os.close(writer)
    wrong_in_parent = sum(cache.get("plumbing-cache-parent") != "parent" for _ in range(300))
    with os.fdopen(reader) as pipe:
        wrong_in_child = int(pipe.read())
    os.waitpid(pid, 0)
    assert (wrong_in_parent, wrong_in_child) == (0, 0)
    cache.delete_many(["plumbing-cache-parent", "plumbing-cache-child"])
