"""Judgeboard settings, read from the environment.

DEBUG=0 (the default) is production mode: it refuses to start without a real SECRET_KEY and turns on the
HTTPS-only settings that `manage.py check --deploy` asks for.
DEBUG=1 is development mode (`make demo`, the tests).
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

BASE_DIR = Path(__file__).resolve().parent.parent

# One BLAS thread per calling thread, read by NumPy's and SciPy's OpenBLAS when they load (after these
# settings, in every Django process). With more, each matrix product of a report leaves a thread spinning on
# another core for a while: 75 ms of CPU a computed overview, taken from the other workers, the report's own
# threads and PostgreSQL (docs/performance.md). A deployment can set it higher.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    if value.lower() in {"1", "true", "yes", "on"}:
        return True
    if value.lower() in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use 1/0, true/false, yes/no or on/off)")


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    return [item.strip() for item in value.split(",") if item.strip()] if value else default


DEBUG = env_bool("DEBUG", False)

DEVELOPMENT_SECRET_KEY = "django-insecure-judgeboard-development-only"
SECRET_KEY = os.environ.get("SECRET_KEY", DEVELOPMENT_SECRET_KEY if DEBUG else "")
if not DEBUG and (
    not SECRET_KEY or SECRET_KEY == DEVELOPMENT_SECRET_KEY or SECRET_KEY.startswith("django-insecure")
):
    raise ImproperlyConfigured(
        "Production mode (DEBUG=0) needs SECRET_KEY set to a long random value, e.g. "
        "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`."
    )

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_tasks_db",
    "annotation",
    "metrics",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions (the person's language is kept in theirs), before anything that renders.
    "config.middleware.LanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "config.middleware.SecurityHeadersMiddleware",
]

# Scripts only from this site's static files: no inline script, no eval, nothing from elsewhere (JSON data
# blocks from json_script are not executed). Styles from here too, plus inline style attributes, which the
# meters and grids set per page and Plotly sets on its charts. ReDoc renders in a blob: worker; Swagger UI
# shows data: images.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF, CSP.UNSAFE_INLINE],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF, "data:"],
    "worker-src": [CSP.SELF, "blob:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

# Failed sign-ins and throttles count in the cache, which every worker and server must share: Redis when
# REDIS_URL is set (one client per process: plumbing/cache.py), else a table in the database (created by a
# migration of `annotation`).
CACHES = {
    "default": {"BACKEND": "plumbing.cache.SharedRedisCache", "LOCATION": os.environ["REDIS_URL"]}
    if os.environ.get("REDIS_URL")
    else {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "judgeboard_cache"},
    # Parts of pages that are the same for every request in a language (`{% cache %}`): in each process,
    # since reading them from Redis would cost about what rendering them does.
    "template_fragments": {"BACKEND": "plumbing.cache.FragmentCache"},
}

# With Redis, sessions are read from it (written through to the database, which keeps them if Redis is
# emptied): a signed-in request asks the database nothing for its session. Without, from the database in one
# hand-written statement.
SESSION_ENGINE = (
    "django.contrib.sessions.backends.cached_db" if os.environ.get("REDIS_URL") else "plumbing.sessions"
)

# Failed sign-ins allowed per account and per client address in a window of LOGIN_LOCKOUT_MINUTES (from the
# first failure); then every sign-in is refused until the window ends (annotation/services/logins.py).
LOGIN_FAILURES_PER_ACCOUNT = int(os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "10"))
LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "50"))
LOGIN_LOCKOUT_MINUTES = int(os.environ.get("LOGIN_LOCKOUT_MINUTES", "15"))
# How many proxies in front of the app append to X-Forwarded-For; 0: the client is REMOTE_ADDR and the header
# is ignored (anyone can write it).
NUM_PROXIES = int(os.environ.get("NUM_PROXIES", "0"))

# A connection is closed at the end of its request (CONN_MAX_AGE=0): `runserver` serves each request on a new
# thread and never closes that thread's connection, so a kept one (it was 60 s) outlived its thread until
# garbage collection, one per request. On PostgreSQL each process holds a bounded pool instead
# (DB_POOL_MAX_SIZE; 0 turns it off, then CONN_MAX_AGE may keep connections per thread).
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
    )
}
DB_POOL_MAX_SIZE = int(os.environ.get("DB_POOL_MAX_SIZE", "8"))
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and DB_POOL_MAX_SIZE > 0:
    if DATABASES["default"]["CONN_MAX_AGE"]:
        raise ImproperlyConfigured(
            "CONN_MAX_AGE must be 0 with the connection pool (or set DB_POOL_MAX_SIZE=0)"
        )
    DATABASES["default"]["OPTIONS"] = {
        **DATABASES["default"].get("OPTIONS", {}),
        # A request waiting longer than `timeout` for a free connection fails (psycopg_pool.PoolTimeout).
        "pool": {"min_size": 1, "max_size": DB_POOL_MAX_SIZE, "timeout": 30},
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the dev server and a management command write side by side.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
    }
# Reports and exports read from a streaming replica when one is given (plumbing/routers.py); the router is
# installed only then, so every read stays on the primary otherwise.
if os.environ.get("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = dj_database_url.parse(
        os.environ["DATABASE_REPLICA_URL"], conn_max_age=DATABASES["default"]["CONN_MAX_AGE"]
    )
    DATABASE_ROUTERS = ["plumbing.routers.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# The label round trip's common case in one statement each on PostgreSQL (annotation/services/round_trip.py);
# off, every request takes the general path, as on SQLite.
ROUND_TRIP_STATEMENTS = os.environ.get("ROUND_TRIP_STATEMENTS", "1") == "1"
# Those statements prepared once per connection on PostgreSQL (plumbing/prepared.py); 0 behind a pooler that
# lends a server connection per transaction (docs/scaling.md).
PREPARED_STATEMENTS = os.environ.get("PREPARED_STATEMENTS", "1") == "1"

# Every signed-in request reads its user with the user's roles in one statement. ModelBackend stays listed
# for sessions signed in before RolesBackend existed.
AUTHENTICATION_BACKENDS = ["annotation.roles.RolesBackend", "django.contrib.auth.backends.ModelBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "annotation:home"
LOGOUT_REDIRECT_URL = "login"

# English by default; a person's choice (on their profile, put in their session at sign-in), else the
# language cookie the switcher sets, else the browser's Accept-Language picks among these.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# Dates follow the page's language: config/formats/<language>/formats.py over Django's own.
FORMAT_MODULE_PATH = ["config.formats"]
LANGUAGE_COOKIE_AGE = 365 * 24 * 60 * 60
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    # plotly.js from the installed plotly package, as judgeboard/vendor/plotly.min.js (no CDN).
    "metrics.static_finders.PlotlyJsFinder",
]
# In production static files get hashed names (cached for a year) and Brotli and gzip copies (Brotli is
# in requirements.txt: WhiteNoise writes .br files only when it is installed).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# Uploads (bundles, TREC runs) larger than this are refused with 413 / a field error.
MAX_UPLOAD_BYTES = int(os.environ.get("MAX_UPLOAD_BYTES", str(50 * 1024 * 1024)))
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES

# Campaigns created in the browser: uploaded files wait here (shared by the web and the worker machines)
# until the background import is done; each file may be this large.
IMPORTS_DIR = Path(os.environ.get("IMPORTS_DIR", str(BASE_DIR / "var" / "imports")))
IMPORT_UPLOAD_MAX_BYTES = int(os.environ.get("IMPORT_UPLOAD_MAX_BYTES", str(1024**3)))
# A worker checking or importing a campaign beats a heartbeat (a file beside the uploads) six times in this
# many seconds; an import silent for longer is shown as stopped (its worker died), to retry or cancel.
IMPORT_WORKER_TIMEOUT_SECONDS = float(os.environ.get("IMPORT_WORKER_TIMEOUT_SECONDS", "60"))

# Background work (browser imports) runs in Django's Tasks framework on the database backend; a worker is
# `manage.py db_worker` (make demo starts one beside the server).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# API tokens stop working this many days after they were issued (0: never); a new sign-in gets a new one.
API_TOKEN_DAYS = int(os.environ.get("API_TOKEN_DAYS", "0"))
# With Redis, an API token's user and roles, and a signed-in session's, are kept there this long, so a
# request asks the database nothing to authenticate. A password change, a deactivation or new roles through
# the app or the admin drop them at once; a change by other means takes effect within this time.
API_TOKEN_CACHE_SECONDS = (
    int(os.environ.get("API_TOKEN_CACHE_SECONDS", "60")) if os.environ.get("REDIS_URL") else 0
)

# How long a handed-out task stays reserved for its annotator.
TASK_LEASE_MINUTES = int(os.environ.get("TASK_LEASE_MINUTES", "30"))
# How long a task a reviewer opened is kept from the other reviewers' queues (it refuses nobody's label).
REVIEW_LEASE_MINUTES = float(os.environ.get("REVIEW_LEASE_MINUTES", "5"))
# How often a results page of a campaign still collecting asks whether its labels changed.
RESULTS_REFRESH_SECONDS = float(os.environ.get("RESULTS_REFRESH_SECONDS", "20"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first, so that a request without credentials gets 401 with WWW-Authenticate.
        "annotation.api.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON bodies, whose numbers are numbers; the file uploads name their multipart parser.
    "DEFAULT_PARSER_CLASSES": ["annotation.api.parsers.BoundedJSONParser"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "annotation.api.negotiation.FormatNegotiation",
    "DEFAULT_SCHEMA_CLASS": "annotation.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_THROTTLE_RATES": {"login": os.environ.get("LOGIN_THROTTLE_RATE", "10/min")},
    "NUM_PROXIES": NUM_PROXIES,  # the throttles' client address, as in annotation/services/logins.py
    "EXCEPTION_HANDLER": "annotation.api.exceptions.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Judgeboard API",
    "DESCRIPTION": "Relevance grading, side-by-side judgments, metrics and launch decisions.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies as components of their own: an upload is `format: binary`, a field the server fills in
    # is not asked for.
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "annotation.api.schema.per_role_answers",
    ],
    # Swagger UI and ReDoc from the drf-spectacular-sidecar package, served as static files (no CDN).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "TaskKindEnum": "annotation.task_kinds.KIND_NAMES",
        "SideEnum": "annotation.services.labels.SIDES",
        "VerdictEnum": "annotation.models.Verdict",
        "RevisionKindEnum": "annotation.models.LabelRevision.Kind",
        "AssignmentStatusEnum": "annotation.models.Assignment.Status",
        "DecisionEnum": "metrics.api.serializers.OUTCOMES",
        "PersonRoleEnum": "annotation.api.serializers.people.PERSON_ROLES",
        "ExperimentVerdictEnum": "annotation.api.serializers.fields.VERDICTS",
    },
}

# A refused request (403, 400) is one line from django.request, without the traceback of the exception that
# answered it (config/logs.py).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"client_errors_one_line": {"()": "config.logs.ClientErrorsOneLine"}},
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"django.request": {"filters": ["client_errors_one_line"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"
