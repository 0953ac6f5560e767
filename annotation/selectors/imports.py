"""A campaign created in the browser, as its page shows it."""

import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from annotation.models import CampaignImport

# Ranking rows written so far, in a file beside the uploads: the import's own transaction hides its rows
# from the page, a file does not.
PROGRESS_FILE = "progress.json"


def import_folder(staged: CampaignImport) -> Path:
    """Where an import's uploaded files wait, under IMPORTS_DIR."""
    return Path(settings.IMPORTS_DIR) / staged.folder


@dataclass(frozen=True)
class ImportProgress:
    rows: int  # ranking rows written so far
    total: int


def import_progress(*, staged: CampaignImport) -> ImportProgress | None:
    """How far a running import got, None before it started writing."""
    try:
        written = json.loads((import_folder(staged) / PROGRESS_FILE).read_text())
    except (OSError, ValueError):
        return None
    return ImportProgress(rows=written["rows"], total=written["total"])


@dataclass(frozen=True)
class ImportView:
    """Status, preview, error and, while importing, how far it got."""

    staged: CampaignImport
    status: str
    status_label: str
    preview: dict | None
    error: str
    progress: ImportProgress | None
    waiting: bool  # the page polls for news


def import_view(*, staged: CampaignImport) -> ImportView:
    running = staged.status == CampaignImport.Status.IMPORTING
    return ImportView(
        staged=staged,
        status=staged.status,
        status_label=staged.get_status_display(),
        preview=staged.preview,
        error=staged.error,
        progress=import_progress(staged=staged) if running else None,
        waiting=staged.status in (CampaignImport.Status.CHECKING, CampaignImport.Status.IMPORTING),
    )
