"""`{{ role|role_label }}`: a role's name in the page's language."""

from django import template

from annotation.roles import ROLE_LABELS, Role

register = template.Library()


@register.filter
def role_label(role: str) -> str:
    """The role's name as the pages say it; a group that is no role is shown as it is named."""
    return str(ROLE_LABELS[Role(role)]) if role in Role._value2member_map_ else role
