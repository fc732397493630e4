"""Exported policies (``onnx:PATH`` agents): an ONNX model with its JSON manifest beside it.

``hearts export`` (``export/model.py``) writes ``policy.onnx`` and ``policy.json``; this module
reads them back, so the arena can benchmark the very file a game app ships. The manifest is
checked before the model is used: its format, the observation version, size and layout it was
made for (they must be this code's observation v1), the model's sha256, and the observation
version the model itself records in its metadata. A mismatch raises :class:`PolicyManifestError`
naming both sides, never a silent misreading of the vector.

The graph is checked before onnxruntime sees it (:func:`check_graph`), because a model comes with
its manifest from anywhere and onnxruntime has no memory cap: only the operators this project's
exporter writes (``EXPORTED_OPERATORS``), no functions, subgraphs or external data, the contract's
inputs and outputs, and every tensor's shape known from ONNX shape inference, made of fixed sizes
within ``MAX_DIMENSION`` and the batch dimension (at most once), with at most ``MAX_ELEMENTS`` per
batch row or, for weights and constants, in all. A graph outside this is refused in one line before it
runs (a ``ConstantOfShape`` of 4 GiB, an output that grows with the square of the batch).

onnx and onnxruntime are imported only when an ``onnx:`` agent is made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import AgentSpecError, checked_inputs, sha256_file
from hearts_env.observe import OBS_DIM, OBS_VERSION, OBSERVATION_LAYOUT
from hearts_env.rule_space import space_of
from hearts_env.rules import Rules, RulesError

MANIFEST_FORMAT = "hearts-lab-policy"
MANIFEST_VERSION = 1
#: ONNX metadata keys written by the exporter (Python onnxruntime reads them; JavaScript cannot).
META_PREFIX = "hearts_lab."


#: The operators ``hearts export`` writes (torch's dynamo exporter, opset 17, for every PolicyNet:
#: any hidden sizes, with or without the card scorer). Nothing else runs.
EXPORTED_OPERATORS = frozenset({
    "Add", "ArgMax", "Cast", "Clip", "Concat", "Div", "Equal", "Expand", "Gather", "Gemm", "Greater", "MatMul",
    "Mul", "ReduceSum", "Relu", "Reshape", "Shape", "Slice", "Softmax", "Squeeze", "Sub", "Unsqueeze", "Where",
})
#: Bounds on an exported graph: a fixed dimension, the elements of a tensor per batch row (the
#: largest in a shipped policy has a few thousand) and of a weight or constant (a 4096 x 4096 layer
#: has 16.8 million), the nodes, and the model file.
MAX_DIMENSION = 65_536
MAX_ELEMENTS = 1 << 24
MAX_ROW_ELEMENTS = 1 << 16
MAX_NODES = 10_000
MAX_MODEL_BYTES = 512 << 20


class PolicyManifestError(AgentSpecError):
    """An exported policy whose manifest is missing, malformed or does not match the model or this
    code, or whose graph is not one this project exports (:func:`check_graph`)."""


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


def check_graph(path: str | Path) -> None:
    """Refuse a model that is not an exported policy's kind of graph, before anything runs it.

    See the module docstring; raises :class:`PolicyManifestError` naming the file and the first
    thing found outside the bounds."""
    import onnx
    from onnx import shape_inference

    path = Path(path)

    def refuse(why: str) -> PolicyManifestError:
        return PolicyManifestError(f"{path}: not a policy this project exports ({why})")

    size = path.stat().st_size
    if size > MAX_MODEL_BYTES:
        raise refuse(f"{size} bytes; an exported policy has at most {MAX_MODEL_BYTES}")
    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as err:  # protobuf's DecodeError and friends
        raise PolicyManifestError(f"{path}: not an ONNX model ({_first_line(err)})") from None
    graph = model.graph
    if model.functions:
        raise refuse(f"it defines functions ({model.functions[0].name!r}); exported policies use none")
    if len(graph.node) > MAX_NODES:
        raise refuse(f"{len(graph.node)} nodes; at most {MAX_NODES}")
    for node in graph.node:
        if node.domain not in ("", "ai.onnx") or node.op_type not in EXPORTED_OPERATORS:
            name = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
            raise refuse(f"operator {name}; exported policies use only {', '.join(sorted(EXPORTED_OPERATORS))}")
        if any(attribute.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for attribute in node.attribute):
            raise refuse(f"node {node.name or node.op_type} holds a subgraph")
    for tensor in graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            raise refuse(f"weight {tensor.name!r} is stored in another file")
        elements = _elements(tensor.dims)
        if elements > MAX_ELEMENTS:
            raise refuse(f"weight {tensor.name!r} has {elements} elements; at most {MAX_ELEMENTS}")
    if graph.sparse_initializer:
        raise refuse("sparse weights; exported policies store them dense")
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except Exception as err:  # onnx's InferenceError, ValidationError, ...
        raise refuse(f"its shapes do not check: {_first_line(err)}") from None
    graph = inferred.graph
    batch = _check_signature(graph, refuse)
    for value in list(graph.value_info) + list(graph.output):
        _check_shape(value, batch, refuse)


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:200] if text else type(err).__name__


def _elements(dims) -> int:
    count = 1
    for dim in dims:
        count *= int(dim)
    return count


def _check_signature(graph, refuse) -> str:
    """The contract's inputs and outputs, by name and type; returns the batch dimension's name."""
    from onnx import TensorProto

    def named(values):
        return [(v.name, TensorProto.DataType.Name(v.type.tensor_type.elem_type)) for v in values]

    inputs = [(name, kind) for name, kind in named(graph.input)
              if name not in {t.name for t in graph.initializer}]
    want_in = [("observation", "FLOAT"), ("action_mask", "BOOL")]
    want_out = [("action", "INT64"), ("probabilities", "FLOAT")]
    if inputs != want_in or named(graph.output) != want_out:
        raise refuse(f"inputs {inputs} and outputs {named(graph.output)}; "
                     f"an exported policy has inputs {want_in} and outputs {want_out}")
    first = graph.input[0].type.tensor_type.shape.dim
    if not first or not first[0].dim_param:
        raise refuse("the observation's first dimension is not a named batch dimension")
    batch = first[0].dim_param
    widths = {"observation": [OBS_DIM], "action_mask": [52], "action": [], "probabilities": [52]}
    for value in list(graph.input[:2]) + list(graph.output):
        shape = value.type.tensor_type.shape
        dims = [d.dim_param or (d.dim_value if d.HasField("dim_value") else "?") for d in shape.dim]
        if not value.type.tensor_type.HasField("shape") or dims != [batch] + widths[value.name]:
            raise refuse(f"{value.name} has shape {dims}; expected {[batch] + widths[value.name]}")
    return batch


def _check_shape(value, batch: str, refuse) -> None:
    """One tensor: a known shape of fixed sizes within bounds and the batch dimension at most once."""
    tensor_type = value.type.tensor_type
    if not value.type.HasField("tensor_type") or not tensor_type.HasField("shape"):
        raise refuse(f"the shape of {value.name!r} is not known before it runs")
    fixed, batched = 1, 0
    for dim in tensor_type.shape.dim:
        if dim.HasField("dim_value") and 0 <= dim.dim_value <= MAX_DIMENSION:
            fixed *= dim.dim_value
        elif dim.dim_param == batch:
            batched += 1
        elif dim.HasField("dim_value"):
            raise refuse(f"{value.name!r} has a dimension of {dim.dim_value}; fixed dimensions are at most "
                         f"{MAX_DIMENSION}")
        else:  # a size computed from the inputs' values, or from the batch beyond being it
            raise refuse(f"{value.name!r} has a dimension that is neither the batch nor a fixed size")
    if batched > 1:
        raise refuse(f"{value.name!r} grows with the batch more than once")
    limit = MAX_ROW_ELEMENTS if batched else MAX_ELEMENTS
    if fixed > limit:
        per = " per batch row" if batched else ""
        raise refuse(f"{value.name!r} has {fixed} elements{per}; at most {limit}")


class OnnxPolicyAgent:
    """Plays an exported policy with onnxruntime (batched; the model picks the most probable legal card)."""

    def __init__(self, path: str | Path, rules: Rules | None = None, name: str | None = None):
        try:
            import onnx  # noqa: F401  (check_graph reads the graph with it)
            import onnxruntime
        except ImportError:
            raise ImportError("onnx: agents need onnx and onnxruntime: pip install -e '.[export]'") from None
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"ONNX model not found: {path}")
        self.path = path
        self.name = name or f"onnx:{path.name}"
        self.manifest = read_manifest(path)
        check_graph(path)  # before onnxruntime builds anything from it
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
        try:
            self.space = space_of(self.manifest, self.rules)
        except RulesError as err:
            raise PolicyManifestError(f"{manifest_path(path)}: no usable rule_space ({err})") from None
        refusal = None if rules is None else self.space.refusal(rules)
        if refusal is not None:
            raise PolicyManifestError(f"{path} cannot play the '{Rules.resolve(rules).name}' rules: {refusal}")

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
