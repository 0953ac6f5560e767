"""What a web worker loads before its first request (called from config/wsgi.py, not by commands).

Without it the first request of every new worker pays for importing every view module (NumPy, SciPy, DRF,
the report code) and compiling the templates it renders: a second or more, where a warm page takes tens of
milliseconds (bench/pages.py).
"""

from pathlib import Path

from django.conf import settings
from django.template import engines
from django.template.backends.django import DjangoTemplates
from django.template.exceptions import TemplateDoesNotExist, TemplateSyntaxError
from django.urls import NoReverseMatch, URLResolver, get_resolver, reverse
from django.utils import formats, translation


def warm() -> None:
    """Imports every view (through the URLconf), reverses every named route once (a worker's first
    `{% url %}` built the resolvers' reverse tables, tens of milliseconds, and each route's first compiled
    its regular expression), reads each language's formats and catalogue (the first page in a language
    imported its formats and parsed its messages) and compiles every project template into the cache."""
    resolver = get_resolver()
    _import_views(resolver.url_patterns)
    _reverse_every_route(resolver)
    for code, _ in settings.LANGUAGES:
        with translation.override(code):
            formats.get_format("DATE_FORMAT")
            translation.gettext("Sign in")
    for engine in engines.all():
        if not isinstance(engine, DjangoTemplates):
            continue
        for directory in engine.engine.dirs:  # the project's templates/, not every installed app's
            for path in Path(directory).rglob("*.html"):
                try:
                    engine.get_template(str(path.relative_to(directory)))
                except (TemplateDoesNotExist, TemplateSyntaxError):
                    continue  # a page that cannot compile fails on its own request, as without warming


def _reverse_every_route(resolver: URLResolver, namespace: str = "") -> None:
    """Each resolver builds its table on first use (a namespace's too); `reverse()` compiles a route's
    expression the first time it is tried. "1" for every argument passes the int and str converters."""
    for name, routes in resolver.reverse_dict.lists():
        if not isinstance(name, str):
            continue  # the table holds each view callable as well as its name
        for possibilities, *_ in routes:
            for _, parameters in possibilities:
                try:
                    reverse(f"{namespace}{name}", kwargs=dict.fromkeys(parameters, "1"))
                except NoReverseMatch:
                    continue  # a converter that refuses "1": that route compiles on its first use
    for prefix, (_, included) in resolver.namespace_dict.items():
        _reverse_every_route(included, f"{namespace}{prefix}:")


def _import_views(patterns) -> None:
    for pattern in patterns:
        if hasattr(pattern, "url_patterns"):  # an include(): its module is imported by reading it
            _import_views(pattern.url_patterns)
