"""The browser's import in Chinese: a bad file's error, found by the worker, is in the uploader's language and
still names the file, the line and the field."""

import copy
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import CampaignImport
from tests.factories import SMALL_BUNDLE, work_off_the_queue


@pytest.fixture
def chinese_manager(transactional_db, client, make_user, settings, tmp_path):
    settings.IMPORTS_DIR = tmp_path / "imports"
    client.force_login(make_user("boss", "manager"))
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "zh-Hans"
    return client


def _upload(client, capture, data, runs=()) -> CampaignImport:
    body = {"bundle": SimpleUploadedFile("small.json", json.dumps(data).encode())}
    for index, (model, text) in enumerate(runs):
        body[f"run_model_{index}"] = model
        body[f"run_file_{index}"] = SimpleUploadedFile(f"{model}.run", text.encode())
    with capture(execute=True):
        assert client.post(reverse("annotation:campaign_new"), body).status_code == 302
    work_off_the_queue()
    return CampaignImport.objects.get()


def test_a_bad_run_line_is_said_in_chinese(chinese_manager, django_capture_on_commit_callbacks):
    staged = _upload(
        chinese_manager, django_capture_on_commit_callbacks, SMALL_BUNDLE, [("exp", "q1 Q0 d1 1\n")]
    )
    assert staged.status == CampaignImport.Status.INVALID
    assert staged.error == "exp.run，第 1 行：应至少有 6 个字段，实际为 4 个"
    page = chinese_manager.get(reverse("annotation:campaign_import", args=[staged.pk])).content.decode()
    assert "exp.run，第 1 行：应至少有 6 个字段，实际为 4 个" in page


def test_a_bad_bundle_field_is_said_in_chinese(chinese_manager, django_capture_on_commit_callbacks):
    data = copy.deepcopy(SMALL_BUNDLE)
    data["models"][1]["role"] = "candidate"
    staged = _upload(chinese_manager, django_capture_on_commit_callbacks, data)
    assert staged.status == CampaignImport.Status.INVALID
    assert staged.error == "small.json，字段 models[1].role：必须是 'online'（线上）或 'experimental'（实验）"
