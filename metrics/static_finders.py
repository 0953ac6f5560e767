"""plotly.js as a static file, straight from the installed `plotly` package (no CDN, no copy in the repo).

Only `plotly.min.js` is exposed: the package folder also holds a widget bundle and data sets nobody serves.
WhiteNoise serves it in production after `collectstatic`; the development and test servers find it here.
"""

import importlib.util
from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

PLOTLY_JS_STATIC_PATH = "judgeboard/vendor/plotly.min.js"
_PLOTLY = importlib.util.find_spec("plotly")  # found, not imported: plotly's import is heavy
PLOTLY_JS_FILE = (
    Path(_PLOTLY.submodule_search_locations[0])  # type: ignore[union-attr, index]  # a pinned requirement
    / "package_data"
    / "plotly.min.js"
)


class PlotlyJsFinder(BaseFinder):
    def check(self, **kwargs):
        if PLOTLY_JS_FILE.is_file():
            return []
        return [Error(f"{PLOTLY_JS_FILE} is missing; reinstall the plotly package", id="metrics.E001")]

    def find(self, path, find_all=False):
        if path != PLOTLY_JS_STATIC_PATH:
            return []
        return [str(PLOTLY_JS_FILE)] if find_all else str(PLOTLY_JS_FILE)

    def list(self, ignore_patterns):
        storage = FileSystemStorage(location=PLOTLY_JS_FILE.parent)
        storage.prefix = str(Path(PLOTLY_JS_STATIC_PATH).parent)
        yield PLOTLY_JS_FILE.name, storage
