"""The study-run engine: what ``tide_core.runner``'s two study functions are written in.

Study input (``study_chunks``, ``validation``, ``study_input``), recognizer set-up
(``recognizer_setup``), recognition of a batch of notes (``recognition``), the shared chunk-run
loop (``chunk_run``) with its per-stage steps (``recognition_run``, ``release_run``, and the chunk
work a Ray worker also does: ``recognize_chunk``, ``release_input``, ``release_chunk``), and the
``tide_runs`` ledger (``ledger``).  Nothing here imports ``tide_core.execution`` or the runner.
"""
