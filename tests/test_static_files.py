"""Static files in production: compressed (Brotli, else gzip) and cached for a year under hashed names."""

import pytest
from django.core.management import call_command
from django.templatetags.static import static
from django.test import Client

from metrics.static_finders import PLOTLY_JS_FILE, PLOTLY_JS_STATIC_PATH


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    return tmp_path_factory.mktemp("static")


def test_plotly_is_served_compressed_and_cached_for_a_year(settings, collected):
    settings.DEBUG = False
    settings.STATIC_ROOT = collected
    settings.STATICFILES_FINDERS = ["metrics.static_finders.PlotlyJsFinder"]  # the heaviest file alone
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    call_command("collectstatic", interactive=False, verbosity=0)
    url = static(PLOTLY_JS_STATIC_PATH)
    assert url != f"/static/{PLOTLY_JS_STATIC_PATH}"  # a hashed name, so it may be cached for good
    size = PLOTLY_JS_FILE.stat().st_size
    for encoding, most in (("br", 0.25), ("gzip", 0.35)):
        response = Client().get(url, headers={"accept-encoding": encoding})
        assert response.status_code == 200 and response["Content-Encoding"] == encoding
        body = b"".join(response.streaming_content)
        assert len(body) < most * size, (encoding, len(body), size)
        assert "max-age=315360000" in response["Cache-Control"] and "immutable" in response["Cache-Control"]
    plain = Client().get(url)
    assert "Content-Encoding" not in plain and int(plain["Content-Length"]) == size
