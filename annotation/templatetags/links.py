"""`{% safe_link url text %}`: a new-tab link if `url` is http(s), else `text` as plain text."""

from django import template
from django.utils.html import format_html

from annotation.links import is_web_url

register = template.Library()


@register.simple_tag
def safe_link(url: str, text: object = None) -> str:
    """`text` (the URL itself when omitted), escaped, linked only when `is_web_url(url)`."""
    text = url if text is None else text
    if not is_web_url(url):
        return format_html("{}", text)
    return format_html('<a href="{}" target="_blank" rel="noopener noreferrer nofollow">{}</a>', url, text)
