"""A web worker imports its views, compiles its templates and reads its formats when it starts, not on its
first request."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBE = """
import sys
import config.wsgi
from django.template import engines
from django.urls import get_resolver

print("metrics.views.launch" in sys.modules, "annotation.api.views.tasks" in sys.modules)
print(*sorted(engines["django"].engine.template_loaders[0].get_template_cache))
built = [r for r in get_resolver().url_patterns if hasattr(r, "url_patterns")] + [get_resolver()]
print(all(r._reverse_dict for r in built))

from django.utils import formats
print(all(("DATE_FORMAT", code) in formats._format_cache for code in ("en", "zh-hans")))
"""


def in_new_worker(probe: str, *, without: str = "") -> list[str]:
    """The lines `probe` prints in a new process that imports `config.wsgi` as a worker does."""
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "x" * 60, "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop(without, None)
    return subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()


def test_the_wsgi_module_warms_views_and_templates():
    imported, cached, reverse_tables, formats_read = in_new_worker(PROBE)
    assert imported.split() == ["True", "True"]
    assert {"base.html", "metrics/overview.html", "annotation/work_relevance.html"} <= set(cached.split())
    assert reverse_tables == "True"  # every include's table of names to URLs is built
    assert formats_read == "True"  # the first date a page shows in a language would have imported them


BLAS_PROBE = """
import config.wsgi
from threadpoolctl import threadpool_info

for pool in threadpool_info():
    print(pool["internal_api"], pool["num_threads"], pool["filepath"])
"""


def test_a_web_worker_runs_blas_on_its_calling_thread_only():
    # Left to itself, OpenBLAS starts a thread per core, which spins after every matrix product.
    pools = in_new_worker(BLAS_PROBE, without="OPENBLAS_NUM_THREADS")
    assert any("numpy" in pool for pool in pools), pools
    assert all(pool.split()[:2] == ["openblas", "1"] for pool in pools), pools
