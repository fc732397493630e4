"""The shipped trained policies: they load as agent specs, play legal cards, refuse other rules,
and the committed ONNX export of the classic policy plays exactly like its checkpoint."""

import json
from hashlib import sha256
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import hearts_env as he  # noqa: E402
from agents import SHIPPED_POLICIES, make  # noqa: E402
from hearts_env.observe import observe  # noqa: E402
from tests.test_observe import random_states  # noqa: E402

POLICIES = Path(__file__).resolve().parent.parent / "agents" / "policies"


@pytest.mark.parametrize("spec", list(SHIPPED_POLICIES))
def test_shipped_policy_plays_legal_cards_for_its_rules(spec):
    filename, preset = SHIPPED_POLICIES[spec]
    assert (POLICIES / filename).is_file(), f"{filename} is not shipped"
    rules = he.Rules.preset(preset)
    agent = make(spec, rules=rules)
    for steps in (0, 20, 45):
        state = random_states(rules, 64, steps, seed=steps)
        live = ~state.done
        actions = agent.act(observe(state)[live], he.legal_mask(state)[live])
        assert he.legal_mask(state)[live][np.arange(live.sum()), actions].all()
    other = "two_player" if preset == "classic" else "classic"
    with pytest.raises(ValueError, match="trained for"):
        make(spec, rules=he.Rules.preset(other))
    # The same by file, the rules named by their preset: refused, naming both.
    with pytest.raises(ValueError, match=f"trained for the '{preset}' rules and cannot play the '{other}' rules: "
                                         "num_players"):
        make(f"ckpt:{POLICIES / filename}", rules=other)
    with pytest.raises(ValueError, match="unknown rules preset 'speedy'"):
        make(f"ckpt:{POLICIES / filename}", rules="speedy")


def test_committed_export_of_the_classic_policy_matches_its_checkpoint():
    pytest.importorskip("onnxruntime")
    folder = POLICIES / "ppo_classic"
    manifest = json.loads((folder / "policy.json").read_text())
    assert manifest["model"]["sha256"] == sha256((folder / "policy.onnx").read_bytes()).hexdigest()
    rules = he.Rules.preset("classic")
    torch_agent = make("ppo-classic", rules=rules)
    onnx_agent = make(f"onnx:{folder / 'policy.onnx'}", rules=rules)
    state = random_states(rules, 256, 30, seed=5)
    live = ~state.done
    obs, mask = observe(state)[live], he.legal_mask(state)[live]
    np.testing.assert_array_equal(torch_agent.act(obs, mask), onnx_agent.act(obs, mask))
