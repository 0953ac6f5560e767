"""`FormatNegotiation` answers a request that accepts anything without parsing its header: with the renderer
and type DRF's own negotiation picks, for every operation of the API."""

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from annotation.api.negotiation import FormatNegotiation


def _api_views(patterns=None):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from _api_views(pattern.url_patterns)
            continue
        view = pattern.callback if isinstance(pattern, URLPattern) else None
        if issubclass(getattr(view, "cls", object), APIView):
            yield view


VIEWS = list(_api_views())


def test_every_api_operation_is_seen():
    assert len(VIEWS) > 30


@pytest.mark.parametrize("accept", [None, "*/*"])
@pytest.mark.parametrize("view", VIEWS, ids=lambda view: view.cls.__name__)
def test_a_request_accepting_anything_gets_what_drf_would_choose(view, accept):
    renderers = view.cls(**view.view_initkwargs).get_renderers()
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get("/api/", **headers))
    chosen = FormatNegotiation().select_renderer(request, renderers)
    drf = DefaultContentNegotiation().select_renderer(request, renderers)
    assert (type(chosen[0]), chosen[1]) == (type(drf[0]), drf[1])


@pytest.mark.parametrize(
    ("query", "accept", "expected"),
    [
        ("?format=csv", "*/*", "text/csv"),
        ("", "text/markdown", "text/markdown"),
        ("", "text/html, */*", "text/html"),
        ("", "*/*", "application/json"),
    ],
)
def test_a_format_or_a_type_asked_for_still_chooses(query, accept, expected):
    """The report's formats (`metrics.api.views`): anything but */* alone takes DRF's negotiation."""
    report = next(view for view in VIEWS if view.cls.__name__ == "LaunchReportView")
    renderers = report.cls().get_renderers()
    request = Request(APIRequestFactory().get(f"/api/{query}", HTTP_ACCEPT=accept))
    assert FormatNegotiation().select_renderer(request, renderers)[1] == expected
