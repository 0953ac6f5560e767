"""A new campaign's files read into checked data: the bundle (JSON, may be gzipped) and any TREC runs, each
run's model and queries checked against the bundle. The command line and the browser's import read through
here, so they refuse the same files with the same words."""

from dataclasses import dataclass
from pathlib import Path

from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from annotation.bundle import CampaignBundle, load_json, load_run, parse_bundle, runs_check
from annotation.bundle.reading import read_text_file
from annotation.errors import InputError
from annotation.errors import InputErrorCode as Code
from plumbing.memory import free_memory_return
from plumbing.threads import map_parallel
from trec.files import RankedRun


@dataclass(frozen=True)
class CampaignFile:
    """A file on disk and the name its errors give (what the user called it)."""

    path: str | Path
    source: str


def campaign_files_read(
    bundle: CampaignFile,
    runs: list[tuple[str, CampaignFile]],
    *,
    max_bytes: int | None = None,
    read: dict[str, RankedRun] | None = None,
) -> tuple[CampaignBundle, dict[str, RankedRun]]:
    """The bundle and each (model, run file), checked whole; raises `InputError` at the first problem. The
    runs are read two at a time (NumPy lets go of the GIL for most of the reading) and first, so a run's
    error comes before the bundle's; the readers' freed memory goes back to the system before the import
    goes on. A file of more than `max_bytes` (once gunzipped: uploads) is refused as it is read. `read`
    holds runs of these files read and checked before (by a browser import's check): not read again, still
    checked against the bundle."""
    seen: set[str] = set()
    for model, file in runs:
        if model in seen:
            message = format_lazy(_("a second run for model {model}"), model=repr(model))
            raise InputError(Code.DUPLICATE_ID, message, source=file.source)
        seen.add(model)
    read = read or {}
    fresh = map_parallel(
        load_run,
        {model: (str(file.path), file.source, max_bytes) for model, file in runs if model not in read},
    )
    if fresh:
        free_memory_return()
    loaded = {model: read[model] if model in read else fresh[model] for model, _ in runs}
    text = read_text_file(bundle.path, bundle.source, max_bytes)
    parsed = parse_bundle(load_json(text, bundle.source), bundle.source, require_rankings=not loaded)
    runs_check(parsed, loaded, {model: file.source for model, file in runs})
    return parsed, loaded
