"""The schema documents the API's error body on every operation, with the statuses each can return."""

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

from annotation.api.exceptions import BodyLimitMixin, ErrorSerializer


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        codes = ["400", "401", "403", "404", "406"]  # 406: an `Accept` or `?format=` the operation has not
        if isinstance(self.view, BodyLimitMixin):
            codes.append("413")
        if self.method in ("POST", "PUT", "PATCH"):
            codes.append("415")  # a body in a media type the operation does not parse
        if self.view.throttle_classes:
            codes.append("429")
        for code in codes:
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    ErrorSerializer, code, media_types=["application/json"], direction=direction
                )
        return responses
