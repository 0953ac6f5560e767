"""Shared fixtures: campaigns built through the real import service, users in their real groups."""

import copy

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation.bundle import parse_bundle
from annotation.services.campaigns import campaign_import

SMALL_BUNDLE = {
    "name": "Small",
    "guidelines": "Grade each page.\nSkip what you cannot read.",
    # Relevance first: many tests walk the tasks in that order (interleaving has its own tests).
    "settings": {
        "overlap": 2,
        "gsb_overlap": 2,
        "pool_depth": 3,
        "gsb_depth": 2,
        "task_order": "relevance_first",
    },
    "models": [{"name": "online", "role": "online"}, {"name": "exp", "role": "experimental"}],
    "queries": [
        {"id": "q1", "text": "cheap flights to lisbon", "segment": "head"},
        {"id": "q2", "text": "how to boil an egg", "description": "a recipe", "segment": "tail"},
    ],
    "documents": [
        {"id": f"d{i}", "title": f"Doc {i}", "url": f"https://example.com/{i}", "body": f"Body {i}"}
        for i in range(1, 9)
    ],
    "rankings": [
        {"model": "online", "query": "q1", "documents": ["d1", "d2", "d3", "d4"]},
        {"model": "exp", "query": "q1", "documents": ["d2", "d1", "d5", "d3"]},
        {"model": "online", "query": "q2", "documents": ["d6", "d7", "d8"]},
        {"model": "exp", "query": "q2", "documents": ["d6", "d7", "d1"]},
    ],
}


@pytest.fixture
def bundle_data():
    return copy.deepcopy(SMALL_BUNDLE)


@pytest.fixture
def campaign(db, bundle_data):
    return campaign_import(bundle=parse_bundle(bundle_data, "small.json"))


@pytest.fixture
def make_user(db):
    def make(username: str, *roles: str, password: str = "pw-not-used-1"):
        user = get_user_model().objects.create_user(username=username, password=password)
        for role in roles:
            user.groups.add(Group.objects.get_or_create(name=role)[0])  # a flush drops the migrated groups
        return user

    return make
