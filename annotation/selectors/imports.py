"""A campaign created in the browser, as its page shows it."""

from annotation.models import CampaignImport
from annotation.services.imports import import_progress


def import_view(*, staged: CampaignImport) -> dict:
    """Status, preview, error and, while importing, {rows, total} so far."""
    running = staged.status == CampaignImport.Status.IMPORTING
    return {
        "import": staged,
        "status": staged.status,
        "status_label": staged.get_status_display(),
        "preview": staged.preview,
        "error": staged.error,
        "progress": import_progress(staged=staged) if running else None,
        "waiting": staged.status in (CampaignImport.Status.CHECKING, CampaignImport.Status.IMPORTING),
    }
