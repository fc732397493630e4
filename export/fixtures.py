"""The JavaScript client's test fixtures: a small policy, its export and golden vectors.

``python -m export.fixtures DIR`` writes, into ``DIR``:

* ``policy.onnx`` and ``policy.json``: the export (``export.model.export_policy``) of a small, seeded
  policy (``PolicyNet(hidden=[32])``, classic rules; its ``policy.pt`` is made and deleted again);
* ``golden.json``: classic seat records with their observation, legal mask, and the model's action and
  probabilities; records of other rule sets with observation and mask only (two-player, J♦ bonus and
  Q♠ variants, open hearts, quick); and invalid records, each with the error ``hearts_env.seat_record``
  raises for it (``export.golden``; ``hearts export`` writes the same encoder and invalid records);
* ``sample_record.json``: one mid-hand record, the web page's default;
* ``rule_space.json``: rule spaces, rule sets and the refusal Python words for each (:func:`rule_space_cases`).

``clients/js/test/fixtures`` holds a committed copy (so ``npm test`` runs without Python);
``tests/test_export.py`` checks it is still what Python computes, and runs the JavaScript tests on
freshly generated vectors too.

torch (the export extra) is imported by :func:`small_policy` only, which makes the stand-in policy;
writing vectors for an exported model needs only onnxruntime.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hearts_env import seat_record
from hearts_env.rule_space import FAMILIES, RuleSpace
from hearts_env.rules import PRESETS, Rules

from .golden import GOLDEN_FILE, encoder_records, invalid_records, write_golden
from .model import MODEL_FILE, export_policy
from .situations import sample_records


def small_policy(path: str | Path, seed: int = 0, rules: Rules | None = None) -> Path:
    """Save a small seeded ``PolicyNet(hidden=[32])`` checkpoint (untrained: a stand-in policy)."""
    import torch  # the export extra (see the module docstring), as are the two below

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


def make_fixtures(out_dir: str | Path, model_records: int = 40, seed: int = 0) -> dict[str, Path]:
    """The small policy, its export and the golden vectors, all in ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint = small_policy(out / "policy.pt", seed)
    written = export_policy(checkpoint, out, golden=0, verify_decisions=256)
    written.update(write_vectors(out, model_records, seed))
    written["checkpoint"] = checkpoint
    return written


def write_vectors(out_dir: str | Path, model_records: int = 40, seed: int = 0,
                  records_per_variant: int = 12) -> dict[str, Path]:
    """``golden.json`` and ``sample_record.json`` for the exported classic policy in ``out_dir``."""
    out = Path(out_dir)
    rules = Rules.preset("classic")
    records = sample_records(rules, model_records, seed=seed)
    golden = write_golden(out / GOLDEN_FILE, out / MODEL_FILE, records,
                          encoder_records(rules, records_per_variant, seed), invalid_records())
    # The web page's sample: a mid-hand decision with a card on the table and the widest choice.
    candidates = [r for r in records if r["phase"] == "play" and r["trick"]["cards"]]
    sample = max(candidates, key=lambda r: (int(seat_record.legal_mask(r).sum()), len(r["tricks"])))
    (out / "sample_record.json").write_text(json.dumps(sample, indent=2) + "\n")
    (out / RULE_SPACE_FILE).write_text(json.dumps({"cases": rule_space_cases()}, indent=1) + "\n")
    return {"golden": golden, "sample": out / "sample_record.json", "rule_space": out / RULE_SPACE_FILE}


#: The rule-space golden cases: each space, rule set and Python's refusal (None: covered).
RULE_SPACE_FILE = "rule_space.json"


def rule_space_cases() -> list[dict]:
    """``{"space", "rules", "refusal"}`` for every family and a one-preset space against the presets,
    the held-out combinations and rule sets outside every family: the JavaScript client's
    ``rule_space.js`` must word each refusal as Python does."""
    classic = Rules.preset("classic")
    rule_sets = [*PRESETS.values(), classic.replace(target_score=200), classic.replace(moon="off"),
                 classic.replace(pass_count=2), classic.replace(moon_points=20),
                 Rules.preset("two_player").replace(moon="shooters_choice", target_score=50),
                 *(classic.replace(**combo) for combo in FAMILIES["classic"].held_out)]
    spaces = [*FAMILIES.values(), RuleSpace.point("classic"), RuleSpace.point("two_player")]
    return [{"space": space.to_dict(), "rules": rules.to_dict(), "refusal": space.refusal(rules)}
            for space in spaces for rules in rule_sets]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m export.fixtures OUT_DIR   (e.g. clients/js/test/fixtures)", file=sys.stderr)
        return 2
    written = make_fixtures(argv[0])
    written.pop("checkpoint").unlink()  # the committed fixtures need only the export
    for kind, path in written.items():
        print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
