"""`judgeboard`, the command line: `evaluate` (files to numbers, no server) and the commands a release
pipeline runs against a Judgeboard server (`JUDGEBOARD_URL`, `JUDGEBOARD_TOKEN`). Exit codes:
`judgeboard.errors.Exit`."""

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn, TextIO

from judgeboard import evaluate
from judgeboard.errors import CommandFailed, Exit


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors on exit code 4: 2 is `decision`'s "inconclusive"."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(Exit.USAGE, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    root = _Parser(prog="judgeboard", description=__doc__.split("\n\n")[0])
    commands = root.add_subparsers(dest="command", required=True, parser_class=_Parser)
    evaluate.add_arguments(
        commands.add_parser("evaluate", help=evaluate.DESCRIPTION, description=evaluate.DESCRIPTION)
    )
    return root


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Runs one command; returns its exit code. Errors go to standard error as one line, no traceback."""
    options = vars(parser().parse_args(argv))
    out = out or sys.stdout
    try:
        if options["command"] == "evaluate":
            evaluate.evaluate(options, out)
        return Exit.OK
    except CommandFailed as error:
        print(f"judgeboard: {error}", file=sys.stderr)
        return error.code
