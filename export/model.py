"""Export a trained policy for game apps: one ONNX file and a JSON manifest (``hearts export``).

``export_policy(checkpoint, out_dir)`` writes

* ``policy.onnx``: opset 17, weights inside the file, batch dimension dynamic. Inputs
  ``observation`` float32[N, D] (observation v1) and ``action_mask`` bool[N, 52]; outputs
  ``action`` int64[N] (the most probable legal card) and ``probabilities`` float32[N, 52] (the
  policy's distribution, zero on illegal cards). Illegal logits are masked with the finite
  ``MASKED_LOGIT`` (-1e9), so no NaN or -inf appears. A row whose mask has no legal card gets action
  ``NO_ACTION`` (-1) and all-zero probabilities, computed in the graph (not card 0 with a uniform
  distribution over illegal cards). The model's metadata repeats the observation version and the
  rules (for Python readers; JavaScript onnxruntime cannot read it).
* ``policy.json``: the manifest. Observation version, dimension and layout (each piece's name,
  offset, size, shape, meaning), the card encoding, the seat convention, the rules, the seat-record
  format, the model file's sha256, what the export verified, and provenance (the checkpoint's
  metadata: training config, iteration and decisions, distillation rounds; arena results when known).
* ``golden.json`` (unless ``golden=0``): test vectors for a game app's own encoder and runtime:
  seat records of the policy's rules with their observation vectors, legal masks and the model's
  action and probabilities (``cases``); records of other rule sets with observation and mask
  (``encoder_cases``); records that must be refused, each with the error ``hearts_env.seat_record``
  raises (``invalid``). Written by ``export.golden``, which chooses the records.

The exporter is ``torch.onnx.export`` with ``dynamo=True`` (torch 2.13's default, which needs
``onnxscript``) and ``external_data=False``; it builds opset 18 and converts down to 17. After
export the file is checked: graph inputs and outputs, their types, the dynamic batch dimension, no
external data, and onnxruntime's answers against the torch network's on real game states.

torch, onnx and onnxruntime (the export extra) are imported by the functions that use them, so this
module (its errors, the manifest's sections) loads without them.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import json
import logging
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import sha256_file
from agents.onnx_policy import MANIFEST_FORMAT, MANIFEST_VERSION, META_PREFIX, layout_entries
from hearts_env import cards, engine, observe, seat_record
from hearts_env.rule_space import RuleSpace, space_of
from hearts_env.rules import Rules

from .golden import GOLDEN_FILE, encoder_records, invalid_records, write_golden
from .situations import sample_states, space_records

OPSET = 17
MODEL_FILE = "policy.onnx"
MANIFEST_FILE = "policy.json"
NO_ACTION = -1  # the action of a row whose action mask has no legal card (its probabilities are all 0)


class ExportError(ValueError):
    """The export could not produce a model that meets the contract; the message says which part."""


# ---------------------------------------------------------------------------------------------
# The manifest's descriptive parts
# ---------------------------------------------------------------------------------------------


def piece_meanings() -> dict[str, str]:
    """Each observation piece's meaning, read from the table in ``hearts_env.observe``'s docstring
    (the one place the pieces are described)."""
    doc = observe.__doc__ or ""
    lines = doc.splitlines()
    rules_at = [i for i, line in enumerate(lines) if re.fullmatch(r"=+( +=+)+", line.strip())]
    if len(rules_at) < 3:
        raise ExportError("hearts_env.observe's docstring lost its layout table")
    header, body_end = rules_at[0], rules_at[2]
    meaning_col = [m.start() for m in re.finditer("=+", lines[header])][2]
    meanings: dict[str, str] = {}
    current = None
    for line in lines[rules_at[1] + 1: body_end]:
        if not line.strip():
            continue
        if not line[0].isspace():
            current = line.split()[0]
            meanings[current] = line[meaning_col:].strip()
        elif current is not None:
            meanings[current] += " " + line.strip()
    missing = set(observe.OBSERVATION_LAYOUT) - set(meanings)
    if missing:
        raise ExportError(f"hearts_env.observe's layout table does not describe {', '.join(sorted(missing))}")
    return meanings


def observation_section() -> dict[str, Any]:
    meanings = piece_meanings()
    layout = [{**entry, "meaning": meanings[entry["name"]]} for entry in layout_entries()]
    return {
        "version": observe.OBS_VERSION,
        "dimension": observe.OBS_DIM,
        "dtype": "float32",
        "relative_seats": "card rows of per-seat pieces are relative to the observing seat: 0 me, 1 left "
                          "(next to play after me), 2 across, 3 right; with two players rows 2 and 3 stay zero",
        "layout": layout,
        "rule_flags": list(observe.RULE_FLAGS),
    }


def card_section() -> dict[str, Any]:
    return {
        "encoding": "id = 13 * suit + rank",
        "suits": list(cards.SUIT_CHARS),
        "suit_names": list(cards.SUIT_NAMES),
        "ranks": list(cards.RANK_CHARS),
        "ids": [cards.card_text(c) for c in range(cards.NUM_CARDS)],
        "text": "rank 23456789TJQKA then suit CDHS (QS, TH); parsers also accept 10H, q♠ and lower case",
    }


def seat_section() -> dict[str, Any]:
    return {
        "order": "seats 0..N-1 in clockwise play order; a game app's human (South) is seat 0",
        "pass_offsets": {"left": 1, "across": 2, "right": -1, "none": 0},
        "pass": "passing left = to seat+1, across = seat+2, right = seat-1 (mod N)",
    }


# ---------------------------------------------------------------------------------------------
# The export
# ---------------------------------------------------------------------------------------------


def exportable(net):
    """``net`` as the exported graph computes it: ``(observation, action_mask) -> (action, probabilities)``."""
    import torch  # the export extra (see the module docstring)

    class ExportedPolicy(torch.nn.Module):
        """``(observation, action_mask) -> (action, probabilities)`` around a PolicyNet."""

        def __init__(self, inner):
            super().__init__()
            self.net = inner

        def forward(self, observation, action_mask):
            logits, _ = self.net(observation, action_mask)
            action, prob = torch.argmax(logits, dim=-1), torch.softmax(logits, dim=-1)
            # No legal card: action -1 and zero probabilities (else argmax says card 0). Rows with a
            # legal card pass through unchanged.
            any_legal = action_mask.to(torch.int32).sum(dim=-1) > 0
            return (torch.where(any_legal, action, torch.full_like(action, NO_ACTION)),
                    torch.where(any_legal.unsqueeze(-1), prob, torch.zeros_like(prob)))

    return ExportedPolicy(net).eval()


def _torch_export(net, path: Path) -> str:
    """Write the ONNX file with torch's exporter; returns a description of the exporter used."""
    import torch  # the export extra

    module = exportable(net)
    example = (torch.zeros(2, observe.OBS_DIM), torch.ones(2, cards.NUM_CARDS, dtype=torch.bool))
    batch = torch.export.Dim("batch")
    chatter = io.StringIO()
    quiet = logging.getLogger("torch.onnx")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module, example, str(path), input_names=["observation", "action_mask"],
                output_names=["action", "probabilities"], opset_version=OPSET, dynamo=True,
                external_data=False, verbose=False,
                dynamic_shapes={"observation": {0: batch}, "action_mask": {0: batch}},
            )
    except Exception as err:
        raise ExportError(f"torch.onnx.export failed: {type(err).__name__}: {err}\n{chatter.getvalue()[-2000:]}") from None
    finally:
        quiet.setLevel(level)
    return f"torch.onnx.export(dynamo=True) torch {torch.__version__}"


def _finish_model(path: Path, rules: Rules, space: RuleSpace, checkpoint_name: str) -> None:
    """Check the exported graph against the contract, add metadata, save as one file."""
    import onnx  # the export extra

    model = onnx.load(str(path))
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            raise ExportError(f"{path}: the exporter wrote weights to an external file")
    opset = {o.domain: o.version for o in model.opset_import}.get("", None)
    if opset != OPSET:
        raise ExportError(f"{path}: opset {opset}, expected {OPSET}")

    def signature(values):
        out = []
        for v in values:
            t = v.type.tensor_type
            dims = [d.dim_param or d.dim_value for d in t.shape.dim]
            out.append((v.name, onnx.TensorProto.DataType.Name(t.elem_type), dims))
        return out

    inputs, outputs = signature(model.graph.input), signature(model.graph.output)
    want_in = [("observation", "FLOAT", observe.OBS_DIM), ("action_mask", "BOOL", cards.NUM_CARDS)]
    want_out = [("action", "INT64", None), ("probabilities", "FLOAT", cards.NUM_CARDS)]
    for got, want in ((inputs, want_in), (outputs, want_out)):
        names = [(n, t) for n, t, _ in got]
        if names != [(n, t) for n, t, _ in want]:
            raise ExportError(f"{path}: graph signature {got}, expected {want}")
        for (_, _, dims), (_, _, width) in zip(got, want):
            if not dims or not isinstance(dims[0], str) or (width is not None and dims[1:] != [width]):
                raise ExportError(f"{path}: shapes {got}: the batch dimension must be dynamic")
    onnx.checker.check_model(model)
    del model.metadata_props[:]
    for key, value in {
        "format": MANIFEST_FORMAT,
        "obs_version": str(observe.OBS_VERSION),
        "obs_dim": str(observe.OBS_DIM),
        "rules": json.dumps(rules.to_dict(), sort_keys=True),
        "rule_space": json.dumps(space.to_dict(), sort_keys=True),
        "checkpoint": checkpoint_name,
    }.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = META_PREFIX + key, value
    model.doc_string = (
        "Hearts Lab policy: observation float32[N, D] (observation v1) and action_mask bool[N, 52] -> "
        "action int64[N] (most probable legal card id, 13*suit+rank) and probabilities float32[N, 52]. "
        "See the JSON manifest beside this file."
    )
    onnx.save(model, str(path))
    stray = path.with_name(path.name + ".data")
    if stray.exists():
        stray.unlink()


def verify(net, model_path: Path, rules: Rules, decisions: int = 512, seed: int = 0) -> dict[str, Any]:
    """onnxruntime against torch on ``decisions`` real game states: actions equal, probabilities close."""
    import torch  # the export extra

    obs, masks = [], []
    for state in sample_states(rules, max(1, decisions // (rules.hand_size + 3) + 1), seed=seed + 99):
        obs.append(observe.observe(state)[0])
        masks.append(engine.legal_mask(state)[0])
    obs, masks = np.stack(obs)[:decisions], np.stack(masks)[:decisions]
    with torch.no_grad():
        t_action, t_prob = exportable(net)(torch.from_numpy(obs), torch.from_numpy(masks))
    import onnxruntime  # the export extra; a bare session: the manifest that OnnxPolicyAgent checks is written after this

    session = onnxruntime.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    o_action, o_prob = session.run(["action", "probabilities"], {"observation": obs, "action_mask": masks})
    same = bool(np.array_equal(o_action, t_action.numpy()))
    diff = float(np.abs(o_prob - t_prob.numpy()).max())
    legal = bool(masks[np.arange(len(o_action)), o_action].all())
    if not (same and legal and diff < 1e-5):
        raise ExportError(
            f"{model_path}: onnxruntime disagrees with torch (actions equal: {same}, legal: {legal}, "
            f"largest probability difference {diff:.2e})"
        )
    # An empty mask (second row) gives the documented signal; the row beside it is untouched.
    pair, empty = np.repeat(obs[:1], 2, axis=0), np.repeat(masks[:1], 2, axis=0)
    empty[1] = False
    e_action, e_prob = session.run(["action", "probabilities"], {"observation": pair, "action_mask": empty})
    if not (e_action[1] == NO_ACTION and (e_prob[1] == 0).all() and e_action[0] == o_action[0]):
        raise ExportError(f"{model_path}: an all-false action mask gives action {e_action[1]} and probabilities "
                          f"summing to {e_prob[1].sum():.3g}, expected {NO_ACTION} and 0")
    return {"decisions": int(len(obs)), "actions_equal": same, "max_probability_difference": diff,
            "no_legal_card": True, "onnxruntime": onnxruntime.__version__}


def _arena_section(checkpoint: Path, arena_results: str | Path | None) -> dict[str, Any] | None:
    """Arena results, when known: a given results.json, else the run's summary.json beside the checkpoint."""
    if arena_results is not None:
        if Path(arena_results).exists() and not Path(arena_results).is_file():  # a folder, a device (/dev/zero)
            raise ExportError(f"--arena-results {arena_results}: not a file; name the results.json of `hearts "
                              "arena --out`")
        try:
            data = json.loads(Path(arena_results).read_text())
        except (OSError, ValueError, RecursionError) as err:  # (not UTF-8, not JSON, a number too long, too deep)
            why = ("nested too deeply" if isinstance(err, RecursionError) else
                   "a number of more than 4,300 digits" if "integer string conversion" in str(err) else err)
            raise ExportError(f"--arena-results {arena_results}: not a readable results.json of `hearts arena "
                              f"--out` ({why})") from None
        if not isinstance(data, dict):
            raise ExportError(f"--arena-results {arena_results}: not a results.json of `hearts arena --out` "
                              f"(it holds a {type(data).__name__}, not an object)")
        return {"source": str(arena_results), "meta": data.get("meta"), "leaderboard": data.get("leaderboard")}
    for folder in (checkpoint.parent, checkpoint.parent.parent):
        summary = folder / "summary.json"
        if summary.is_file():
            try:
                data = json.loads(summary.read_text())
            except (ValueError, RecursionError):  # (not UTF-8, not JSON, too deep: no figures to record)
                continue
            if isinstance(data, dict) and data.get("eval"):
                return {"source": str(summary), "points_per_hand_vs": data["eval"]}
    return None


def export_policy(checkpoint: str | Path, out_dir: str | Path, *, golden: int = 40,
                  arena_results: str | Path | None = None, verify_decisions: int = 512) -> dict[str, Path]:
    """Export a checkpoint to ``out_dir``; returns the paths written (model, manifest, golden).

    The files are made in a staging folder inside ``out_dir`` and moved into place only when all of
    them are made and checked, so a failed export leaves an earlier export there as it was (never a
    model beside another model's manifest)."""
    from agents.checkpoint import load_net  # imports torch (the export extra)

    checkpoint = Path(checkpoint)
    net, meta = load_net(checkpoint)
    net = net.eval()
    rules = Rules.from_dict(meta["rules"])
    space = space_of(meta, rules)  # checked when the checkpoint was loaded
    arena = _arena_section(checkpoint, arena_results)  # first: a bad --arena-results stops it before any file
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out} is a file; name a folder for the exported files")
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=out))
    try:
        try:
            made = _export_files(net, meta, rules, space, checkpoint, staging, golden, arena, verify_decisions)
        except ExportError as err:  # named by the file the user would have had, not the staging copy
            raise ExportError(str(err).replace(str(staging), str(out))) from None
        written = {}
        for kind, path in made.items():
            written[kind] = out / path.name
            os.replace(path, written[kind])
        if "golden" not in made:  # an earlier export's test vectors would not match this model
            (out / GOLDEN_FILE).unlink(missing_ok=True)
        return written
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _export_files(net, meta: dict, rules: Rules, space: RuleSpace, checkpoint: Path, out: Path, golden_records: int,
                  arena: dict[str, Any] | None, verify_decisions: int) -> dict[str, Path]:
    model_path = out / MODEL_FILE
    exporter = _torch_export(net, model_path)
    _finish_model(model_path, rules, space, checkpoint.name)
    checks = verify(net, model_path, rules, verify_decisions)
    provenance = {
        "checkpoint": str(checkpoint),
        "checkpoint_sha256": sha256_file(checkpoint),
        "exported_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "exporter": exporter,
        "network": {"kind": "PolicyNet", "hidden": meta.get("hidden"), "card_scorer": meta.get("card_scorer", 0)},
        "training": {k: meta.get(k) for k in ("iteration", "learner_decisions", "all_decisions", "seconds",
                                               "imitated") if k in meta},
        "config": meta.get("config"),
        "distilled": meta.get("distilled"),  # rounds of `hearts distill fit` after the training run, if any
        "arena": arena,
    }
    manifest = {
        "format": MANIFEST_FORMAT,
        "format_version": MANIFEST_VERSION,
        "model": {
            "file": MODEL_FILE,
            "sha256": sha256_file(model_path),
            "opset": OPSET,
            "inputs": [
                {"name": "observation", "dtype": "float32", "shape": ["N", observe.OBS_DIM]},
                {"name": "action_mask", "dtype": "bool", "shape": ["N", cards.NUM_CARDS],
                 "meaning": "true for each legal card id"},
            ],
            "outputs": [
                {"name": "action", "dtype": "int64", "shape": ["N"],
                 "meaning": f"card id of the most probable legal card (the first on a tie); {NO_ACTION} "
                            "when the row's action_mask has no legal card"},
                {"name": "probabilities", "dtype": "float32", "shape": ["N", cards.NUM_CARDS],
                 "meaning": "the policy's probability of each card; 0 for illegal cards, all 0 when the "
                            "row's action_mask has no legal card"},
            ],
            "masked_logit": -1e9,
            "no_legal_card": {"action": NO_ACTION, "probabilities": 0},
        },
        "observation": observation_section(),
        "cards": card_section(),
        "seats": seat_section(),
        "rules": rules.to_dict(),
        "rule_space": space.to_dict(),
        "record": {"format": seat_record.RECORD_FORMAT, "version": seat_record.RECORD_VERSION,
                   "doc": "docs/export.md"},
        "verified": checks,
        "provenance": provenance,
    }
    manifest_path = out / MANIFEST_FILE
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
    written = {"model": model_path, "manifest": manifest_path}
    if golden_records:
        written["golden"] = write_golden(out / GOLDEN_FILE, model_path, space_records(rules, space, golden_records),
                                         encoder_records(rules), invalid_records())
    return written
