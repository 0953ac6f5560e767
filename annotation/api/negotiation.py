"""Content negotiation by `Accept` or `?format=`: a format no renderer of the operation has is a 406 (DRF's
default answers it with a 404, as if the resource were missing)."""

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class FormatNegotiation(DefaultContentNegotiation):
    def filter_renderers(self, renderers, format):
        chosen = [renderer for renderer in renderers if renderer.format == format]
        if not chosen:
            formats = ", ".join(renderer.format for renderer in renderers)
            raise NotAcceptable(f"format: must be one of {formats}, got {format!r}.")
        return chosen
