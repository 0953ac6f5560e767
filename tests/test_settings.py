import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_manage(*args, **env):
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {"DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE", "DJANGO_SETTINGS_MODULE"}
    }
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_mode_refuses_to_start_without_a_secret_key():
    result = run_manage("check", DEBUG="0")
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr


def test_production_mode_is_the_default():
    result = run_manage("check")
    assert result.returncode != 0
    assert "Production mode (DEBUG=0) needs SECRET_KEY" in result.stderr
    assert "Traceback" not in result.stderr and "export DEBUG=1" in result.stderr  # a line, not a stack


def test_production_mode_refuses_the_development_key():
    result = run_manage("check", DEBUG="0", SECRET_KEY="django-insecure-judgeboard-development-only")
    assert result.returncode != 0


def test_production_mode_passes_check_deploy():
    result = run_manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY="x7Gq2-" + "k" * 60,
        ALLOWED_HOSTS="judgeboard.example.com",
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_database_url_selects_the_database():
    code = "from django.conf import settings; print(settings.DATABASES['default']['ENGINE'])"
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; {code}",
        ],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": "postgres://u@127.0.0.1:5432/x"},
        capture_output=True,
        text=True,
    )
    assert result.stdout.strip() == "django.db.backends.postgresql"


def test_metrics_compute_imports_no_django():
    modules = sorted(p.stem for p in (ROOT / "metrics" / "compute").glob("*.py") if p.stem != "__init__")
    code = (
        "import sys\n"
        f"for name in {modules!r}: __import__('metrics.compute.' + name)\n"
        "leaked = sorted(m for m in sys.modules if m == 'django' or m.startswith('django.'))\n"
        "print(','.join(leaked))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""
