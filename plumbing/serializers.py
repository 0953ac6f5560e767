"""DRF serializers for the responses every rater repeats all day: fields built once per class. Needs DRF,
not the apps."""

from rest_framework import serializers
from rest_framework.utils.serializer_helpers import BindingDict


class FieldsOnceSerializer(serializers.Serializer):
    """A serializer whose fields are built and bound once per class, on an instance of its own, and shared by
    all its instances. DRF deep-copies every declared field, nested serializers included, for each instance
    and binds each copy: on the label round trip that was a fifth of the API's CPU. A field never changes
    once bound, so sharing it changes nothing but what it sees as its parent: only for serializers that take
    no context and are never partial, with no `SerializerMethodField` (it would call the method of the
    class's own instance). tests/api/test_output_serializers.py holds the answers to DRF's own."""

    def __init__(self, *args, **kwargs):
        if kwargs.get("context") or kwargs.get("partial"):
            raise TypeError(f"{type(self).__name__} shares its fields: no context, never partial")
        super().__init__(*args, **kwargs)

    @property
    def fields(self):
        shared = type(self).__dict__.get("_fields_shared")
        if shared is None:
            own = type(self)()
            shared = BindingDict(own)
            for name, field in own.get_fields().items():
                if isinstance(field, serializers.SerializerMethodField):
                    raise TypeError(f"{type(self).__name__}.{name}: a method field is not shared")
                shared[name] = field
            type(self)._fields_shared = shared
        return shared
