"""Release assurance: drift monitor, residual-PHI screen, patient-level audits and the release gate.

See docs/assurance.md.  Entry points (imported lazily): ``freeze_reference``, ``check_drift``,
``screen_released``, ``plan_audit``, ``sample_patients``, ``audit_bound``, ``release_sentence``,
``evaluate_release``, ``ReleaseGatePolicy``, ``AuditRecord``.
"""

from __future__ import annotations

from typing import Any

from tide_core.plugins import load_dotted

_EXPORTS = {
    "freeze_reference": "tide_core.assurance.drift",
    "check_drift": "tide_core.assurance.drift",
    "screen_released": "tide_core.assurance.screen",
    "plan_audit": "tide_core.assurance.audit",
    "sample_patients": "tide_core.assurance.audit",
    "release_sentence": "tide_core.assurance.audit",
    "buckets_from_notes": "tide_core.assurance.audit",
    "audit_bound": "tide_core.assurance.bounds",
    "clopper_pearson_upper": "tide_core.assurance.bounds",
    "evaluate_release": "tide_core.assurance.gate",
    "ReleaseGatePolicy": "tide_core.assurance.gate",
    "GateDecision": "tide_core.assurance.gate",
    "AuditRecord": "tide_core.assurance.audit_table",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return load_dotted(f"{_EXPORTS[name]}:{name}")
    raise AttributeError(name)
