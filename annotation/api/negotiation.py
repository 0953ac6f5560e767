"""Content negotiation by `Accept` or `?format=`: a format no renderer of the operation has is a 406 (DRF's
default answers it with a 404, as if the resource were missing)."""

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class FormatNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        # DRF reads `?format=` as no format, and lets a format in the path pass over a different one there.
        asked = request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        if asked is not None and (asked == "" or (format_suffix and asked != format_suffix)):
            raise NotAcceptable(f"format: {asked!r} is not the format this operation answers in.")
        if asked is None and not format_suffix and request.META.get("HTTP_ACCEPT", "*/*") == "*/*":
            # What scripts send (or nothing): DRF's answer, the first renderer in its own type, without
            # parsing the header (a tenth of a label's work outside the view).
            return renderers[0], renderers[0].media_type
        return super().select_renderer(request, renderers, format_suffix)

    def filter_renderers(self, renderers, format):
        chosen = [renderer for renderer in renderers if renderer.format == format]
        if not chosen:
            formats = ", ".join(renderer.format for renderer in renderers)
            raise NotAcceptable(f"format: must be one of {formats}, got {format!r}.")
        return chosen
