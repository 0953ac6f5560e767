"""The cache of page parts keeps each part as the string it is, and otherwise behaves as LocMemCache."""

import pytest
from django.core.cache.backends.locmem import LocMemCache

from plumbing.cache import FragmentCache


def fresh_cache(name: str, **options) -> FragmentCache:
    cache = FragmentCache(name, {"OPTIONS": options})
    cache.clear()
    return cache


def test_a_part_comes_back_as_the_string_stored_not_a_copy():
    cache = fresh_cache("parts-same")
    part = "<p>" + "x" * 1000 + "</p>"
    cache.set("part", part)
    assert cache.get("part") is part and cache.get("other", "none") == "none"
    assert cache.add("part", "another") is False and cache.get("part") is part
    assert cache.add("new", "added") is True and cache.get("new") == "added"


def test_a_part_expires_and_a_full_cache_culls():
    cache = fresh_cache("parts-expiry", MAX_ENTRIES=10, CULL_FREQUENCY=2)
    cache.set("gone", "at once", timeout=0)  # Django's meaning: expire at once
    assert cache.get("gone") is None
    for index in range(25):
        cache.set(f"part-{index}", str(index))
    assert len(cache._cache) <= 10 and cache.get("part-24") == "24"


def test_only_strings_are_kept():
    cache = fresh_cache("parts-strings")
    for value in ([1, 2], {"a": 1}, b"bytes", 3):
        with pytest.raises(TypeError, match="holds strings"):
            cache.set("value", value)
        with pytest.raises(TypeError, match="holds strings"):
            cache.add("value", value)
    assert cache.get("value") is None


def test_a_locmem_cache_of_the_same_location_keeps_its_own_store():
    """Django's LocMemCache shares its store by LOCATION; its pickles and these strings must not meet."""
    parts, pickles = fresh_cache(""), LocMemCache("", {})
    pickles.clear()
    parts.set("key", "a part")
    pickles.set("key", {"a": "dict"})
    assert parts.get("key") == "a part" and pickles.get("key") == {"a": "dict"}
