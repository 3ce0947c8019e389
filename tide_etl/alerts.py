"""Alerts: a failed TIDE run, and a release decided ``blocked`` (``awaiting_audit`` as a notice).

One sensor, ``tide_alerts`` (every minute, STOPPED by default), finds what to report and sends it
through every configured channel (``TIDE_ALERT_*``; :class:`tide_core.notify.AlertSettings`):
a webhook, e-mail, Slack (dagster-slack's ``SlackResource``; ``pip install 'tide-etl[alerts]'``).

- **Failed runs** come from the Dagster instance: runs of this code location's jobs (and of
  backfills launched from the asset graph) that ended ``FAILURE``.  Not Dagster's
  ``run_failure_sensor``: it advances its cursor even when the function raises, so an alert that
  could not be delivered would be lost.
- **Release decisions** come from ``tide_releases`` itself, the record every path writes (the
  Dagster checks and ``release_summary``, ``tide release publish``), whatever the UI shows: each
  decision (a ``decided_at``) of status ``blocked`` is one alert.  The table is read with a short
  lock wait; a busy DuckDB file skips that part of the tick, and the next tick reads it.

One alert per event: a blocked release fails the run that decided it, and that run is reported
by the ``release_blocked`` alert alone (it names the run, the failed checks, the codes and the
counts), not also as ``run_failed``.  The deciding run is the failed run of the same (study, key)
partition whose lifetime (created .. last updated) holds the decision's ``decided_at``.  A
``release_batch_job`` run releases each cell as a run of its own: each failed cell run is its own
alert, and the batch run, which fails because of them, is not reported again when each of its bad
cells is such a failed run (:func:`batches_reported_by_cells`; else it is one ``run_failed``).  While
``tide_releases`` cannot be read, a failed run of a release partition is held back (its decision
may be the alert to send) for at most :data:`HOLD_RELEASE_RUN_S`, then sent as ``run_failed``
(fail closed: an event is never left unreported); a release decision whose run a channel already
reported is not sent to that channel again.  Every other failed run is one ``run_failed`` alert.

Fail closed: the sensor's cursor records, per channel, which alerts that channel confirmed.  An
alert a channel did not take (E980) stays pending for that channel only and is sent again at the
next tick; the other channels do not see it twice.  Alerts carry names, statuses, check names,
codes and counts only (:class:`tide_core.notify.Alert`): never a note id, a text, a reason string
or key material.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

import dagster as dg

from tide_core.errors import ConfigError, TideError
from tide_core.notify import (
    RELEASE_AWAITING_AUDIT,
    RELEASE_BLOCKED,
    RUN_FAILED,
    Alert,
    AlertDeliveryError,
    AlertSettings,
    Notifier,
    notifiers,
)
from tide_core.plugins import load_dotted
from tide_core.release.lifecycle import AWAITING_AUDIT, BLOCKED, BLOCKING_CHECKS
from tide_etl.batch import BATCH_TAG, CELLS_REPORTED_TAG, release_batch_job
from tide_etl.jobs import JOBS
from tide_etl.partitions import release_key, split_release_key
from tide_etl.resources import TideConfigResource, WarehouseResource

#: Seconds the tick waits for a DuckDB file a run holds before it leaves the releases for the next tick.
ALERT_LOCK_WAIT_S = 10.0
#: A sensor without a cursor reports the runs that failed in the last hour.
FIRST_TICK_LOOKBACK_S = 3600.0
#: Failed runs are looked up from this long before the newest one already handled (ties, clock skew).
RUN_WINDOW_MARGIN_S = 300.0
MAX_RUNS_PER_TICK = 200
#: How long a failed run of a release partition waits for a readable ``tide_releases`` (its blocked
#: decision is the one alert to send) before it is reported as ``run_failed`` on its own.
HOLD_RELEASE_RUN_S = 600.0
#: Columns read from tide_releases: counts and names only (never ``gate_reasons`` text into an alert).
RELEASE_COLUMNS = [
    "study",
    "key",
    "status",
    "decided_at",
    "gate_reasons",
    "n_in",
    "n_released",
    "n_quarantined",
    "n_spans",
    "n_held",
    "published_version",
]
COUNTS = ("n_in", "n_released", "n_quarantined", "n_spans", "n_held")
_CODE = re.compile(r"\[(E\d{3})\]")
_FAILED_CHECK = re.compile(r"check (\w+) failed")
ASSET_JOB_PREFIX = "__ASSET_JOB"


class SlackNotifier:
    """Posts :meth:`Alert.text` to a channel with dagster-slack's ``SlackResource`` client
    (``api_url``: another Slack API base, e.g. a proxy)."""

    name = "slack"

    def __init__(self, channel: str, token: str, api_url: str = "", timeout_s: float = 10.0) -> None:
        try:
            resource = load_dotted("dagster_slack:SlackResource")
        except ConfigError:
            raise ConfigError(
                "E981",
                "Slack alerts need dagster-slack, which is not installed",
                hint="pip install 'tide-etl[alerts]', or unset TIDE_ALERT_SLACK_CHANNEL",
            ) from None
        self.channel = channel
        self.client = resource(token=token).get_client()
        if api_url:
            self.client.base_url = api_url.rstrip("/") + "/"
        self.client.timeout = max(1, int(timeout_s))

    def send(self, alert: Alert) -> None:
        try:
            response = self.client.chat_postMessage(channel=self.channel, text=alert.text())
            ok = bool(response.get("ok"))
        except Exception as exc:  # slack_sdk's API and client errors, a network error
            raise AlertDeliveryError(
                "E980",
                f"Slack did not take the alert: {type(exc).__name__}",
                hint="check the token's scopes, the channel and the network; the alert is sent again at the next tick",
            ) from None
        if not ok:
            raise AlertDeliveryError("E980", "Slack answered ok=false", hint="check the channel and the token")


def channels(settings: AlertSettings) -> list[Notifier]:
    """Every configured channel: webhook, e-mail, Slack."""
    out = notifiers(settings)
    if settings.slack_channel:
        out.append(
            SlackNotifier(settings.slack_channel, settings.slack_token, settings.slack_api_url, settings.timeout_s)
        )
    return out


def _link(settings: AlertSettings, path: str) -> str:
    return f"{settings.ui_url}{path}"


def _job_names() -> set[str]:
    return {j.name for j in JOBS}


def _partition(tags: Mapping[str, str]) -> tuple[str, str]:
    study, key = tags.get("dagster/partition/study", ""), tags.get("dagster/partition/key", "")
    if study or key:
        return study, key
    partition = tags.get("dagster/partition", "")
    return split_release_key(partition) if "|" in partition else (partition, "")


def run_alert(instance: dg.DagsterInstance, run: dg.DagsterRun, settings: AlertSettings) -> Alert:
    """A failed run: its job, partition, failed steps' error codes and failed checks (names only)."""
    codes: set[str] = set()
    for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE):
        error = getattr(record.dagster_event.event_specific_data, "error", None) if record.dagster_event else None
        codes.update(_CODE.findall(getattr(error, "message", "") or ""))
    failed_checks = set()
    for record in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        data: Any = record.dagster_event.event_specific_data if record.dagster_event else None
        if data is not None and not getattr(data, "passed", True):
            failed_checks.add(str(data.check_name))
    study, key = _partition(run.tags)
    return Alert(
        kind=RUN_FAILED,
        study=study,
        key=key,
        status="failed",
        checks_failed=tuple(sorted(failed_checks)),
        codes=tuple(sorted(codes)),
        job=run.job_name,
        run_id=run.run_id,
        link=_link(settings, f"/runs/{run.run_id}"),
    )


def release_alert(
    instance: dg.DagsterInstance, row: Mapping[str, Any], settings: AlertSettings, run: dg.DagsterRun | None = None
) -> Alert:
    """A release decision from its ``tide_releases`` row: check names and codes are picked out of
    the reasons (known names and ``[Exxx]`` only), counts are numbers; the reasons are not sent.
    ``run``: the run that decided it (else the partition's latest run is named)."""
    study, key = str(row["study"]), str(row["key"])
    reasons = str(row.get("gate_reasons") or "")
    checks = sorted({name for name in _FAILED_CHECK.findall(reasons) if name in BLOCKING_CHECKS})
    partition = str(release_key(study, key))
    if run is None:
        runs = instance.get_run_records(dg.RunsFilter(tags={"dagster/partition": partition}), limit=1)
        run = runs[0].dagster_run if runs else None
    path = f"/runs/{run.run_id}" if run else f"/assets/release_summary?partition={urllib.parse.quote(partition)}"
    decided = row.get("decided_at")
    return Alert(
        kind=RELEASE_BLOCKED if row["status"] == BLOCKED else RELEASE_AWAITING_AUDIT,
        study=study,
        key=key,
        status=str(row["status"]),
        checks_failed=tuple(checks),
        codes=tuple(sorted(set(_CODE.findall(reasons)))),
        counts={c: int(row[c]) for c in COUNTS if row.get(c) is not None},
        published_version=str(row.get("published_version") or ""),
        decided_at=decided.isoformat() if isinstance(decided, dt.datetime) else str(decided or ""),
        job=run.job_name if run else "",
        run_id=run.run_id if run else "",
        link=_link(settings, path),
    )


def release_rows(warehouse: WarehouseResource, table: str, statuses: list[str]) -> list[dict[str, Any]]:
    """The ``tide_releases`` rows in ``statuses`` (none before the first release)."""
    with warehouse.open(lock_wait_s=ALERT_LOCK_WAIT_S) as wh:
        if not wh.table_exists(table):
            return []
        columns = [c for c in RELEASE_COLUMNS if c in set(wh.columns(table))]
        return list(wh.read_table(table, columns, {"status": statuses}).to_pylist())


def deciding_runs(rows: Iterable[Mapping[str, Any]], records: Iterable[Any]) -> dict[str, Any]:
    """{release alert id: the failed run record that decided it} for the blocked decisions among
    ``rows``: a run of the same (study, key) partition whose lifetime holds ``decided_at``."""
    by_partition: dict[tuple[str, str], list[Any]] = {}
    for record in records:
        by_partition.setdefault(_partition(record.dagster_run.tags), []).append(record)
    out: dict[str, Any] = {}
    for row in rows:
        decided = row.get("decided_at")
        if row.get("status") != BLOCKED or not isinstance(decided, dt.datetime):
            continue
        at = decided.timestamp()
        during = [
            r
            for r in by_partition.get((str(row["study"]), str(row["key"])), [])
            if r.create_timestamp.timestamp() <= at <= r.update_timestamp.timestamp()
        ]
        if during:
            out[_release_id(row)] = max(during, key=lambda r: r.create_timestamp)
    return out


def batches_reported_by_cells(instance: dg.DagsterInstance, records: Iterable[Any]) -> set[str]:
    """Alert ids of the failed ``release_batch_job`` runs whose failure their cells' runs report.

    A batch fails when some cell did not end well; the op tags it with the number of bad cells
    when each of them is a failed cell run (tagged with the batch's id), and each such run is an
    alert of its own (``release_blocked`` or ``run_failed``).  The batch run is left out only when
    the instance holds exactly that many failed cell runs of it; otherwise (an untagged batch, a
    count that does not match) it is reported as ``run_failed`` (fail closed).
    """
    out: set[str] = set()
    for record in records:
        run = record.dagster_run
        tag = run.tags.get(CELLS_REPORTED_TAG, "")
        if run.job_name != release_batch_job.name or not tag.isdigit() or int(tag) < 1:
            continue
        cells = instance.get_run_records(
            dg.RunsFilter(tags={BATCH_TAG: run.run_id}, statuses=[dg.DagsterRunStatus.FAILURE])
        )
        if len(cells) == int(tag):
            out.add(f"run:{run.run_id}")
    return out


def _release_run(record: Any) -> bool:
    """A run of one (study, key) release partition."""
    study, key = _partition(record.dagster_run.tags)
    return bool(study and key)


def _release_id(row: Mapping[str, Any]) -> str:
    decided = row.get("decided_at")
    stamp = decided.isoformat() if isinstance(decided, dt.datetime) else str(decided)
    return f"release:{row['study']}|{row['key']}|{row['status']}|{stamp}"


class AlertCursor:
    """The sensor's state: the failed-run window and, per channel, the alerts it confirmed."""

    def __init__(self, runs_after: float, sent: Mapping[str, Iterable[str]] | None = None) -> None:
        self.runs_after = runs_after
        self.sent: dict[str, set[str]] = {k: set(v) for k, v in (sent or {}).items()}

    @classmethod
    def load(cls, cursor: str | None, now: float) -> AlertCursor:
        if not cursor:
            return cls(now - FIRST_TICK_LOOKBACK_S)
        state = json.loads(cursor)
        return cls(float(state["runs_after"]), state.get("sent") or {})

    def dump(self) -> str:
        return json.dumps(
            {"v": 1, "runs_after": self.runs_after, "sent": {k: sorted(v) for k, v in sorted(self.sent.items())}}
        )


def deliver(
    chans: list[Notifier], pending: list[tuple[str, Alert]], cursor: AlertCursor, log: Any
) -> tuple[int, list[str]]:
    """Send each alert a channel has not confirmed; a channel that fails is not tried again this
    tick.  Returns (alerts delivered, the failures' coded messages)."""
    sent, failures = 0, []
    for chan in chans:
        done = cursor.sent.setdefault(chan.name, set())
        for alert_id, alert in pending:
            if alert_id in done:
                continue
            try:
                chan.send(alert)
            except Exception as exc:
                code = exc.code if isinstance(exc, TideError) else "E980"
                text = exc.message if isinstance(exc, TideError) else f"{chan.name} failed: {type(exc).__name__}"
                failures.append(f"[{code}] {chan.name}: {text}")
                log.warning(f"[{code}] alert {alert.kind} not delivered by {chan.name}: {text}; retried next tick")
                break
            done.add(alert_id)
            sent += 1
            log.info(f"alert {alert.kind} ({alert.study}/{alert.key} {alert.run_id}) delivered by {chan.name}")
    return sent, failures


def evaluate(
    context: dg.SensorEvaluationContext,
    warehouse: WarehouseResource,
    tide_config: TideConfigResource,
    environ: Mapping[str, str],
) -> dg.SkipReason:
    """One tick: find failed runs and alerting release decisions, deliver, record what each channel took."""
    now = time.time()
    try:
        settings = AlertSettings.from_env(environ)
        chans = channels(settings)
    except ConfigError as exc:
        context.log.error(str(exc))
        return dg.SkipReason(f"alerts not configured correctly: [{exc.code}] {exc.message}")
    if not chans:
        return dg.SkipReason("no alert channel configured (TIDE_ALERT_WEBHOOK_URL, _SMTP_HOST or _SLACK_CHANNEL)")
    cursor = AlertCursor.load(context.cursor, now)
    instance = context.instance
    jobs = _job_names()
    after = dt.datetime.fromtimestamp(cursor.runs_after - RUN_WINDOW_MARGIN_S, dt.UTC)
    records = [
        r
        for r in instance.get_run_records(
            dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE], updated_after=after),
            limit=MAX_RUNS_PER_TICK,
            order_by="update_timestamp",
            ascending=True,
        )
        if r.dagster_run.job_name in jobs or r.dagster_run.job_name.startswith(ASSET_JOB_PREFIX)
    ]
    names = [c.name for c in chans]

    def open_(alert_id: str) -> bool:  # some channel has not confirmed it
        return any(alert_id not in cursor.sent.get(n, ()) for n in names)

    run_ids = {f"run:{r.dagster_run.run_id}": r for r in records}
    by_cells = batches_reported_by_cells(instance, records)
    statuses = [BLOCKED] + ([AWAITING_AUDIT] if settings.awaiting_audit else [])
    releases_read, busy = True, ""
    try:
        rows = release_rows(warehouse, tide_config.build().tables.releases, statuses)
    except TideError as exc:  # a DuckDB file held past the wait (E303), an unreachable warehouse
        releases_read, rows, busy = False, [], f"; releases not read ([{exc.code}], next tick)"
        context.log.warning(f"[{exc.code}] tide_releases not read this tick: {exc.message}")
    rows.sort(key=lambda r: str(r.get("decided_at")))
    release_ids = {_release_id(r): r for r in rows}
    # one alert per event: a run that decided a blocked release is reported by that decision
    deciding = deciding_runs(rows, records)
    reported_by = {f"run:{rec.dagster_run.run_id}": i for i, rec in deciding.items()}
    for n in names:  # a channel that reported the run (as run_failed) has reported the decision
        done = cursor.sent.setdefault(n, set())
        done.update(i for run_id, i in reported_by.items() if run_id in done)
    held = set()
    if not releases_read:  # the run's decision may be the alert to send: wait for it, for a while
        held = {
            i
            for i, r in run_ids.items()
            if _release_run(r) and now - r.update_timestamp.timestamp() < HOLD_RELEASE_RUN_S
        }
    pending = [
        (i, run_alert(instance, r.dagster_run, settings))
        for i, r in run_ids.items()
        if open_(i) and i not in reported_by and i not in held and i not in by_cells
    ]
    pending += [
        (i, release_alert(instance, r, settings, deciding[i].dagster_run if i in deciding else None))
        for i, r in release_ids.items()
        if open_(i)
    ]

    sent, failures = deliver(chans, pending, cursor, context.log)

    # forget what cannot come back: runs outside the window, decisions no longer current (kept
    # when the releases could not be read this tick), channels no longer configured
    current = set(run_ids) | set(release_ids)
    cursor.sent = {
        n: {i for i in done if i in current or (not releases_read and i.startswith("release:"))}
        for n, done in cursor.sent.items()
        if n in names
    }
    undelivered = [run_ids[i].update_timestamp.timestamp() for i, _ in pending if i in run_ids and open_(i)]
    undelivered += [run_ids[i].update_timestamp.timestamp() for i in held]  # kept in the window
    if undelivered:
        cursor.runs_after = min(undelivered)
    elif records:
        cursor.runs_after = max(max(r.update_timestamp.timestamp() for r in records), cursor.runs_after)
    context.update_cursor(cursor.dump())
    waiting = sum(1 for i, _ in pending for n in names if i not in cursor.sent.get(n, ()))
    summary = f"{sent} alert deliveries made, {waiting} pending over {len(chans)} channels{busy}"
    if held:
        summary += f"; {len(held)} failed release runs held until their decisions can be read"
    return dg.SkipReason(summary + (": " + "; ".join(failures) if failures else ""))


@dg.sensor(
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Alerts (webhook, e-mail, Slack: TIDE_ALERT_*) when a TIDE run fails or a release is decided "
    "blocked (awaiting_audit too with TIDE_ALERT_AWAITING_AUDIT=1); an alert a channel did not take is sent again "
    "next tick.",
)
def tide_alerts(context: dg.SensorEvaluationContext, warehouse: WarehouseResource, tide_config: TideConfigResource):
    return evaluate(context, warehouse, tide_config, os.environ)
