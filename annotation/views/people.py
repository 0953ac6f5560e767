"""Managers' pages: people (add, deactivate, reset a password) and a campaign's members."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.errors import InputError
from annotation.forms import CampaignMembersForm, PersonActionForm, PersonForm
from annotation.models import Campaign
from annotation.roles import can_manage, role_required
from annotation.selectors.people import campaign_member_ids, people_list
from annotation.services import people as services


def _hand_over(request, username: str, path: str) -> None:
    """The set-password link, shown once: it is in this message and nowhere else."""
    link = request.build_absolute_uri(path)
    messages.success(
        request, f"Hand this link to {username} to set their password; it is shown only now: {link}"
    )


@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def people(request):
    form = PersonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user, path = services.person_create(**form.cleaned_data)
        except InputError as error:
            form.add_error(error.field or None, error.message)
        else:
            _hand_over(request, user.username, path)
            return redirect("annotation:people")
    return render(request, "annotation/people.html", {"people": people_list(), "form": form})


@role_required(can_manage)
@require_POST
def person(request, user_id: int):
    user = get_object_or_404(get_user_model(), pk=user_id)
    form = PersonActionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose deactivate, activate or reset password.")
        return redirect("annotation:people")
    action = form.cleaned_data["action"]
    try:
        if action == "password_reset":
            _hand_over(request, user.username, services.person_password_reset(user=user))
        else:
            services.person_active_set(by=request.user, user=user, active=action == "activate")
            messages.success(
                request, f"{user.username} is {'active' if action == 'activate' else 'deactivated'}."
            )
    except InputError as error:
        messages.error(request, error.message)
    return redirect("annotation:people")


@role_required(can_manage)
@require_http_methods(["GET", "POST"])
def members(request, campaign_id: int):
    campaign = get_object_or_404(Campaign, pk=campaign_id)
    initial = {"open_to_all": campaign.open_to_all, "members": campaign_member_ids(campaign=campaign)}
    form = CampaignMembersForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        services.campaign_members_set(campaign=campaign, **form.cleaned_data)
        messages.success(request, f"Members of {campaign.name} saved.")
        return redirect("annotation:campaign_members", campaign_id=campaign.pk)
    return render(request, "annotation/members.html", {"campaign": campaign, "form": form})
