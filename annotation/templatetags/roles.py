"""`role_label` and `model_role`: a person's or a model's role in the page's language; `manages`: whether a
person is a manager."""

from django import template
from django.utils.translation import pgettext_lazy

from annotation.roles import ROLE_LABELS, Role, can_manage

register = template.Library()


@register.filter
def role_label(role: str) -> str:
    """The role's name as the pages say it; a group that is no role is shown as it is named."""
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
