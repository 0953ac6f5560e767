"""`judgeboard`, the command line: `evaluate` (files to numbers, no server) and the commands a release
pipeline runs against a Judgeboard server (`JUDGEBOARD_URL`, `JUDGEBOARD_TOKEN`). Exit codes:
`judgeboard.errors.Exit`."""

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn, TextIO

from judgeboard import commands, evaluate
from judgeboard.errors import CommandFailed, Exit
from plumbing.memory import keep_freed_memory


class _Parser(argparse.ArgumentParser):
    """argparse, with its usage errors on exit code 4: 2 is `decision`'s "inconclusive"."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(Exit.USAGE, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    root = _Parser(
        prog="judgeboard",
        description="TREC evaluation without a server (evaluate), and a release pipeline's calls to a "
        "Judgeboard server at JUDGEBOARD_URL with JUDGEBOARD_TOKEN. Exit codes: 0 done (decision: 0 launch, "
        "1 do not launch, 2 inconclusive, 3 still collecting); 4 bad arguments, 5 refused (a bad file, a "
        "4xx answer), 6 no answer or a server error.",
    )
    subparsers = root.add_subparsers(dest="command", required=True, parser_class=_Parser)
    evaluate.add_arguments(
        subparsers.add_parser("evaluate", help=evaluate.DESCRIPTION, description=evaluate.DESCRIPTION)
    )
    commands.add_commands(subparsers)
    return root


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, environ: Mapping[str, str] = os.environ
) -> int:
    """Runs one command; returns its exit code. Errors go to standard error as one line, no traceback."""
    options = vars(parser().parse_args(argv))
    out = out or sys.stdout
    try:
        if options["command"] == "evaluate":
            keep_freed_memory()
            evaluate.evaluate(options, out)
            return Exit.OK
        return commands.run(options, out, environ)
    except CommandFailed as error:
        print(f"judgeboard: {error}", file=sys.stderr)
        return error.code
