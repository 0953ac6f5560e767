"""TREC runs in a campaign import: a run file read as ranked lists and checked against its bundle."""

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from annotation.bundle.campaign import CampaignBundle
from annotation.bundle.reading import trec_message, with_id
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from annotation.models import Document
from trec.files import RankedRun, read_run_ranked
from trec.tokenizer import TrecFormatError, TrecTooLargeError


def runs_check(bundle: CampaignBundle, runs: dict[str, RankedRun], sources: dict[str, str]) -> None:
    """Each run (by model name, read from the file `sources[model]`) names one of the bundle's models and
    ranks only its queries. Raises `InputError` naming the run's file."""
    model_names = sorted(model.name for model in bundle.models)
    query_ids = {query.external_id for query in bundle.queries}
    for name, run in runs.items():
        if name not in model_names:
            message = format_lazy(
                _("the run is for model {model}, which the bundle does not list (its models: {listed})"),
                model=repr(name),
                listed=", ".join(model_names),
            )
            raise InputError(Code.UNKNOWN_MODEL, message, source=sources[name])
        unlisted = sorted(set(run.queries) - query_ids)
        if unlisted:
            message = with_id(_("the run ranks query {id}, which the bundle does not list"), unlisted[0])
            raise InputError(Code.UNKNOWN_QUERY, message, source=sources[name])


def ranking_rows(bundle: CampaignBundle, runs: dict[str, RankedRun]) -> int:
    """The ranking rows an import writes: each run's, and the bundle's own for models without a run."""
    inline = sum(
        len(docs) for name, ranks in bundle.rankings.items() if name not in runs for docs in ranks.values()
    )
    return inline + sum(int(run.rank.size) for run in runs.values())


def load_run(path: str, source: str, max_bytes: int | None = None) -> RankedRun:
    """A TREC run file as ranked lists, checked for what a campaign can store; every problem names `source`
    and, where there is one, the line (the file is the field: the API names its own). More than `max_bytes`
    (once gunzipped) is refused as it is read."""
    try:
        run = read_run_ranked(path, max_bytes=max_bytes)
    except TrecTooLargeError as exc:
        raise InputError(Code.TOO_LARGE, trec_message(exc), source=source) from None
    except TrecFormatError as exc:
        raise InputError(Code.MALFORMED, trec_message(exc), source=source, line=exc.line) from None
    except UnicodeDecodeError:
        raise InputError(Code.MALFORMED, _("not UTF-8 text"), source=source) from None
    if not run.queries:
        raise InputError(Code.INVALID_VALUE, _("the run is empty"), source=source)
    longest = Document._meta.get_field("external_id").max_length or 0
    too_long = next((doc for doc in run.documents if len(doc) > longest), None)
    if too_long is not None:
        message = format_lazy(
            _("document id {id}... is longer than {length} characters"),
            id=repr(too_long[:40]),
            length=longest,
        )
        raise InputError(Code.INVALID_VALUE, message, source=source)
    return run
