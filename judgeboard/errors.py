"""What a `judgeboard` command ends with: its exit code, and the error that says why it stopped."""

from enum import IntEnum


class Exit(IntEnum):
    """Exit codes. 0–3 are answers (`decision`: launch, do not launch, inconclusive, still collecting; other
    commands: 0 done); from 4 on, errors."""

    OK = 0
    LAUNCH = 0
    NO_LAUNCH = 1
    INCONCLUSIVE = 2
    COLLECTING = 3  # also `campaign wait` when its time ran out first
    USAGE = 4  # bad arguments
    INPUT = 5  # a file that cannot be read, a request the server refused (4xx)
    SERVER = 6  # the server unreachable, or failing (5xx), or an answer that is not what the schema says


class CommandFailed(Exception):
    """A command that cannot go on: its message (one line, `file:line: problem` for files) and exit code."""

    def __init__(self, message: str, code: Exit = Exit.INPUT):
        super().__init__(message)
        self.code = code
