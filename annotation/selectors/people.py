"""People as managers see them: roles, whether active, when they last signed in and last labelled, and
whether the manager looking may act on them."""

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db.models import OuterRef, QuerySet, Subquery

from annotation.models import Campaign, Judgment, Preference, Profile
from annotation.roles import Role, may_manage


@dataclass(frozen=True)
class PersonView:
    pk: int
    username: str
    name: str
    roles: list[str]
    is_active: bool
    last_login: datetime | None
    last_label: datetime | None
    manageable: bool  # the viewer may act on them (`roles.may_manage`, and not themselves)


def _latest(label_model) -> Subquery:
    rows = label_model.objects.filter(annotator=OuterRef("pk")).order_by("-updated_at")
    return Subquery(rows.values("updated_at")[:1])


def people_list(*, viewer) -> list[PersonView]:
    """Everyone with a role or a login, ordered by username, as `viewer` sees them; two queries."""
    users = (
        get_user_model()
        .objects.order_by("username")
        .annotate(last_judgment=_latest(Judgment), last_preference=_latest(Preference))
    )
    roles: dict[int, list[str]] = {}
    memberships = get_user_model().groups.through.objects.values_list("user_id", "group__name")
    for user_id, role in memberships:
        roles.setdefault(user_id, []).append(role)
    return [
        PersonView(
            pk=user.pk,
            username=user.username,
            name=user.get_full_name(),
            roles=sorted(roles.get(user.pk, [])) + (["superuser"] if user.is_superuser else []),
            is_active=user.is_active,
            last_login=user.last_login,
            last_label=max(
                (t for t in (user.last_judgment, user.last_preference) if t is not None), default=None
            ),
            manageable=user.pk != viewer.pk
            and may_manage(viewer, roles=roles.get(user.pk, []), is_superuser=user.is_superuser),
        )
        for user in users
    ]


def campaign_member_candidates() -> QuerySet:
    """Active annotators and reviewers, the people a campaign's members are chosen from."""
    return (
        get_user_model()
        .objects.filter(is_active=True, groups__name__in=[Role.ANNOTATOR, Role.REVIEWER])
        .distinct()
        .order_by("username")
    )


def campaign_member_ids(*, campaign: Campaign) -> set[int]:
    return set(campaign.members.values_list("pk", flat=True))


def person_language(*, user) -> str:
    """The language `user` chose for the pages, or "" to follow their browser."""
    return Profile.objects.filter(user=user).values_list("language", flat=True).first() or ""
