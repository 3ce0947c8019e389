"""The release of one (study, key): candidate checks, audit evidence bound to content, the gate,
and the versioned publish that researchers read.

- :mod:`~tide_core.release.checks` -- the blocking checks over the candidate (written by
  anonymization into ``tide_deid_notes`` and friends), as functions over the warehouse;
- :mod:`~tide_core.release.lifecycle` -- decide one release: guard, checks, gate, publish;
- the Dagster package (``tide_etl``) keeps thin assets and checks that call these.
"""
