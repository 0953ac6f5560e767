"""The test run's settings: development mode unless the environment says otherwise (config/settings.py
defaults to production), set in os.environ so that servers and commands the tests start inherit it; plus a
`replica` alias that mirrors the test database, as DATABASE_REPLICA_URL would add one, so tests of the
replica router see where reads went; and a fast password hasher (hashing is a tenth of a second by design)."""

import os

os.environ.setdefault("DEBUG", "1")

from config.settings import *  # noqa: E402, F403
from config.settings import DATABASES  # noqa: E402

DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # tests only: never in production
