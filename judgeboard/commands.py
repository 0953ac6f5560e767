"""The commands a release pipeline runs against a Judgeboard server, over `judgeboard.client`: sign in,
create a campaign from a bundle and runs, wait for its decision, read the decision (its exit code is the
gate), the report and the labels."""

import argparse
import getpass
import gzip
import json
import sys
import time
import zlib
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, TextIO

from judgeboard.client import QRELS_INTEGER, REPORT_FORMATS, ApiError, Client, Decision, Status
from judgeboard.errors import CommandFailed, Exit
from trec.files import read_run
from trec.tokenizer import TrecFormatError

EXIT_CODES = {
    Status.LAUNCH: Exit.LAUNCH,
    Status.NO_LAUNCH: Exit.NO_LAUNCH,
    Status.INCONCLUSIVE: Exit.INCONCLUSIVE,
    Status.COLLECTING: Exit.COLLECTING,
}


def add_commands(commands: argparse._SubParsersAction) -> None:
    login = commands.add_parser(
        "login",
        help="print an API token for JUDGEBOARD_TOKEN",
        description="Signs in to JUDGEBOARD_URL and prints the user's API token (the same one until it is "
        "revoked): export JUDGEBOARD_TOKEN=$(judgeboard login --username ci --password-stdin < secret).",
    )
    login.add_argument("--username", help="asked for when not given")
    login.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input, not a prompt"
    )

    campaign = commands.add_parser("campaign", help="create a campaign, wait for its decision")
    actions = campaign.add_subparsers(dest="action", required=True, parser_class=type(campaign))
    create = actions.add_parser(
        "create",
        help="create a campaign from a bundle and TREC runs; prints its id",
        description="Creates a campaign from BUNDLE (JSON, may be gzipped; managers), then uploads each run "
        "as its model's rankings; prints the campaign's id as soon as it exists. The runs are read and "
        "checked here first: a run the server refuses after that leaves the campaign created (its id "
        "printed) and exits 5.",
    )
    create.add_argument("bundle", help="the campaign bundle, as import_campaign reads it")
    create.add_argument(
        "--run", action="append", default=[], metavar="MODEL=FILE", help="a TREC run of MODEL; repeatable"
    )
    wait = actions.add_parser(
        "wait",
        help="wait until the campaign's decision is made",
        description="Asks for the decision every --interval seconds until it is made (launch, no_launch or "
        "inconclusive: exit 0) or --timeout seconds have passed (exit 3, still collecting); prints the "
        "last decision as JSON. A server that does not answer is asked again until the timeout.",
    )
    wait.add_argument("campaign_id", type=int, metavar="ID")
    wait.add_argument("--until", choices=["decided"], default="decided")
    wait.add_argument("--timeout", type=_seconds, required=True, metavar="SECONDS")
    wait.add_argument("--interval", type=_seconds, default=30.0, metavar="SECONDS", help="default 30")
    wait.add_argument("--model", help="an experimental model (default: the campaign's)")

    decision = commands.add_parser(
        "decision",
        help="the launch decision as JSON; exit 0 launch, 1 no launch, 2 inconclusive, 3 collecting",
        description="Prints the launch decision as JSON. Exit code: 0 launch, 1 do not launch, "
        "2 inconclusive, 3 still collecting; 4 and up: errors (4 usage, 5 refused, 6 server).",
    )
    decision.add_argument("campaign_id", type=int, metavar="ID")
    decision.add_argument("--model", help="an experimental model (default: the campaign's)")

    report = commands.add_parser("report", help="the launch report")
    report.add_argument("campaign_id", type=int, metavar="ID")
    report.add_argument("--format", choices=REPORT_FORMATS, default="json")
    report.add_argument("--model", help="an experimental model (default: the campaign's)")
    report.add_argument("-o", "--output", metavar="FILE", help="write here, not to standard output")

    export = commands.add_parser("export", help="the labels (JSONL) or the aggregated labels (TREC qrels)")
    export.add_argument("campaign_id", type=int, metavar="ID")
    what = export.add_mutually_exclusive_group(required=True)
    what.add_argument("--labels", action="store_true", help="every label, as import_judgments reads them")
    what.add_argument("--qrels", action="store_true", help="the aggregated labels as TREC qrels")
    export.add_argument("--integer", choices=QRELS_INTEGER, help="qrels with integer labels, for trec_eval")
    export.add_argument("-o", "--output", metavar="FILE", help="write here, not to standard output")


def run(options: dict, out: TextIO, environ: Mapping[str, str]) -> int:
    """Runs the server command `options` name; returns its exit code."""
    command = options["command"] if options["command"] != "campaign" else f"campaign {options['action']}"
    try:
        client = Client.from_environment(environ, token=command != "login")
    except ValueError as exc:
        raise CommandFailed(str(exc), Exit.USAGE) from None
    try:
        return COMMANDS[command](client, options, out)
    except ApiError as error:
        raise _failed(error) from None


def login(client: Client, options: dict, out: TextIO) -> int:
    username = options["username"] or input("username: ")
    if options["password_stdin"]:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = getpass.getpass("password: ")
    out.write(client.token(username, password) + "\n")
    return Exit.OK


def campaign_create(client: Client, options: dict, out: TextIO) -> int:
    bundle = _read_bundle(options["bundle"])
    runs = [_run_spec(spec, bundle) for spec in options["run"]]
    campaign = client.campaign_create(bundle)
    out.write(f"{campaign.id}\n")
    out.flush()
    for warning in campaign.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for model, path in runs:
        try:
            client.run_upload(campaign.id, model, path)
        except ApiError as error:
            failed = _failed(error)
            message = f"campaign {campaign.id} was created; the run {model}={path}: {failed}"
            raise CommandFailed(message, failed.code) from None
    return Exit.OK


def campaign_wait(client: Client, options: dict, out: TextIO) -> int:
    deadline = time.monotonic() + options["timeout"]
    decision = None
    while True:
        try:
            decision = client.decision(options["campaign_id"], options["model"])
        except ApiError as error:
            # A server restarting, or a proxy between deploys, is asked again; a refusal is final.
            if error.status is not None and error.status < 500:
                raise
            print(f"judgeboard: {error}; asking again", file=sys.stderr)
        if decision is not None and decision.decided:
            _write_decision(out, decision)
            return Exit.OK
        left = deadline - time.monotonic()
        if left <= 0:
            if decision is None:
                raise CommandFailed(f"no answer from {client.url} in {options['timeout']:g} s", Exit.SERVER)
            _write_decision(out, decision)
            return Exit.COLLECTING
        time.sleep(min(options["interval"], left))


def decision(client: Client, options: dict, out: TextIO) -> int:
    answer = client.decision(options["campaign_id"], options["model"])
    _write_decision(out, answer)
    return EXIT_CODES[answer.status]


def report(client: Client, options: dict, out: TextIO) -> int:
    body = client.report(options["campaign_id"], options["format"], options["model"])
    _write_file(body, options["output"], out)
    return Exit.OK


def export(client: Client, options: dict, out: TextIO) -> int:
    campaign_id = options["campaign_id"]
    if options["labels"]:
        if options["integer"]:
            raise CommandFailed("--integer is for --qrels", Exit.USAGE)
        body = client.export_judgments(campaign_id)
    else:
        body = client.export_qrels(campaign_id, options["integer"])
    _write_file(body, options["output"], out)
    return Exit.OK


COMMANDS: dict[str, Callable[[Client, dict, TextIO], int]] = {
    "login": login,
    "campaign create": campaign_create,
    "campaign wait": campaign_wait,
    "decision": decision,
    "report": report,
    "export": export,
}


def _failed(error: ApiError) -> CommandFailed:
    """A refusal (4xx) is the input's fault, exit 5; no answer or a failing server (5xx), exit 6."""
    refused = error.status is not None and error.status < 500
    return CommandFailed(str(error), Exit.INPUT if refused else Exit.SERVER)


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds ≥ 0")
    return value


def _read_bundle(path: str) -> dict[str, Any]:
    """The bundle's JSON (gunzipped first when it is gzipped); the server checks the rest."""
    try:
        with open(path, "rb") as file:
            raw = file.read()
        if raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        bundle = json.loads(raw)
    except OSError as exc:
        raise CommandFailed(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise CommandFailed(f"{path}: not a valid gzip file: {exc}") from None
    except json.JSONDecodeError as exc:
        raise CommandFailed(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise CommandFailed(f"{path}: not UTF-8 text (byte {exc.start})") from None
    if not isinstance(bundle, dict):
        raise CommandFailed(f"{path}: a bundle is a JSON object, not {type(bundle).__name__}")
    return bundle


def _run_spec(spec: str, bundle: dict[str, Any]) -> tuple[str, str]:
    """`MODEL=FILE`, the model one of the bundle's and the file a TREC run: checked before anything is
    created."""
    model, _, path = spec.partition("=")
    if not model or not path:
        raise CommandFailed(f"--run {spec!r}: write it as MODEL=FILE", Exit.USAGE)
    models = bundle.get("models")
    names = (
        [entry.get("name") for entry in models if isinstance(entry, dict)] if isinstance(models, list) else []
    )
    if model not in names:
        raise CommandFailed(
            f"--run {spec!r}: the bundle has no model {model!r} (it has {', '.join(map(str, names))})"
        )
    try:
        if not read_run(path).query.size:
            raise CommandFailed(f"{path}: no ranked documents (the run is empty)")
    except TrecFormatError as exc:
        raise CommandFailed(str(exc)) from None
    return model, path


def _write_decision(out: TextIO, decision: Decision) -> None:
    out.write(json.dumps(decision.data, indent=2) + "\n")


def _write_file(body: bytes, output: str | None, out: TextIO) -> None:
    if output:
        try:
            with open(output, "wb") as file:
                file.write(body)
        except OSError as exc:
            raise CommandFailed(f"{output}: cannot write: {exc.strerror or exc}") from None
        return
    out.flush()
    binary: BinaryIO | None = getattr(out, "buffer", None)
    if binary is not None:
        binary.write(body)
        binary.flush()
    else:
        out.write(body.decode())
