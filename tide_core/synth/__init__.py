"""Synthetic clinical notes with gold PHI spans recorded by construction (see docs/synthetic_corpus.md)."""

from tide_core.synth.corpus import (
    DemoCorpus,
    demo_metadata_vocabulary,
    generate,
    generate_demo_corpus,
    generate_heldout_corpus,
    generate_heldout_dataset,
    generate_training_corpus,
)
from tide_core.synth.world import PATIENT_COLUMNS

__all__ = [
    "DemoCorpus",
    "PATIENT_COLUMNS",
    "demo_metadata_vocabulary",
    "generate",
    "generate_demo_corpus",
    "generate_heldout_corpus",
    "generate_heldout_dataset",
    "generate_training_corpus",
]
