from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render

from annotation.models import Campaign
from annotation.roles import can_review, role_required
from metrics.forms import ExplorerForm
from metrics.selectors.explorer import query_explorer
from plumbing.routers import reads_from_replica

PAGE_SIZE = 50


@role_required(can_review)
@reads_from_replica
def explorer(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    form = ExplorerForm(request.GET)
    form.is_valid()  # a field that does not parse keeps its default, and the page says so
    data, filters = form.cleaned_data, form.filters()
    model, measure = data.get("model") or None, data.get("measure") or None
    view = query_explorer(campaign=campaign, model=model, measure=measure, filters=filters)
    page = Paginator(view.rows, PAGE_SIZE).get_page(data.get("page"))
    context = {"view": view, "page": page, "form": form, "filters": filters}
    return render(request, "metrics/explorer.html", context)
