"""The test run's settings: development mode unless the environment says otherwise (config/settings.py
defaults to production), set in os.environ so that servers and commands the tests start inherit it; plus a
`replica` alias that mirrors the test database, as DATABASE_REPLICA_URL would add one, so tests of the
replica router see where reads went; and a fast password hasher (hashing is a tenth of a second by design)."""

import os

os.environ.setdefault("DEBUG", "1")

from config.settings import *  # noqa: E402, F403
from config.settings import DATABASES  # noqa: E402

# Without the primary's pool, as config/settings.py adds a replica: a pool of its own keeps connections to
# the test database open, and the test run's teardown could not drop it.
primary_options = DATABASES["default"].get("OPTIONS", {})
DATABASES["replica"] = {
    **DATABASES["default"],
    "OPTIONS": {key: value for key, value in primary_options.items() if key != "pool"},
    "TEST": {"MIRROR": "default"},
}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # tests only: never in production
