"""What a web worker loads before its first request (called from config/wsgi.py, not by commands).

Without it the first request of every new worker pays for importing every view module (NumPy, SciPy, DRF,
the report code) and compiling the templates it renders: a second or more, where a warm page takes tens of
milliseconds (bench/pages.py).
"""

from pathlib import Path

from django.template import engines
from django.template.backends.django import DjangoTemplates
from django.template.exceptions import TemplateDoesNotExist, TemplateSyntaxError
from django.urls import URLResolver, get_resolver


def warm() -> None:
    """Imports every view (through the URLconf), builds the URL resolvers' reverse tables (a worker's first
    `{% url %}` built them: tens of milliseconds) and compiles every project template into the cache."""
    resolver = get_resolver()
    _import_views(resolver.url_patterns)
    _reverse_tables(resolver)
    for engine in engines.all():
        if not isinstance(engine, DjangoTemplates):
            continue
        for directory in engine.engine.dirs:  # the project's templates/, not every installed app's
            for path in Path(directory).rglob("*.html"):
                try:
                    engine.get_template(str(path.relative_to(directory)))
                except (TemplateDoesNotExist, TemplateSyntaxError):
                    continue  # a page that cannot compile fails on its own request, as without warming


def _reverse_tables(resolver: URLResolver) -> None:
    """Each resolver builds its table on first use; a namespaced include's is its own."""
    resolver.reverse_dict  # noqa: B018  (reading the property builds the table)
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            _reverse_tables(pattern)


def _import_views(patterns) -> None:
    for pattern in patterns:
        if hasattr(pattern, "url_patterns"):  # an include(): its module is imported by reading it
            _import_views(pattern.url_patterns)
