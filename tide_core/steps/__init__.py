"""The post-recognition steps, in the order every note goes through them after its recognizers.

``span_tidy`` (trim and split recognizer spans), ``resolve`` (one span per stretch of text under a
resolution policy), ``person_roles`` (PATIENT or DOCTOR from the words around a name) and
``propagate`` (a name or identifier found once is found everywhere in its note).  Each is a
versioned step in the recognition fingerprint (:func:`tide_core.engine.recognition.note_steps`).
"""
