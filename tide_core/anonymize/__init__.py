"""The anonymizer: keyed, deterministic surrogates for recognized PHI spans.

:mod:`~tide_core.anonymize.engine` replaces each span of a note by label; the operator modules
(``dates``, ``names``, ``contacts``, ``locations``, ``identifiers``, ...) are pure functions of the
study's key ring (:mod:`~tide_core.anonymize.keys`) and the value, so a rerun releases the same
text and no table ever needs the original value.
"""
