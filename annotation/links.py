"""Which stored URLs may become links: http(s) only, so an imported `javascript:` URL stays text."""

from urllib.parse import urlsplit

WEB_SCHEMES = frozenset({"http", "https"})


def is_web_url(url: str) -> bool:
    try:
        return urlsplit(url.strip()).scheme.lower() in WEB_SCHEMES
    except ValueError:  # e.g. an unclosed IPv6 bracket: not a URL a browser should open
        return False
