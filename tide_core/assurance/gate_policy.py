"""The release-gate policy a deployment owns: a versioned TOML file, and the overrides allowed on top.

The policy file (``infra/gate_policy.example.toml``) names the policy and its version and sets
what the gate demands; every key but ``name`` and ``version`` defaults to the built-in policy
(``ReleaseGatePolicy()``, label ``tide-default@1``)::

    name = "hospital-x"          # the policy's name ...
    version = 3                  # ... and version: the label reads "hospital-x@3"
    target_rate = 0.01           # a bucket's exact upper bound must be below this, in (0, 1)
    confidence = 0.95            # at this confidence, in (0, 1)
    every_bucket = true          # every bucket of a release needs an audit (false: any audits do)
    block_on_drift = true        # a drift band of "drift" blocks
    block_on_watch = false       # ... "watch" blocks
    block_on_unknown = false     # ... "unknown" blocks
    require_drift = false        # no recorded drift verdict blocks

Unknown keys, wrong types and out-of-range values are refused (coded :class:`ConfigError`):
a typo must not silently leave the built-in value in force.

:func:`apply_override` applies the overrides a run may carry (Dagster resource config): an
override that weakens the policy (``weakens``) is refused unless it names an ``approval`` (who
approved it, where it is recorded), which the resulting policy then carries.  A stricter
override needs no approval.

Error codes: E951 file not found or unreadable, E952 not valid TOML, E953 unknown key,
E954 missing key or wrong type, E955 value out of range, E956 a weakening override without
an approval.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from tide_core.assurance.gate import ReleaseGatePolicy, weakens
from tide_core.errors import ConfigError

#: The built-in policy (label ``tide-default@1``): what a deployment without a policy file gets.
DEFAULT_POLICY = ReleaseGatePolicy()

#: key -> its type in the policy file (``name`` and ``version`` are required, the rest optional).
KEYS: dict[str, str] = {
    "name": "string",
    "version": "integer or string",
    "target_rate": "number",
    "confidence": "number",
    "every_bucket": "boolean",
    "block_on_drift": "boolean",
    "block_on_watch": "boolean",
    "block_on_unknown": "boolean",
    "require_drift": "boolean",
}
REQUIRED = ("name", "version")
FLAGS = ("block_on_drift", "block_on_watch", "block_on_unknown", "require_drift")

KEYS_DOC = "docs/configuration.md, 'Release-gate policy', or infra/gate_policy.example.toml"
APPROVAL_EXAMPLE = "approval: 'DPO J. Smith, ticket 4411'"


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _rate(value: float, key: str, where: str) -> float:
    """A probability strictly between 0 and 1 (a bound of 0 or 1 decides nothing)."""
    if not math.isfinite(value) or not 0.0 < value < 1.0:
        raise ConfigError("E955", f"{where}: {key} must lie strictly between 0 and 1", hint=f"e.g. {key} = 0.01")
    return float(value)


def _label_part(value: object, key: str, where: str) -> str:
    text = str(value)
    if not text or text != text.strip() or any(c.isspace() for c in text) or "@" in text:
        raise ConfigError(
            "E955",
            f"{where}: {key} must be non-empty, without spaces or '@'",
            hint='e.g. name = "hospital-x", version = 3',
        )
    return text


def _check_types(data: dict[str, Any], where: str) -> None:
    unknown = sorted(k for k in data if k not in KEYS)
    if unknown:
        raise ConfigError(
            "E953",
            f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)}",
            hint=f"a gate policy file has the keys {', '.join(KEYS)}",
        )
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        raise ConfigError(
            "E954",
            f"{where}: missing {' and '.join(missing)}",
            hint='a gate policy names itself and its version: name = "hospital-x", version = 1',
        )
    for key, value in data.items():
        kind = KEYS[key]
        ok = {
            "string": isinstance(value, str),
            "integer or string": isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)),
            "number": _is_number(value),
            "boolean": isinstance(value, bool),
        }[kind]
        if not ok:
            raise ConfigError("E954", f"{where}: {key} must be a {kind}", hint=f"see {KEYS_DOC}")


def policy_from_mapping(data: dict[str, Any], where: str = "gate policy") -> ReleaseGatePolicy:
    """The policy a parsed policy file describes (``where`` names it in errors)."""
    _check_types(data, where)
    if isinstance(data["version"], int) and data["version"] < 1:
        raise ConfigError("E955", f"{where}: version must be 1 or more", hint="e.g. version = 1")
    label = f"{_label_part(data['name'], 'name', where)}@{_label_part(data['version'], 'version', where)}"
    every_bucket = data.get("every_bucket", DEFAULT_POLICY.required_buckets is None)
    return ReleaseGatePolicy(
        target_rate=_rate(data.get("target_rate", DEFAULT_POLICY.target_rate), "target_rate", where),
        confidence=_rate(data.get("confidence", DEFAULT_POLICY.confidence), "confidence", where),
        required_buckets=None if every_bucket else (),
        label=label,
        **{flag: data.get(flag, getattr(DEFAULT_POLICY, flag)) for flag in FLAGS},
    )


def load_gate_policy(path: str | None) -> ReleaseGatePolicy:
    """The policy of the TOML file at ``path``; None (or empty): the built-in ``tide-default@1``."""
    if not path:
        return DEFAULT_POLICY
    p = Path(path)
    where = f"gate policy file {p}"
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "E951", f"{where} not found", hint="set TIDE_GATE_POLICY to the deployment's policy file, or unset it"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("E951", f"{where} cannot be read ({type(exc).__name__})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("E952", f"{where} is not valid TOML: {exc}", hint=f"see {KEYS_DOC}") from None
    return policy_from_mapping(data, where)


def apply_override(
    base: ReleaseGatePolicy,
    *,
    target_rate: float | None = None,
    confidence: float | None = None,
    every_bucket: bool | None = None,
    approval: str | None = None,
) -> ReleaseGatePolicy:
    """``base`` with the given overrides (None: keep the base's value).  An override that weakens
    ``base`` needs a non-empty ``approval`` naming who approved it; the result carries it.  The
    error names the weakened fields only, never their values."""
    where = "gate policy override"
    changes: dict[str, Any] = {}
    if target_rate is not None:
        if not _is_number(target_rate):
            raise ConfigError("E954", f"{where}: target_rate must be a number")
        changes["target_rate"] = _rate(target_rate, "target_rate", where)
    if confidence is not None:
        if not _is_number(confidence):
            raise ConfigError("E954", f"{where}: confidence must be a number")
        changes["confidence"] = _rate(confidence, "confidence", where)
    if every_bucket is not None:
        if not isinstance(every_bucket, bool):
            raise ConfigError("E954", f"{where}: every_bucket must be a boolean")
        changes["required_buckets"] = None if every_bucket else ()
    named = (approval or "").strip()
    if named:
        changes["approval"] = named
    result = replace(base, **changes)
    weaker = weakens(base, result)
    if weaker and not named:
        raise ConfigError(
            "E956",
            f"the override weakens the release-gate policy {base.label} ({', '.join(weaker)}) without an approval",
            hint=(
                f"set an approval naming who approved it and where it is recorded (e.g. {APPROVAL_EXAMPLE}), "
                "or change the deployment's gate policy file (TIDE_GATE_POLICY)"
            ),
        )
    return result
