"""One error body for the whole API: {"code", "detail", "field"?, "line"?}; domain errors keep their codes."""

from django.conf import settings
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.views import exception_handler as drf_exception_handler

from annotation.errors import InputError, InputErrorCode, TaskError, TaskErrorCode

TASK_ERROR_STATUS = {
    TaskErrorCode.NOT_FOUND: status.HTTP_404_NOT_FOUND,
    TaskErrorCode.NOT_ASSIGNED: status.HTTP_404_NOT_FOUND,
    TaskErrorCode.SKIPPED: status.HTTP_409_CONFLICT,
    TaskErrorCode.NOT_LEASED: status.HTTP_409_CONFLICT,
    TaskErrorCode.LEASE_EXPIRED_FULL: status.HTTP_409_CONFLICT,
    TaskErrorCode.NOT_MEMBER: status.HTTP_403_FORBIDDEN,
    TaskErrorCode.STALE: status.HTTP_409_CONFLICT,
    TaskErrorCode.ARCHIVED: status.HTTP_409_CONFLICT,
    TaskErrorCode.EXCLUDED: status.HTTP_403_FORBIDDEN,
}


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    detail = serializers.CharField()
    field = serializers.CharField(required=False)
    line = serializers.IntegerField(required=False)


class DomainError(exceptions.APIException):
    def __init__(self, status_code: int, body: dict):
        super().__init__(body["detail"], body["code"])
        self.status_code = status_code
        self.body = body


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = InputErrorCode.TOO_LARGE


def _domain_error(exc: InputError | TaskError) -> DomainError:
    body: dict[str, str | int] = {"code": str(exc.code), "detail": str(exc)}
    if exc.field:
        body["field"] = exc.field
    if isinstance(exc, InputError):
        if exc.line is not None:
            body["line"] = exc.line
        code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE if exc.code == InputErrorCode.TOO_LARGE else 400
        return DomainError(code, body)
    return DomainError(TASK_ERROR_STATUS.get(exc.code, status.HTTP_400_BAD_REQUEST), body)


def _first_error(detail, path: str = "") -> tuple[str, exceptions.ErrorDetail | str]:
    """The first leaf of a nested validation error and its field path, e.g. ("scale[0].value", ...)."""
    if isinstance(detail, dict):
        key, value = next(iter(detail.items()))
        name = "" if key == "non_field_errors" else str(key)
        return _first_error(value, f"{path}.{name}" if path and name else path or name)
    if isinstance(detail, list):
        index = next((i for i, item in enumerate(detail) if item), 0)
        nested = isinstance(detail[index], dict | list)
        return _first_error(detail[index], f"{path}[{index}]" if nested else path)
    return path, detail


def exception_handler(exc, context):
    if isinstance(exc, InputError | TaskError):
        exc = _domain_error(exc)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    # An error is JSON whatever was asked for (a report's HTML, an export's lines, a format refused by 406).
    request = context["request"]
    request.accepted_renderer, request.accepted_media_type = JSONRenderer(), "application/json"
    if isinstance(exc, DomainError):
        response.data = exc.body
    elif isinstance(exc, exceptions.ValidationError):
        field, first = _first_error(exc.detail)
        response.data = {
            "code": getattr(first, "code", "invalid"),
            "detail": f"{field}: {first}" if field else str(first),
        }
        if field:
            response.data["field"] = field
    else:
        codes = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        response.data = {
            "code": codes if isinstance(codes, str) else "error",
            "detail": str(response.data.get("detail", "")),
        }
    return response


class BodyLimitMixin:
    """413 before a body larger than settings.MAX_UPLOAD_BYTES is read (DRF's parsers read past Django's
    DATA_UPLOAD_MAX_MEMORY_SIZE, and uploaded files are not counted by it)."""

    def initial(self, request, *args, **kwargs):
        length = request.META.get("CONTENT_LENGTH") or "0"
        if not length.isdigit() or int(length) > settings.MAX_UPLOAD_BYTES:
            raise PayloadTooLarge(f"the request body is larger than {settings.MAX_UPLOAD_BYTES} bytes")
        super().initial(request, *args, **kwargs)
