"""Exported policies (``onnx:PATH`` agents): an ONNX model with its JSON manifest beside it.

``hearts export`` (``eval/export.py``) writes ``policy.onnx`` and ``policy.json``; this module
reads them back, so the arena can benchmark the very file a game app ships. The manifest is
checked before the model is used: its format, the observation version, size and layout it was
made for (they must be this code's observation v1), the model's sha256, and the observation
version the model itself records in its metadata. A mismatch raises :class:`PolicyManifestError`
naming both sides, never a silent misreading of the vector.

onnxruntime is imported only when an ``onnx:`` agent is made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import AgentSpecError, checked_inputs, sha256_file
from hearts_env.observe import OBS_DIM, OBS_VERSION, OBSERVATION_LAYOUT
from hearts_env.rules import Rules, RulesError

MANIFEST_FORMAT = "hearts-lab-policy"
MANIFEST_VERSION = 1
#: ONNX metadata keys written by the exporter (Python onnxruntime reads them; JavaScript cannot).
META_PREFIX = "hearts_lab."


class PolicyManifestError(AgentSpecError):
    """An exported policy whose manifest is missing, malformed or does not match the model or this code."""


def manifest_path(model_path: str | Path) -> Path:
    """The manifest beside a model: ``policy.onnx`` -> ``policy.json``."""
    return Path(model_path).with_suffix(".json")


def layout_entries() -> list[dict[str, Any]]:
    """This code's observation layout as the manifest lists it (name, offset, size, shape)."""
    return [
        {"name": name, "offset": piece.start, "size": piece.stop - piece.start, "shape": list(shape)}
        for name, (piece, shape) in OBSERVATION_LAYOUT.items()
    ]


def read_manifest(model_path: str | Path) -> dict[str, Any]:
    path = manifest_path(model_path)
    if not path.is_file():
        raise PolicyManifestError(
            f"{model_path}: no manifest {path.name} beside the model (hearts export writes both; keep them together)"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:  # a binary file, or text in another encoding
        raise PolicyManifestError(f"{path}: not a manifest (not UTF-8 text: byte {err.start + 1} is invalid)") from None
    except ValueError as err:  # JSONDecodeError, or a number longer than Python converts
        raise PolicyManifestError(f"{path}: not valid JSON ({err})") from None
    except RecursionError:
        raise PolicyManifestError(f"{path}: not valid JSON (nested too deeply)") from None
    if not isinstance(manifest, dict):
        raise PolicyManifestError(f"{path}: a manifest is a JSON object")
    return manifest


def check_manifest(manifest: dict[str, Any], model_path: str | Path, model_meta: dict[str, str] | None = None) -> None:
    """Refuse a manifest that does not describe this model or this code's observation."""
    where = manifest_path(model_path)
    if manifest.get("format") != MANIFEST_FORMAT or manifest.get("format_version") != MANIFEST_VERSION:
        raise PolicyManifestError(
            f"{where}: format {manifest.get('format')!r} version {manifest.get('format_version')!r}; "
            f"expected {MANIFEST_FORMAT!r} version {MANIFEST_VERSION}"
        )
    observation, model = manifest.get("observation") or {}, manifest.get("model") or {}
    layout = observation.get("layout", []) if isinstance(observation, dict) else None
    # Manifests come with models from anywhere: a value of the wrong type is refused here, not met
    # as a Python error further on.
    if not (isinstance(model, dict) and isinstance(layout, list) and all(isinstance(p, dict) for p in layout)):
        raise PolicyManifestError(f"{where}: 'observation' (with its 'layout' list) and 'model' must be JSON objects")
    version, dim = observation.get("version"), observation.get("dimension")
    if version != OBS_VERSION or dim != OBS_DIM:
        raise PolicyManifestError(
            f"{where}: the manifest is for observation v{version} ({dim} floats); this code encodes "
            f"observation v{OBS_VERSION} ({OBS_DIM} floats)"
        )
    ours = layout_entries()
    theirs = [{k: piece.get(k) for k in ("name", "offset", "size", "shape")} for piece in layout]
    if theirs != ours:
        raise PolicyManifestError(f"{where}: the observation layout differs from this code's observation v{OBS_VERSION}")
    expected = model.get("sha256")
    actual = sha256_file(model_path)
    if expected != actual:
        raise PolicyManifestError(
            f"{where}: the manifest belongs to another model (its sha256 {str(expected)[:12]}..., "
            f"{Path(model_path).name} has {actual[:12]}...)"
        )
    if model_meta is not None:
        model_version = model_meta.get(META_PREFIX + "obs_version")
        if model_version != str(version) or model_meta.get(META_PREFIX + "obs_dim") != str(dim):
            raise PolicyManifestError(
                f"{where}: the manifest says observation v{version} ({dim} floats) but the model was exported for "
                f"v{model_version} ({model_meta.get(META_PREFIX + 'obs_dim')} floats)"
            )


class OnnxPolicyAgent:
    """Plays an exported policy with onnxruntime (batched; the model picks the most probable legal card)."""

    def __init__(self, path: str | Path, rules: Rules | None = None, name: str | None = None):
        try:
            import onnxruntime
        except ImportError:
            raise ImportError("onnx: agents need onnxruntime: pip install -e '.[export]'") from None
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"ONNX model not found: {path}")
        self.path = path
        self.name = name or f"onnx:{path.name}"
        self.manifest = read_manifest(path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # the arena parallelises over processes
        options.inter_op_num_threads = 1
        try:
            self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as err:  # onnxruntime raises its own types for unreadable models
            first_line = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise PolicyManifestError(f"{path}: onnxruntime cannot load the model ({first_line})") from None
        model_meta = dict(self.session.get_modelmeta().custom_metadata_map)
        check_manifest(self.manifest, path, model_meta)
        if "rules" not in self.manifest:
            raise PolicyManifestError(f"{manifest_path(path)}: the manifest names no rules")
        try:
            self.rules = Rules.from_dict(self.manifest["rules"])
        except RulesError as err:
            raise PolicyManifestError(f"{manifest_path(path)}: no usable rules ({err})") from None
        if rules is not None and not self.rules.same_game(rules):
            raise PolicyManifestError(
                f"{path} was exported for rules '{self.rules.name}'; the game here uses rules '{rules.name}'"
            )

    def policy(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(actions [N] int64, probabilities [N, 52] float32)``; a mask row without a legal card
        gives action -1 and probabilities 0 (the model's empty-mask signal)."""
        observation, action_mask = checked_inputs(observation, action_mask, empty_rows=False)
        obs = np.ascontiguousarray(observation, dtype=np.float32)
        mask = np.ascontiguousarray(action_mask, dtype=bool)
        action, probabilities = self.session.run(["action", "probabilities"],
                                                 {"observation": obs, "action_mask": mask})
        return action.astype(np.int64), probabilities

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        return self.policy(observation, action_mask)[0]


def load_onnx_policy(path: str | Path, rules: Rules | None = None) -> OnnxPolicyAgent:
    return OnnxPolicyAgent(path, rules=rules)
