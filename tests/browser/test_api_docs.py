"""Swagger UI and ReDoc render under the Content-Security-Policy; it refuses only what they would load from
other sites (ReDoc's Google fonts and logo): nothing comes from a CDN."""

import re

import pytest

ELSEWHERE = re.compile(r"Loading the \w+ 'https://(fonts\.googleapis\.com|cdn\.redoc\.ly)/")
pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("path", "rendered"), [("/api/docs/", ".opblock"), ("/api/redoc/", "[role=menuitem]")]
)
def test_the_api_docs_render_under_the_policy(browser_page, db, path, rendered):
    refused = []
    browser_page.on(
        "console",
        lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
    )
    browser_page.goto(path)
    browser_page.wait_for_selector(rendered)
    assert browser_page.locator(rendered).count() > 5
    assert all(ELSEWHERE.match(message) for message in refused), "\n".join(refused)
