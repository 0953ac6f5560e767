"""Request parsing: JSON bodies with a bound on nesting (deep JSON is a 400, not a RecursionError, a 500),
and the query string as the filters read it."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 32  # a bundle nests four levels; anything near Python's recursion limit is an attack


def nesting_depth(data) -> int:
    """How deeply lists and objects nest in parsed JSON (a scalar is 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend(
                    (item, depth + 1) for item in (value.values() if isinstance(value, dict) else value)
                )
    return deepest


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels") from None
        if nesting_depth(data) > MAX_DEPTH:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels")
        return data


def query_of(request) -> dict:
    """The query string as the filter serializers read it: an empty value is a value, refused where the
    schema refuses it (DRF reads `?model=` of an optional field as not given); of repeated ones, the last."""
    return request.query_params.dict()
