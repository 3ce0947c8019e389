"""Alerts reach real receivers on 127.0.0.1 when a release is blocked and when a run fails.

A small study is released through Dagster in process (``release_job``: awaiting audit, no audit
rounds yet); then its candidate is made to leak (a note's original text, resealed, as an edit after
release would) and ``release_checks_job`` runs: ``no_surface_survives`` fails, the release is
decided ``blocked`` in ``tide_releases`` and the run fails.  The ``tide_alerts`` sensor, evaluated
tick by tick against that instance and warehouse, must deliver one alert per event to a webhook
(an http.server), an SMTP server (aiosmtpd) and Slack (dagster-slack's client pointed at the local
server) -- with nothing from the notes in them -- and keep an alert a channel did not take until
it does.  The blocked release and the run it failed are one event: one ``release_blocked`` alert
naming the run; a run that fails for another reason is one ``run_failed`` alert.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pytest
from aiosmtpd.controller import Controller

import release_study
from tests.release_helpers import fixed_key
from tide_core.anonymize.keys import FileKeyProvider
from tide_core.errors import ConfigError
from tide_core.io.open import open_warehouse
from tide_core.notify import AlertSettings
from tide_core.store.release_content import row_hash
from tide_etl import alerts, build_defs
from tide_etl.partitions import release_key
from tide_etl.resources import KeyProviderResource, ReleaseGateResource, TideConfigResource, WarehouseResource

warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)

S, K = "big", "k1"
N_NOTES, N_PATIENTS = 16, 5
ALERT_VARS = ("TIDE_ALERT_", "SLACK_BOT_TOKEN")


class Env:
    """One study released, then blocked by a leak, through Dagster; the warehouse before the leak is kept."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = f"duckdb:{root / 'wh.duckdb'}"
        with open_warehouse(self.url) as wh:
            release_study.write(wh, N_NOTES, N_PATIENTS, seed=3)
        self.keys = FileKeyProvider(root / "keys")
        fixed_key(self.keys, S, K)
        self.tide_config = TideConfigResource(preset="rules")
        resources = {
            "warehouse": WarehouseResource(url=self.url),
            "tide_config": self.tide_config,
            "key_provider": KeyProviderResource(key_dir=str(root / "keys")),
            "gate": ReleaseGateResource(),
        }
        self.defs = build_defs(resources)
        self.instance = dg.DagsterInstance.ephemeral()
        self.instance.add_dynamic_partitions("study", [S])
        self.instance.add_dynamic_partitions("key", [K])
        assert self.job("recognition_job", S).success
        assert self.job("release_job", release_key(S, K)).success
        assert self.status() == "awaiting_audit"
        self.awaiting_url = f"duckdb:{root / 'awaiting' / 'wh.duckdb'}"
        (root / "awaiting").mkdir()
        shutil.copy(root / "wh.duckdb", root / "awaiting" / "wh.duckdb")
        with open_warehouse(self.url) as wh:  # the original text of one note, resealed: a leak
            src = {r["note_id"]: r["text"] for r in wh.read_table("notes").to_pylist()}
            table = wh.read_table("tide_deid_notes")
            deid = table.to_pylist()
            deid[0]["text"] = src[deid[0]["note_id"]]
            deid = [dict(r, row_hash=row_hash(S, K, r)) for r in deid]
            wh.replace_table("tide_deid_notes", pa.Table.from_pylist(deid, schema=table.schema))
            self.notes = wh.read_table("notes").to_pylist()
            self.patients = wh.read_table("patients").to_pylist()
            self.deid = deid
        checks = self.job("release_checks_job", release_key(S, K))
        assert not checks.success
        self.failed_run_id = checks.run_id
        row = self.row()
        assert row["status"] == "blocked" and "no_surface_survives" in row["gate_reasons"]
        self.gate_reasons = row["gate_reasons"]

    def job(self, name: str, partition: Any) -> dg.ExecuteInProcessResult:
        return self.defs.resolve_job_def(name).execute_in_process(
            partition_key=partition, instance=self.instance, raise_on_error=False
        )

    def row(self) -> dict:
        with open_warehouse(self.url) as wh:
            return wh.read_table("tide_releases", where={"study": S, "key": K}).to_pylist()[0]

    def status(self) -> str:
        return str(self.row()["status"])

    def tick(self, cursor: str | None, url: str | None = None) -> tuple[str, str | None]:
        """One evaluation of the registered sensor; (its skip message, the cursor it left)."""
        sensor = self.defs.resolve_sensor_def("tide_alerts")
        with dg.build_sensor_context(
            instance=self.instance,
            cursor=cursor,
            resources={"warehouse": WarehouseResource(url=url or self.url), "tide_config": self.tide_config},
        ) as context:
            result = sensor(context)
            assert isinstance(result, dg.SkipReason)
            return str(result.skip_message), context.cursor

    def phi_values(self) -> set[str]:
        """Everything an alert must never contain: note ids and texts, patient values, released
        surrogates, the key secret and the reasons text."""
        values = {self.keys.path(S, K).read_text().strip(), self.gate_reasons}
        for n in self.notes:
            values |= {n["note_id"], n["text"], n["note_date"]}
            values |= {w for w in re.findall(r"[A-Za-z0-9-]{5,}", n["text"])}
        for p in self.patients:
            values |= {str(v) for k, v in p.items() if v and k != "patient_id"}
        for d in self.deid:
            values |= {d["note_id"], d["text"]} | set(re.findall(r"[A-Z][a-z]{4,}", d["text"]))
        common = {"Stable", "worse"}  # template words of every note (not PHI, and not in alerts either)
        return {v for v in values if v not in common} | common

    def assert_phi_free(self, text: str) -> None:
        leaked = sorted(v for v in self.phi_values() if v and v in text)
        assert not leaked, f"alert carries values from the notes: {leaked[:5]}"


class Receiver:
    """A real HTTP server on 127.0.0.1 that records every POST and answers ``status``."""

    def __init__(self, port: int = 0) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.status = 200
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append((self.path, dict(self.headers), body))
                answer = json.dumps({"ok": True, "channel": "C1", "ts": "1.0"}).encode()
                self.send_response(outer.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def payloads(self) -> list[dict]:
        return [json.loads(body) for _, _, body in self.requests]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd's name
        self.messages.append(envelope.content)
        return "250 OK"


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> Iterator[Env]:
    e = Env(tmp_path_factory.mktemp("alerts"))
    yield e
    e.instance.dispose()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture(autouse=True)
def no_alert_settings(monkeypatch):
    for name in list(os.environ):
        if name.startswith(ALERT_VARS):
            monkeypatch.delenv(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_webhook_gets_the_blocked_release_once_for_the_run_it_failed(env: Env, receiver: Receiver, monkeypatch):
    monkeypatch.setenv("TIDE_ALERT_WEBHOOK_URL", f"{receiver.url}/hooks/tide?token=s3cret")
    monkeypatch.setenv("TIDE_ALERT_UI_URL", "http://dagster.example:3000/")
    message, cursor = env.tick(None)
    assert "1 alert deliveries made, 0 pending" in message, message
    assert [p for p, _, _ in receiver.requests] == ["/hooks/tide?token=s3cret"]
    assert all(h["Content-Type"] == "application/json" for _, h, _ in receiver.requests)
    by_kind = {p["kind"]: p for p in receiver.payloads()}
    assert set(by_kind) == {"release_blocked"}  # one event, one alert: not also run_failed for its run

    blocked = by_kind["release_blocked"]
    assert (blocked["study"], blocked["key"], blocked["status"], blocked["severity"]) == (S, K, "blocked", "error")
    assert blocked["checks_failed"] == ["no_surface_survives"]
    assert blocked["counts"]["n_in"] == N_NOTES and blocked["counts"]["n_released"] == N_NOTES
    assert blocked["run_id"] == env.failed_run_id and blocked["job"] == "release_checks_job"
    assert blocked["link"] == f"http://dagster.example:3000/runs/{env.failed_run_id}"
    assert blocked["title"] == f"TIDE release {S}/{K} is blocked" and blocked["decided_at"]

    for _, _, body in receiver.requests:
        env.assert_phi_free(body.decode())
    assert cursor is not None
    env.assert_phi_free(cursor)  # the cursor is kept in Dagster's storage

    message, cursor2 = env.tick(cursor)  # the next tick: nothing new, nothing sent again
    assert len(receiver.requests) == 1 and "0 alert deliveries made, 0 pending" in message, message
    message, _ = env.tick(cursor2)
    assert len(receiver.requests) == 1


def test_awaiting_audit_is_a_notice_only_when_asked_for(env: Env, receiver: Receiver, monkeypatch):
    monkeypatch.setenv("TIDE_ALERT_WEBHOOK_URL", receiver.url)
    env.tick(None, url=env.awaiting_url)
    assert [p["kind"] for p in receiver.payloads()] == ["run_failed"]  # the instance's failed run only
    monkeypatch.setenv("TIDE_ALERT_AWAITING_AUDIT", "1")
    env.tick(None, url=env.awaiting_url)
    notices = [p for p in receiver.payloads() if p["kind"] == "release_awaiting_audit"]
    assert len(notices) == 1
    assert (notices[0]["status"], notices[0]["severity"], notices[0]["checks_failed"]) == (
        "awaiting_audit",
        "warning",
        [],
    )
    env.assert_phi_free(json.dumps(notices))


def test_email_reaches_a_real_smtp_server(env: Env, monkeypatch):
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=_free_port())
    controller.start()
    try:
        monkeypatch.setenv("TIDE_ALERT_SMTP_HOST", "127.0.0.1")
        monkeypatch.setenv("TIDE_ALERT_SMTP_PORT", str(controller.port))
        monkeypatch.setenv("TIDE_ALERT_SMTP_FROM", "tide@example.org")
        monkeypatch.setenv("TIDE_ALERT_SMTP_TO", "oncall@example.org, data-eng@example.org")
        message, _ = env.tick(None)
    finally:
        controller.stop()
    assert "1 alert deliveries made" in message, message
    mails = [message_from_bytes(m) for m in box.messages]
    subjects = sorted(str(m["Subject"]) for m in mails)
    assert subjects == [f"[error] TIDE release {S}/{K} is blocked"]
    assert all(m["To"] == "oncall@example.org, data-eng@example.org" for m in mails)
    for m in box.messages:
        text = m.decode()
        assert "no_surface_survives" in text
        env.assert_phi_free(text)


def test_slack_through_dagster_slack(env: Env, receiver: Receiver, monkeypatch):
    monkeypatch.setenv("TIDE_ALERT_SLACK_CHANNEL", "#tide-alerts")
    monkeypatch.setenv("TIDE_ALERT_SLACK_TOKEN_ENV", "TIDE_TEST_SLACK_TOKEN")
    monkeypatch.setenv("TIDE_TEST_SLACK_TOKEN", "xoxb-test-token")
    monkeypatch.setenv("TIDE_ALERT_SLACK_API_URL", f"{receiver.url}/api")
    message, _ = env.tick(None)
    assert "1 alert deliveries made" in message, message
    assert [p for p, _, _ in receiver.requests] == ["/api/chat.postMessage"]
    assert all(h["Authorization"] == "Bearer xoxb-test-token" for _, h, _ in receiver.requests)
    posts = receiver.payloads()
    assert {p["channel"] for p in posts} == {"#tide-alerts"}
    assert any(p["text"].startswith(f"TIDE release {S}/{K} is blocked") for p in posts)
    for _, _, body in receiver.requests:
        env.assert_phi_free(body.decode())
    sensor_chans = alerts.channels(AlertSettings.from_env(os.environ))
    assert type(sensor_chans[0].client).__module__.startswith("slack_sdk")  # dagster-slack's WebClient


def test_a_channel_that_is_down_is_retried_and_the_others_do_not_repeat(env: Env, receiver: Receiver, monkeypatch):
    port = _free_port()  # nothing listens here yet
    monkeypatch.setenv("TIDE_ALERT_WEBHOOK_URL", f"http://127.0.0.1:{port}/hook")
    monkeypatch.setenv("TIDE_ALERT_SLACK_CHANNEL", "#tide-alerts")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test-token")
    monkeypatch.setenv("TIDE_ALERT_SLACK_API_URL", f"{receiver.url}/api")
    message, cursor = env.tick(None)  # the sensor does not crash: it says what failed, with a code
    assert "[E980] webhook" in message and "1 alert deliveries made, 1 pending" in message, message
    assert len(receiver.requests) == 1  # Slack took it
    assert "s3cret" not in message and "/hook" not in message  # an error names the host only

    message, cursor = env.tick(cursor)  # still down: still pending, Slack not repeated
    assert "[E980]" in message and "0 alert deliveries made, 1 pending" in message, message
    assert len(receiver.requests) == 1

    webhook = Receiver(port)
    webhook.status = 500  # up, but not taking it: still pending
    try:
        message, cursor = env.tick(cursor)
        assert "HTTP 500" in message and "1 pending" in message, message
        webhook.status = 200
        message, cursor = env.tick(cursor)
        assert "1 alert deliveries made, 0 pending" in message, message
        assert [p["kind"] for p in webhook.payloads()[-1:]] == ["release_blocked"]
        n = len(webhook.requests)
        env.tick(cursor)
        assert len(webhook.requests) == n and len(receiver.requests) == 1  # delivered once, each channel
    finally:
        webhook.close()


HOLDER = "import sys, time, duckdb; con = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(30)"


def test_a_busy_warehouse_leaves_the_releases_for_the_next_tick(env: Env, receiver: Receiver, monkeypatch, tmp_path):
    monkeypatch.setenv("TIDE_ALERT_WEBHOOK_URL", receiver.url)
    monkeypatch.setattr(alerts, "ALERT_LOCK_WAIT_S", 0.3)
    db = tmp_path / "wh.duckdb"
    shutil.copy(env.root / "wh.duckdb", db)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        message, cursor = env.tick(None, url=f"duckdb:{db}")
        assert "releases not read ([E303]" in message, message
        assert "1 failed release runs held" in message, message  # its decision may be the alert to send
        assert receiver.payloads() == []
    finally:
        holder.kill()
        holder.wait(30)
    message, cursor = env.tick(cursor, url=f"duckdb:{db}")
    assert [(p["kind"], p["run_id"]) for p in receiver.payloads()] == [("release_blocked", env.failed_run_id)]
    env.tick(cursor, url=f"duckdb:{db}")
    assert len(receiver.requests) == 1


def test_a_run_held_too_long_is_sent_and_its_decision_is_not_sent_again(
    env: Env, receiver: Receiver, monkeypatch, tmp_path
):
    """Fail closed: a warehouse busy past the hold reports the run as run_failed; that channel has
    then reported the event, and the decision read later is not sent to it a second time."""
    monkeypatch.setenv("TIDE_ALERT_WEBHOOK_URL", receiver.url)
    monkeypatch.setattr(alerts, "ALERT_LOCK_WAIT_S", 0.3)
    monkeypatch.setattr(alerts, "HOLD_RELEASE_RUN_S", 0.0)
    db = tmp_path / "wh.duckdb"
    shutil.copy(env.root / "wh.duckdb", db)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        message, cursor = env.tick(None, url=f"duckdb:{db}")
        assert "releases not read ([E303]" in message and "held" not in message, message
    finally:
        holder.kill()
        holder.wait(30)
    assert [(p["kind"], p["run_id"]) for p in receiver.payloads()] == [("run_failed", env.failed_run_id)]
    message, cursor = env.tick(cursor, url=f"duckdb:{db}")
    assert "0 alert deliveries made, 0 pending" in message, message
    assert len(receiver.requests) == 1


def test_bad_settings_are_coded_and_change_nothing(env: Env, monkeypatch):
    for environ in (
        {"TIDE_ALERT_WEBHOOK_URL": "ftp://example.org/x"},
        {"TIDE_ALERT_SMTP_HOST": "127.0.0.1", "TIDE_ALERT_SMTP_PORT": "twenty-five"},
        {"TIDE_ALERT_SLACK_CHANNEL": "#x"},  # no token variable
        {"TIDE_ALERT_TIMEOUT_S": "0"},
        {"TIDE_ALERT_SMTP_HOST": "127.0.0.1"},  # no sender, no recipient
    ):
        with pytest.raises(ConfigError) as err:
            alerts.channels(AlertSettings.from_env(environ))
        assert err.value.code == "E981"
    monkeypatch.setenv("TIDE_ALERT_WEBHOOK_URL", "ftp://example.org/x")
    message, cursor = env.tick('{"v": 1, "runs_after": 0, "sent": {}}')
    assert "[E981]" in message and cursor == '{"v": 1, "runs_after": 0, "sent": {}}'
    monkeypatch.delenv("TIDE_ALERT_WEBHOOK_URL")
    message, cursor = env.tick(None)
    assert "no alert channel configured" in message and cursor is None


def test_the_sensor_ships_stopped_in_the_code_location(env: Env):
    sensor = env.defs.resolve_sensor_def("tide_alerts")
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED
    assert sensor.minimum_interval_seconds == 60


def test_a_run_failing_for_another_reason_is_one_run_failed_alert(env: Env, receiver: Receiver, monkeypatch):
    """A release run that fails before any decision (no key secret) is reported as run_failed; the
    blocked release beside it stays one release_blocked alert.  Last in the module: it adds a run."""
    monkeypatch.setenv("TIDE_ALERT_WEBHOOK_URL", receiver.url)
    env.instance.add_dynamic_partitions("key", ["k9"])
    other = env.job("release_job", release_key(S, "k9"))
    assert not other.success
    message, _ = env.tick(None)
    assert "2 alert deliveries made, 0 pending" in message, message
    got = sorted((p["kind"], p["run_id"]) for p in receiver.payloads())
    assert got == [("release_blocked", env.failed_run_id), ("run_failed", other.run_id)]
