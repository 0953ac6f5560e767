"""Logging filters: an answer refused with a 4xx is one line in the log, not a traceback."""

import logging


class ClientErrorsOneLine(logging.Filter):
    """Drops the traceback of a record about a 4xx answer: Django logs the PermissionDenied (or bad request)
    a 403 (or 400) answers with its traceback, which is the client's doing, not a fault of the server."""

    def filter(self, record: logging.LogRecord) -> bool:
        if 400 <= getattr(record, "status_code", 0) < 500:
            record.exc_info = None
            record.exc_text = None
        return True
