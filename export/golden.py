"""Golden test vectors: what a game app checks its own encoder and runtime on (``golden.json``).

``write_golden(path, model_path, records, encoder_records, invalid)`` writes

* ``cases``: seat records of the policy's rules with their observation vectors, legal masks and the
  model's action and probabilities (the model run through onnxruntime: ``agents.onnx_policy``);
* ``encoder_cases``: records of other rule sets (two-player, J♦ bonus and Q♠ variants, open hearts,
  quick, classic) with observation and mask only (:func:`encoder_records`);
* ``invalid``: records that must be refused, each with the error ``hearts_env.seat_record`` raises for
  it (:func:`invalid_records`).

Observations and masks are computed through ``hearts_env.seat_record``; the records are sampled from
real games (``export.situations``). ``hearts export`` writes a ``golden.json`` beside each model
(``export.model``), and ``python -m export.fixtures DIR`` the JavaScript client's committed copy.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from agents.base import sha256_file
from agents.onnx_policy import OnnxPolicyAgent
from hearts_env import cards, observe, seat_record
from hearts_env.rules import Rules

from .situations import sample_records

GOLDEN_FILE = "golden.json"
GOLDEN_FORMAT = "hearts-lab-golden"


def variant_rules() -> list[Rules]:
    classic = Rules.preset("classic")
    return [
        Rules.preset("two_player"),
        classic.replace(name="jack_queen", jack_of_diamonds_bonus=True, queen_breaks_hearts=True,
                        queen_waits_for_hearts=True, moon="shooters_choice"),
        classic.replace(name="open_hearts", hearts_must_be_broken=False, first_trick_protection=False,
                        pass_cycle=["across", "left"], moon="off"),
        Rules.preset("quick"),
    ]


def _invalid_cases() -> list[tuple[str, dict, str]]:
    """``(name, record, phrase)``: records that must be refused, each with a phrase of its error."""
    rules = Rules.preset("classic").to_dict()

    def record(**fields):
        base = {"version": 1, "rules": rules, "seat": 0, "hand_number": 3, "scores": [0, 0, 0, 0],
                "phase": "play", "hand": [], "passed": [], "received": [], "tricks": [],
                "trick": {"leader": 0, "cards": []}}
        base.update(fields)
        return base

    def without(rec, key):
        return {k: v for k, v in rec.items() if k != key}

    clubs = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC".split()
    diamonds_11 = "2D 4D 5D 6D 7D 8D 9D TD JD QD KD".split()
    history = [{"leader": 0, "cards": ["2C", "3D", "4C", "5C"]},  # seat 1 does not follow clubs ...
               {"leader": 3, "cards": ["6C", "7C", "8C", "9C"]}]  # ... yet plays 8C afterwards
    # Seat 3 wins the first trick and leads a heart although it holds a club (it plays 7C later).
    hearts_early = [{"leader": 0, "cards": ["2C", "3C", "4C", "5C"]}, {"leader": 3, "cards": ["2H", "6C", "3H", "4H"]}]
    return [
        # Malformed: the record's fields.
        ("missing key", without(record(hand=clubs), "hand"), "missing hand"),
        ("unknown key", {**record(hand=clubs), "trikcs": []}, "unknown key(s) trikcs"),
        ("unsupported record version", {**record(hand=clubs), "version": 2}, "version"),
        ("seat out of range", record(seat=4, hand=clubs), "seat must be 0..3"),
        ("scores for the wrong number of seats", record(hand=clubs, scores=[0, 0, 0]), "scores must be 4 integers"),
        ("not a card", record(hand=clubs[1:] + ["1X"]), "is not a card"),
        ("a card listed twice in the hand", record(hand=clubs[1:] + ["3C"]), "3C is listed twice"),
        ("a card outside the deck", {**record(hand=clubs), "rules": Rules.preset("two_player").to_dict(),
                                     "scores": [0, 0], "hand_number": 0}, "not in this game's deck"),
        # Impossible: card counts and places.
        ("13 cards missing", record(hand=[]), "13 missing"),
        ("a card too many", record(hand=clubs + ["2D"]), "1 too many"),
        ("a card twice", record(hand=clubs[1:] + ["2D"], tricks=[{"leader": 0, "cards": ["2C", "2D", "4D", "5D"]}]),
         "appears twice"),
        ("a finished trick of three cards", record(hand=clubs[1:], tricks=[{"leader": 0, "cards": ["2C", "2D", "3D"]}]),
         "tricks[0] has 3 cards"),
        ("too many pass picks", record(hand_number=0, phase="pass", hand=clubs, passed=["2C", "3C", "4C"], trick=None),
         "already chosen"),
        ("passed card played by another seat",
         record(hand_number=0, hand="4C 6C 7C 8C 9C TC JC QC KC AC 2D 3D".split(), passed=["AS", "KS", "QS"],
                received=["2D", "3D", "AC"], tricks=[{"leader": 0, "cards": ["2C", "3C", "QS", "5C"]}],
                trick={"leader": 0, "cards": []}),
         "QS was passed to seat 1 but is played by seat 2"),
        # Impossible: a history the rules do not allow.
        ("did not follow suit while holding the suit", record(hand=diamonds_11, tricks=history,
                                                              trick={"leader": 2, "cards": ["TC", "JC"]}),
         "seat 1 cannot play 3D"),
        ("hearts led before they were broken",
         record(hand=clubs[6:] + ["2D", "3D", "4D", "5D"], tricks=hearts_early,
                trick={"leader": 2, "cards": ["5H", "7C"]}),
         "seat 3 cannot play 2H"),
        ("a trick led by the wrong seat", record(hand=diamonds_11 + ["AH"], tricks=[history[0]],
                                                 trick={"leader": 2, "cards": ["6C", "7C"]}),
         "but seat 3 led"),
        ("no consistent place for the unseen cards",
         record(hand=clubs[1:12] + ["6D"], tricks=[{"leader": 0, "cards": ["2C", "3D", "4D", "5D"]}]),
         "fits no seat"),
        ("not this seat's turn", record(seat=1, hand=clubs[1:] + ["2D"], trick={"leader": 1, "cards": []}),
         "holder of 2C leads"),
    ]


def invalid_records() -> list[dict]:
    """Records that must be refused: ``name``, ``record``, ``message`` (the full error
    ``hearts_env.seat_record`` raises, which the JavaScript client repeats word for word) and
    ``error`` (a phrase of it that names the problem). Raises ``ValueError`` when the validator
    accepts a case or words it without the phrase (the list then no longer says what it claims)."""
    out = []
    for name, rec, phrase in _invalid_cases():
        rec = copy.deepcopy(rec)
        if rec.get("trick", 0) is None:
            del rec["trick"]
        try:
            seat_record.observation(rec)
        except seat_record.SeatRecordError as err:
            message = str(err)
        else:
            raise ValueError(f"invalid record {name!r} is accepted by hearts_env.seat_record")
        if phrase not in message:
            raise ValueError(f"invalid record {name!r}: the error {message!r} does not say {phrase!r}")
        out.append({"name": name, "record": rec, "error": phrase, "message": message})
    return out


def encoder_records(rules: Rules, per_variant: int = 12, seed: int = 0) -> list[dict]:
    """Records of rule sets other than ``rules`` (the variants and classic), ``per_variant`` each:
    test vectors for an encoder, which must handle every rule set, not only the policy's."""
    def key(r: Rules) -> dict:
        return {k: v for k, v in r.to_dict().items() if k != "name"}

    variants = [*variant_rules(), Rules.preset("classic")]
    return [record for i, variant in enumerate(variants) if key(variant) != key(rules)
            for record in sample_records(variant, per_variant, seed=seed + 1 + i, games=2)]


def _number(x: np.floating) -> float | int:
    """A float32 value for JSON: whole numbers as integers (shorter), others as the exact double."""
    value = float(x)
    return int(value) if value.is_integer() else value


def golden_case(record: dict, agent: OnnxPolicyAgent | None) -> dict[str, Any]:
    obs = seat_record.observation(record)
    mask = seat_record.legal_mask(record)
    case: dict[str, Any] = {
        "record": record,
        "observation": [_number(x) for x in obs],
        "mask": [int(m) for m in mask],
    }
    if agent is not None:
        action, prob = agent.policy(obs[None], mask[None])
        case["action"] = int(action[0])
        case["card"] = cards.card_text(int(action[0]))
        case["probabilities"] = [float(x) for x in prob[0]]
    return case


def write_golden(path: str | Path, model_path: str | Path, records: Sequence[dict],
                 encoder_records: Sequence[dict] = (), invalid: Sequence[dict] = ()) -> Path:
    """Write golden test vectors: model cases (record, observation, mask, action, probabilities),
    encoder-only cases (other rules: record, observation, mask) and invalid records (name, record,
    message, error: :func:`invalid_records`)."""
    agent = OnnxPolicyAgent(model_path)
    data = {
        "format": GOLDEN_FORMAT,
        "version": 1,
        "model": Path(model_path).name,
        "model_sha256": sha256_file(model_path),
        "observation_version": observe.OBS_VERSION,
        "cases": [golden_case(r, agent) for r in records],
        "encoder_cases": [golden_case(r, None) for r in encoder_records],
        "invalid": list(invalid),
    }
    path = Path(path)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    return path
