"""The product's words for stored values, in the page's language: a person's role (`role_label`), a model's
(`model_role`), a side-by-side verdict (`verdict_label`); and `manages`: whether a person is a manager."""

from django import template
from django.utils.translation import pgettext_lazy

from annotation.choices import Verdict
from annotation.roles import ROLE_LABELS, Role, can_manage

register = template.Library()


@register.filter
def role_label(role: str) -> str:
    """The role's name as the pages say it; a group that is no role is shown as it is named."""
    if role == "superuser":
        return str(pgettext_lazy("role", "superuser"))
    return str(ROLE_LABELS[Role(role)]) if role in Role._value2member_map_ else role


MODEL_ROLES = {
    "online": pgettext_lazy("model role", "online"),
    "experimental": pgettext_lazy("model role", "experimental"),
}


@register.filter
def model_role(role: str) -> str:
    """A model's role ("online", "experimental") as the pages say it."""
    return str(MODEL_ROLES.get(role, role))


@register.filter
def manages(user) -> bool:
    """Whether the person is a manager (the pages show them the campaign's members and settings)."""
    return can_manage(user)


@register.filter
def verdict_label(value: object) -> str:
    """A verdict ("good", "same", "bad") as the pages say it; anything else (a grade) as it is."""
    return str(Verdict(value).label) if value in Verdict.values else str(value)
