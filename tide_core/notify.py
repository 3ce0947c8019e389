"""Alerts and the notifiers that deliver them: a webhook (JSON over HTTP), e-mail (SMTP), or any
object with a ``name`` and a ``send(alert)`` method (:class:`Notifier`; Slack through dagster-slack
lives in ``tide_etl.alerts``, as ``tide_core`` never imports Dagster).

An :class:`Alert` is PHI-free by construction: study and key names, a release status, the names
of failed checks, error codes, counts, a run id and a link to the run.  It has no field for a
note id, a text, a surface, a reason string or key material, so nothing derived from a source value
can travel in one.

Delivery fails closed: ``send`` raises :class:`AlertDeliveryError` (E980, transient) when the
channel did not confirm receipt, and the caller keeps the alert to send again.  Settings come from
``TIDE_ALERT_*`` environment variables (:meth:`AlertSettings.from_env`); secrets (an SMTP password)
are named by the variable that holds them, and are never written to an error or a log.
"""

from __future__ import annotations

import json
import smtplib
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from email.message import EmailMessage
from typing import Any, Protocol, runtime_checkable

from tide_core.errors import ConfigError, TransientError

#: Alert kinds and their severities.
RELEASE_BLOCKED = "release_blocked"
RELEASE_AWAITING_AUDIT = "release_awaiting_audit"
RUN_FAILED = "run_failed"
SEVERITY = {RELEASE_BLOCKED: "error", RUN_FAILED: "error", RELEASE_AWAITING_AUDIT: "warning"}

DEFAULT_TIMEOUT_S = 10.0


class AlertDeliveryError(TransientError):
    """A notifier could not deliver an alert (E980); the alert stays pending and is sent again."""


@dataclass(frozen=True)
class Alert:
    """One alert.  Every field is a name, a status, a code, a count or a run reference."""

    kind: str
    study: str = ""
    key: str = ""
    status: str = ""
    checks_failed: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    counts: Mapping[str, int] = field(default_factory=dict)
    published_version: str = ""
    decided_at: str = ""
    job: str = ""
    run_id: str = ""
    link: str = ""

    @property
    def severity(self) -> str:
        return SEVERITY.get(self.kind, "error")

    @property
    def title(self) -> str:
        cell = f"{self.study}/{self.key}" if self.study and self.key else self.study or self.key
        if self.kind == RELEASE_BLOCKED:
            return f"TIDE release {cell} is blocked"
        if self.kind == RELEASE_AWAITING_AUDIT:
            return f"TIDE release {cell} is awaiting audit"
        where = f" ({cell})" if cell else ""
        return f"TIDE run of {self.job or 'a job'}{where} failed"

    def payload(self) -> dict[str, Any]:
        """The JSON body a webhook receives (also attached to e-mails)."""
        body = asdict(self)
        body["checks_failed"] = list(self.checks_failed)
        body["codes"] = list(self.codes)
        body["counts"] = {k: int(v) for k, v in sorted(self.counts.items())}
        return {"source": "tide", "title": self.title, "severity": self.severity, **body}

    def text(self) -> str:
        """A few plain lines for e-mail and chat."""
        lines = [self.title]
        if self.status:
            lines.append(f"status: {self.status}")
        if self.checks_failed:
            lines.append(f"failed checks: {', '.join(self.checks_failed)}")
        if self.codes:
            lines.append(f"codes: {', '.join(self.codes)}")
        if self.counts:
            lines.append("counts: " + ", ".join(f"{k}={int(v)}" for k, v in sorted(self.counts.items())))
        if self.published_version:
            lines.append(f"researchers see: {self.published_version}")
        if self.run_id:
            lines.append(f"run: {self.run_id}" + (f" ({self.job})" if self.job else ""))
        if self.link:
            lines.append(f"link: {self.link}")
        return "\n".join(lines)


@runtime_checkable
class Notifier(Protocol):
    """A channel: ``send`` returns once the alert is delivered, else raises AlertDeliveryError."""

    name: str

    def send(self, alert: Alert) -> None: ...


def _where(url: str) -> str:
    """scheme://host:port of a URL: what an error may say about it (a path or query can hold a token)."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")


class WebhookNotifier:
    """POSTs :meth:`Alert.payload` as JSON; any 2xx answer is a delivery."""

    name = "webhook"

    def __init__(self, url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise ConfigError(
                "E981",
                "the alert webhook URL is not an http(s) URL",
                hint="set TIDE_ALERT_WEBHOOK_URL to http://... or https://...",
            )
        self.url = url
        self.timeout_s = timeout_s

    def send(self, alert: Alert) -> None:
        data = json.dumps(alert.payload(), sort_keys=True).encode()
        request = urllib.request.Request(
            self.url,
            data=data,
            method="POST",
            headers={"Content-Type": "application/json", "User-Agent": "tide-alerts"},
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # http(s) only
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            status = int(exc.code)
        except (OSError, ValueError) as exc:
            raise AlertDeliveryError(
                "E980",
                f"webhook at {_where(self.url)} not reached: {type(exc).__name__}",
                hint="check that the receiver is up; the alert is sent again at the next tick",
            ) from None
        if not 200 <= status < 300:
            raise AlertDeliveryError(
                "E980",
                f"webhook at {_where(self.url)} answered HTTP {status}",
                hint="check the receiver; the alert is sent again at the next tick",
            )


class EmailNotifier:
    """Sends :meth:`Alert.text` (and the JSON payload) by SMTP; the server accepting it is a delivery."""

    name = "email"

    def __init__(
        self,
        host: str,
        sender: str,
        recipients: Sequence[str],
        port: int = 25,
        starttls: bool = False,
        username: str | None = None,
        password: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        if not sender or not recipients:
            raise ConfigError(
                "E981",
                "alert e-mail needs a sender and at least one recipient",
                hint="set TIDE_ALERT_SMTP_FROM and TIDE_ALERT_SMTP_TO (comma-separated)",
            )
        self.host, self.port, self.sender, self.recipients = host, port, sender, list(recipients)
        self.starttls, self.username, self.password, self.timeout_s = starttls, username, password, timeout_s

    def message(self, alert: Alert) -> EmailMessage:
        msg = EmailMessage()
        msg["Subject"] = f"[{alert.severity}] {alert.title}"
        msg["From"] = self.sender
        msg["To"] = ", ".join(self.recipients)
        msg.set_content(alert.text() + "\n\n" + json.dumps(alert.payload(), indent=2, sort_keys=True) + "\n")
        return msg

    def send(self, alert: Alert) -> None:
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout_s) as smtp:
                if self.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if self.username:
                    smtp.login(self.username, self.password or "")
                refused = smtp.send_message(self.message(alert))
        except (OSError, smtplib.SMTPException) as exc:
            raise AlertDeliveryError(
                "E980",
                f"SMTP server {self.host}:{self.port} did not take the alert: {type(exc).__name__}",
                hint="check the server and TIDE_ALERT_SMTP_*; the alert is sent again at the next tick",
            ) from None
        if refused:
            raise AlertDeliveryError(
                "E980",
                f"SMTP server {self.host}:{self.port} refused {len(refused)} of {len(self.recipients)} recipients",
                hint="check TIDE_ALERT_SMTP_TO; the alert is sent again at the next tick",
            )


def _flag(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _number(environ: Mapping[str, str], name: str, default: float) -> float:
    raw = (environ.get(name) or "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise ConfigError("E981", f"{name} is not a positive number", hint=f"set {name} to e.g. {default:g}")
    return value


@dataclass(frozen=True)
class AlertSettings:
    """Where alerts go (``TIDE_ALERT_*``); a channel whose settings are absent is off."""

    webhook_url: str = ""
    smtp_host: str = ""
    smtp_port: int = 25
    smtp_from: str = ""
    smtp_to: tuple[str, ...] = ()
    smtp_starttls: bool = False
    smtp_user: str = ""
    smtp_password: str = field(default="", repr=False)
    slack_channel: str = ""
    slack_token: str = field(default="", repr=False)
    slack_api_url: str = ""
    ui_url: str = ""
    awaiting_audit: bool = False
    timeout_s: float = DEFAULT_TIMEOUT_S

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> AlertSettings:
        """Read the settings (E981 when one is malformed or a named secret variable is unset)."""
        e = {k: v.strip() for k, v in environ.items() if k.startswith("TIDE_ALERT_")}
        password = ""
        if e.get("TIDE_ALERT_SMTP_PASSWORD_ENV"):
            password = environ.get(e["TIDE_ALERT_SMTP_PASSWORD_ENV"], "")
            if not password:
                raise ConfigError(
                    "E981",
                    "TIDE_ALERT_SMTP_PASSWORD_ENV names a variable that is not set",
                    hint="set that variable to the SMTP password, or unset TIDE_ALERT_SMTP_PASSWORD_ENV",
                )
        token = ""
        if e.get("TIDE_ALERT_SLACK_CHANNEL"):
            token_env = e.get("TIDE_ALERT_SLACK_TOKEN_ENV") or "SLACK_BOT_TOKEN"
            token = environ.get(token_env, "").strip()
            if not token:
                raise ConfigError(
                    "E981",
                    f"TIDE_ALERT_SLACK_CHANNEL is set but {token_env} (the Slack token variable) is not",
                    hint="set the bot token variable, or name it with TIDE_ALERT_SLACK_TOKEN_ENV",
                )
        port = e.get("TIDE_ALERT_SMTP_PORT") or "25"
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError("E981", "TIDE_ALERT_SMTP_PORT is not a port number", hint="e.g. 25, 587")
        return cls(
            webhook_url=e.get("TIDE_ALERT_WEBHOOK_URL", ""),
            smtp_host=e.get("TIDE_ALERT_SMTP_HOST", ""),
            smtp_port=int(port),
            smtp_from=e.get("TIDE_ALERT_SMTP_FROM", ""),
            smtp_to=tuple(a.strip() for a in e.get("TIDE_ALERT_SMTP_TO", "").split(",") if a.strip()),
            smtp_starttls=_flag(e.get("TIDE_ALERT_SMTP_STARTTLS")),
            smtp_user=e.get("TIDE_ALERT_SMTP_USER", ""),
            smtp_password=password,
            slack_channel=e.get("TIDE_ALERT_SLACK_CHANNEL", ""),
            slack_token=token,
            slack_api_url=e.get("TIDE_ALERT_SLACK_API_URL", ""),
            ui_url=e.get("TIDE_ALERT_UI_URL", "").rstrip("/"),
            awaiting_audit=_flag(e.get("TIDE_ALERT_AWAITING_AUDIT")),
            timeout_s=_number(environ, "TIDE_ALERT_TIMEOUT_S", DEFAULT_TIMEOUT_S),
        )


def notifiers(settings: AlertSettings) -> list[Notifier]:
    """The webhook and e-mail notifiers the settings turn on (Slack: ``tide_etl.alerts``)."""
    out: list[Notifier] = []
    if settings.webhook_url:
        out.append(WebhookNotifier(settings.webhook_url, settings.timeout_s))
    if settings.smtp_host:
        out.append(
            EmailNotifier(
                settings.smtp_host,
                settings.smtp_from,
                settings.smtp_to,
                port=settings.smtp_port,
                starttls=settings.smtp_starttls,
                username=settings.smtp_user or None,
                password=settings.smtp_password or None,
                timeout_s=settings.timeout_s,
            )
        )
    return out
