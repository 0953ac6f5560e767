"""The schema documents the API's error body on every operation, with the statuses each can return, and
states per-role answers as alternatives a client can try in order."""

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema

from annotation.api.exceptions import BodyLimitMixin, ErrorSerializer


class AutoSchema(SpectacularAutoSchema):
    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        codes = ["400", "401", "403", "404", "406"]  # 406: an `Accept` or `?format=` the operation has not
        if isinstance(self.view, BodyLimitMixin):
            codes.append("413")
        if self.method in ("POST", "PUT", "PATCH", "DELETE"):
            codes.append("409")  # e.g. a write to an archived campaign, a label that changed meanwhile
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


def per_role_answers(result, generator, request, public):
    """An answer whose shape depends on the caller's role (`PolymorphicProxySerializer` without a
    discriminator) lists the shapes as `anyOf`, the fullest first: a reviewer's campaign holds every field of
    an annotator's, so it would match both alternatives of a `oneOf`."""
    stack = [result]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "oneOf" in node and "discriminator" not in node:
                node["anyOf"] = node.pop("oneOf")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return result
