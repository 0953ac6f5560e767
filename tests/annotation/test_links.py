from django.template import Context, Template

from annotation.links import is_web_url


def test_only_http_and_https_urls_are_web_urls():
    assert is_web_url("http://example.com/a") and is_web_url(" HTTPS://example.com")
    for url in (
        "javascript:alert(1)",
        " JavaScript:alert(1)",
        "data:text/html,x",
        "example.com",
        "",
        "http://[",
    ):
        assert not is_web_url(url)


def test_safe_link_links_web_urls_and_escapes_everything_else():
    template = Template("{% load links %}{% safe_link url text %}|{% safe_link url %}")
    linked = template.render(Context({"url": "https://example.com/?a=1&b=2", "text": "<b>Doc</b>"}))
    assert linked == (
        '<a href="https://example.com/?a=1&amp;b=2" target="_blank" rel="noopener noreferrer nofollow">'
        "&lt;b&gt;Doc&lt;/b&gt;</a>|"
        '<a href="https://example.com/?a=1&amp;b=2" target="_blank" rel="noopener noreferrer nofollow">'
        "https://example.com/?a=1&amp;b=2</a>"
    )
    plain = template.render(Context({"url": "javascript:alert(1)", "text": "<b>Doc</b>"}))
    assert plain == "&lt;b&gt;Doc&lt;/b&gt;|javascript:alert(1)"
