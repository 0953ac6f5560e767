"""The Python SDK: a typed client of Judgeboard's REST API, written by hand over the served schema
(`/api/schema/`; `OPERATIONS` lists what it calls, and a test checks each against the schema).

    from judgeboard.client import Client

    client = Client.from_environment()                 # JUDGEBOARD_URL, JUDGEBOARD_TOKEN
    campaign = client.campaign_create(bundle)          # the bundle as a dict, as import_campaign reads it
    client.run_upload(campaign.id, "exp-v2", "run.trec")
    decision = client.decision(campaign.id)            # decision.status: launch, no_launch, ...

Every failure is an `ApiError`: the server's answer (`status`, `code`, `detail`, `field`, `line`), or
`status` None when no answer came."""

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import requests

# What the SDK calls, as the schema names it: (method, path).
OPERATIONS = {
    "token": ("post", "/api/auth/token/"),
    "campaign_create": ("post", "/api/campaigns/"),
    "run_upload": ("post", "/api/campaigns/{campaign_id}/runs/"),
    "decision": ("get", "/api/campaigns/{campaign_id}/decision/"),
    "report": ("get", "/api/campaigns/{campaign_id}/report/"),
    "export_judgments": ("get", "/api/campaigns/{campaign_id}/export/judgments/"),
    "export_qrels": ("get", "/api/campaigns/{campaign_id}/export/qrels/"),
}
REPORT_FORMATS = ("json", "html", "csv", "md")
QRELS_INTEGER = ("round", "floor")


class Status(StrEnum):
    """A launch decision's status (`metrics.compute.decision.Outcome`, as the API spells it)."""

    LAUNCH = "launch"
    NO_LAUNCH = "no_launch"
    INCONCLUSIVE = "inconclusive"
    COLLECTING = "collecting"


class ApiError(Exception):
    """A request that failed: the server's error body (`{"code", "detail", "field", "line"}`) with its
    status, or `status` None when the server could not be reached or did not answer."""

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        code: str = "error",
        field: str | None = None,
        line: int | None = None,
    ):
        self.status, self.code, self.detail, self.field, self.line = status, code, detail, field, line
        where = "no answer" if status is None else f"{status} {code}"
        super().__init__(f"{where}: {detail}")


@dataclass(frozen=True)
class Campaign:
    id: int
    name: str
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RunUploaded:
    model: str
    rankings: int


@dataclass(frozen=True)
class Decision:
    """The launch decision on the labels so far; `data` is the whole answer (coverage, fingerprint...)."""

    status: Status
    campaign: int
    model: str | None
    headline: str | None
    reasons: list[str]
    data: dict[str, Any]

    @property
    def decided(self) -> bool:
        return self.status is not Status.COLLECTING


class Client:
    """One server, one token (none for `token` itself). `timeout` is each request's, in seconds."""

    def __init__(self, url: str, token: str | None = None, *, timeout: float = 300):
        # Here, not at the top: `judgeboard evaluate` imports this module and needs no HTTP (0.1–0.4 s).
        import requests

        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["Accept"] = "application/json"
        if token:
            self.session.headers["Authorization"] = f"Token {token}"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ, *, token: bool = True) -> "Client":
        """From `JUDGEBOARD_URL` and (with `token`) `JUDGEBOARD_TOKEN`; ValueError names what is missing."""
        names = ("JUDGEBOARD_URL", "JUDGEBOARD_TOKEN") if token else ("JUDGEBOARD_URL",)
        missing = [name for name in names if not environ.get(name)]
        if missing:
            raise ValueError(
                f"{' and '.join(missing)} not set (e.g. JUDGEBOARD_URL=https://judgeboard.example)"
            )
        return cls(environ["JUDGEBOARD_URL"], environ.get("JUDGEBOARD_TOKEN") if token else None)

    def token(self, username: str, password: str) -> str:
        """The user's API token (the same one until it is revoked or expires)."""
        return str(self._call("token", json={"username": username, "password": password}).json()["token"])

    def campaign_create(self, bundle: Mapping[str, Any]) -> Campaign:
        """A campaign from a bundle (managers), all or nothing."""
        data = self._call("campaign_create", json=bundle).json()
        return Campaign(int(data["id"]), str(data["name"]), list(data.get("warnings", [])))

    def run_upload(self, campaign_id: int, model: str, path: str | Path) -> RunUploaded:
        """A TREC run (may be gzipped) as the model's rankings; replaces what the model had (managers)."""
        with open(path, "rb") as file:
            data = self._call(
                "run_upload",
                campaign_id=campaign_id,
                data={"model": model},
                files={"file": (Path(path).name, file, "application/octet-stream")},
            ).json()
        return RunUploaded(str(data["model"]), int(data["rankings"]))

    def decision(self, campaign_id: int, model: str | None = None) -> Decision:
        """The launch decision for `model` (default: the campaign's experimental model) (reviewers)."""
        data = self._call("decision", campaign_id=campaign_id, params=_given(model=model)).json()
        try:
            status = Status(data["status"])
        except (KeyError, ValueError):
            raise ApiError(f"not a decision: {str(data)[:200]}", status=200, code="unexpected") from None
        return Decision(
            status=status,
            campaign=int(data["campaign"]),
            model=data.get("model"),
            headline=data.get("headline"),
            reasons=list(data.get("reasons", [])),
            data=data,
        )

    def report(self, campaign_id: int, format: str = "json", model: str | None = None) -> bytes:
        """The launch report as the comparison page downloads it: json, html, csv or md (reviewers)."""
        if format not in REPORT_FORMATS:
            raise ValueError(f"format must be one of {', '.join(REPORT_FORMATS)}, got {format!r}")
        params = _given(format=format, model=model)
        return self._call("report", campaign_id=campaign_id, params=params, accept="*/*").content

    def export_judgments(self, campaign_id: int) -> bytes:
        """Every label as JSONL, what `manage.py import_judgments` reads (reviewers)."""
        return self._call("export_judgments", campaign_id=campaign_id, accept="application/x-ndjson").content

    def export_qrels(self, campaign_id: int, integer: str | None = None) -> bytes:
        """The aggregated labels as TREC qrels; `integer` "round" or "floor" for trec_eval (reviewers)."""
        if integer is not None and integer not in QRELS_INTEGER:
            raise ValueError(f"integer must be one of {', '.join(QRELS_INTEGER)}, got {integer!r}")
        params = _given(integer=integer)
        return self._call("export_qrels", campaign_id=campaign_id, params=params, accept="text/plain").content

    def _call(self, operation: str, *, campaign_id: int | None = None, accept: str | None = None, **kwargs):
        import requests

        method, path = OPERATIONS[operation]
        url = self.url + path.format(campaign_id=campaign_id)
        headers = {"Accept": accept} if accept else {}
        try:
            response = self.session.request(method, url, headers=headers, timeout=self.timeout, **kwargs)
        except requests.ConnectionError:
            raise ApiError(f"{method.upper()} {url}: cannot connect") from None
        except requests.Timeout:
            raise ApiError(f"{method.upper()} {url}: no answer in {self.timeout:g} s") from None
        except requests.RequestException as exc:
            raise ApiError(f"{method.upper()} {url}: {exc}") from None
        if response.status_code >= 400:
            raise _error(response)
        return response


def _given(**params: str | None) -> dict[str, str]:
    return {name: value for name, value in params.items() if value is not None}


def _error(response: "requests.Response") -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or "detail" not in body:
        # Not the API's error body: a proxy's page, or a route this server does not have.
        return ApiError(
            f"{response.reason} ({response.request.method} {response.url})", status=response.status_code
        )
    return ApiError(
        str(body["detail"]),
        status=response.status_code,
        code=str(body.get("code", "error")),
        field=body.get("field"),
        line=body.get("line"),
    )
