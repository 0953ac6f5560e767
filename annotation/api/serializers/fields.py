"""Strict request fields (no coercion of another JSON type) and the verdicts' values."""

from rest_framework import serializers

from annotation.models import Verdict


class StrictIntegerField(serializers.IntegerField):
    """An integer as JSON writes it: "2", 2.0 and true are wrong types, not 2."""

    default_error_messages = {"invalid": "must be an integer."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A JSON number: "5" and true are wrong types, not 5."""

    default_error_messages = {"invalid": "must be a number."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A JSON string: 5 is a wrong type, not "5"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean: 0, "true" and "yes" are wrong types, not true."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


# A verdict relative to the experimental model, as reviewers and gold labels give it.
VERDICTS = Verdict.values
