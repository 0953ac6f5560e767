from django.template import Context, Template
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.bundle import parse_bundle
from annotation.links import is_web_url
from annotation.services.campaigns import campaign_import


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


def test_a_broken_document_url_shows_as_text_on_the_workbench_and_in_the_api(
    db, bundle_data, client, make_user
):
    for document in bundle_data["documents"]:
        document["url"] = "http://["
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "b.json"))
    user = make_user("ann", "annotator")
    client.force_login(user)
    page = client.get(reverse("annotation:work", args=[campaign.pk]), follow=True)
    assert page.status_code == 200 and b"http://[" in page.content and b'href="http://[' not in page.content
    api = APIClient()
    api.force_authenticate(user)
    task = api.post(f"/api/campaigns/{campaign.pk}/next-task/")
    assert task.status_code == 200
