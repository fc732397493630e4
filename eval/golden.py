"""Golden test vectors for game-app clients (the JavaScript reference client checks itself on them).

``python -m eval.golden DIR`` writes, into ``DIR``:

* ``policy.pt``: a small, seeded policy (``PolicyNet(hidden=[32])``, classic rules);
* ``policy.onnx`` and ``policy.json``: its export (``eval.export.export_policy``);
* ``golden.json``: classic seat records with their observation, legal mask, and the model's action and
  probabilities; records of other rule sets with observation and mask only (two-player, J♦ bonus and
  Q♠ variants, open hearts, quick); and invalid records, each with the error ``hearts_env.seat_record``
  raises for it (``hearts export`` writes the same encoder and invalid records, from here);
* ``sample_record.json``: one mid-hand record, the web page's default.

``clients/js/test/fixtures`` holds a committed copy (so ``npm test`` runs without Python);
``tests/test_export.py`` checks it is still what Python computes, and runs the JavaScript tests on
freshly generated vectors too.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from hearts_env import seat_record
from hearts_env.rules import Rules

from . import export


def small_policy(path: str | Path, seed: int = 0, rules: Rules | None = None) -> Path:
    """Save a small seeded ``PolicyNet(hidden=[32])`` checkpoint (untrained: a stand-in policy)."""
    import torch

    from agents.checkpoint import save
    from agents.policy import PolicyNet

    torch.manual_seed(seed)
    net = PolicyNet(hidden=[32])
    # Larger output weights than a fresh net's (gain 0.01), so the probabilities are far from uniform.
    with torch.no_grad():
        net.policy_head.weight.mul_(100.0)
    rules = rules or Rules.preset("classic")
    return save(path, net, {"rules": rules.to_dict(), "iteration": 0, "learner_decisions": 0,
                            "note": "golden-vector stand-in policy (untrained)"})


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
            for record in export.sample_records(variant, per_variant, seed=seed + 1 + i, games=2)]


def make_fixtures(out_dir: str | Path, model_records: int = 40, seed: int = 0) -> dict[str, Path]:
    """The small policy, its export and the golden vectors, all in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint = small_policy(out / "policy.pt", seed)
    written = export.export_policy(checkpoint, out, golden=0, verify_decisions=256)
    written.update(write_vectors(out, model_records, seed))
    written["checkpoint"] = checkpoint
    return written


def write_vectors(out_dir: str | Path, model_records: int = 40, seed: int = 0,
                  records_per_variant: int = 12) -> dict[str, Path]:
    """``golden.json`` and ``sample_record.json`` for the exported classic policy in ``out_dir``."""
    out = Path(out_dir)
    rules = Rules.preset("classic")
    records = export.sample_records(rules, model_records, seed=seed)
    golden = export.write_golden(out / export.GOLDEN_FILE, out / export.MODEL_FILE, records,
                                 encoder_records(rules, records_per_variant, seed), invalid_records())
    # The web page's sample: a mid-hand decision with a card on the table and the widest choice.
    candidates = [r for r in records if r["phase"] == "play" and r["trick"]["cards"]]
    sample = max(candidates, key=lambda r: (int(seat_record.legal_mask(r).sum()), len(r["tricks"])))
    (out / "sample_record.json").write_text(json.dumps(sample, indent=2) + "\n")
    return {"golden": golden, "sample": out / "sample_record.json"}


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m eval.golden OUT_DIR   (e.g. clients/js/test/fixtures)")
    written = make_fixtures(sys.argv[1])
    written.pop("checkpoint").unlink()  # the committed fixtures need only the export
    for kind, path in written.items():
        print(f"{kind}: {path}")
