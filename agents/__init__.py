"""Agents: the batched agent protocol (``act(observation, action_mask) -> actions``) and ``make(spec)``.

Shipped: ``random``, the heuristic bots ``easy``, ``normal``, ``hard``, the trained policies
``ppo-classic`` and ``ppo-two-player`` (``agents/policies``; torch needed: ``pip install .[train]``),
and Monte Carlo search players (``agents/search.py``): ``expert``, the fast one, searching the cards
``ppo-classic`` rates highest over a budget of deals sampled by a belief model of where the unseen
cards are (``agents/belief.py``; ``expert:N``: N deals; built by :func:`expert_player`, which
distillation's expert teacher uses too), ``expert-value``, the same search with each sampled deal
played three tricks on and then valued by a value model of whole deals (``agents/value.py``;
``expert-value:N``), and the slow ``search``, over the hard bot, ``search-normal``, over the
normal bot, and ``ppo-classic-search``, every legal card over 64 deals. The search players over
``ppo-classic`` play its passes and model the other seats as hard bots in their rollouts.

Your own code is a spec too: ``FILE.py:NAME`` or ``MODULE:NAME`` names an agent, an agent class or
factory (given ``rules=``/``seed=`` if it takes them) or a play function; ``make`` runs that code
(see :func:`agents.base.load_user_agent`). :func:`is_code_spec` tells such specs apart, for callers
that build agents from specs read from files that may come from anyone (a saved game refuses them).
"""

from . import heuristic, random_agent  # noqa: F401  (register "easy", "normal", "hard", "random")
from pathlib import Path

from .base import (Agent, AgentSpecError, FunctionAgent, SlowPlayerError, available, builtin, is_code_spec, is_slow,
                   make, make_table_player, register,
                   register_prefix)
from hearts_env.rule_space import RuleSpace
from hearts_env.rules import Rules
from .onnx_policy import load_onnx_policy  # (onnxruntime itself is imported when a model is loaded)
from .search import SearchAgent

#: Trained policies shipped with the project: spec -> (file under agents/policies, rules preset).
SHIPPED_POLICIES = {
    "ppo-classic": ("ppo_classic.pt", "classic"),
    "ppo-two-player": ("ppo_two_player.pt", "two_player"),
}
POLICY_DIR = Path(__file__).parent / "policies"


def _checkpoint_agent(path: str, seed, rules):
    from .checkpoint import load_policy  # torch (the train extra) is imported only when a checkpoint is used

    return load_policy(path, rules=rules, seed=seed)


def _onnx_agent(path: str, seed, rules):
    return load_onnx_policy(path, rules=rules)


def _shipped(filename: str):
    def factory(seed):
        from .checkpoint import load_policy  # torch (the train extra)

        return load_policy(POLICY_DIR / filename, seed=seed)

    return factory


#: The difficulty ladder's levels (``hearts export --ladder``, ``docs/export.md``), easiest first:
#: ``level:easy``, ``level:normal`` and ``level:hard`` are networks trained to play like those bots
#: (``agents/policies/levels/<ladder>_<level>.pt``), ``level:strong`` the best network. Each ladder
#: (classic, two_player) has its own networks, each covering its rule family (every option the game
#: offers, ``hearts_env/rule_space.py``): the rules pick the ladder. A level may have several
#: networks, tried in order (:data:`STRONG_FIRST`); the last covers the whole family.
LEVEL_NAMES = ("easy", "normal", "hard", "strong")
LEVEL_DIR = POLICY_DIR / "levels"
LADDER_NAMES = ("classic", "two_player")
#: The networks the strong level tries before its family's, by measurement (docs/export.md "Levels"):
#: at the classic rules ``ppo-classic``, which the family's network does not match there, and with
#: the moon off a network trained on from the family's at those rule sets alone, then improved by
#: rounds of rollout labels (in the classic game that one plays where J♦ scores nothing, the PPO
#: network where it counts −10).
STRONG_FIRST = {"classic": (POLICY_DIR / "ppo_classic.pt", LEVEL_DIR / "classic_strong_moon_off.pt",
                            LEVEL_DIR / "classic_strong_moon_off_ppo.pt"),
                "two_player": (LEVEL_DIR / "two_player_strong_moon_off.pt",)}


def level_files(ladder: str, level: str) -> list[Path]:
    """The weights of ``level`` in ``ladder`` (one of :data:`LADDER_NAMES`), in the order they are
    tried: the first whose rule space covers the game's rules plays."""
    family = LEVEL_DIR / f"{ladder}_{level}.pt"
    return [*STRONG_FIRST[ladder], family] if level == "strong" else [family]


def level_file(ladder: str, level: str) -> Path:
    """The network of ``level`` in ``ladder`` that covers the ladder's whole rule family."""
    return level_files(ladder, level)[-1]


def _level_agent(name: str, seed, rules):
    from .checkpoint import CheckpointError, load_policy  # torch (the train extra)

    if name not in LEVEL_NAMES:
        raise AgentSpecError(f"level:NAME takes one of {', '.join(LEVEL_NAMES)}, got level:{name}")
    refusals: list[tuple[str, str]] = []  # (ladder, why), network by network
    for ladder in LADDER_NAMES:  # the first network, ladder by ladder, whose rule space covers these rules
        for path in level_files(ladder, name):
            if not path.is_file():
                continue
            try:
                agent = load_policy(path, rules=rules, seed=seed)
            except CheckpointError as err:
                refusals.append((ladder, str(err).partition(" rules: ")[2] or str(err)))
                continue
            agent.name = f"level:{name}"
            return agent
    # The widest network's refusal says best what is missing: the last one of the ladder of the same
    # number of players (its family's), else the last one.
    players = None if rules is None else Rules.resolve(rules).num_players
    same = [why for ladder, why in refusals if RuleSpace.family(ladder).base.num_players == players]
    detail = (same or [why for _, why in refusals] or [""])[-1]
    raise AgentSpecError(f"level:{name} has no network for these rules" + (f": {detail}" if detail else ""))


register_prefix("ckpt:", _checkpoint_agent, file="checkpoint")
register_prefix("onnx:", _onnx_agent, file="ONNX model")
register_prefix("level:", _level_agent, argument="NAME")
_installed_policies: set[str] = set()  # shipped policies whose file is present
for _spec, (_file, _preset) in SHIPPED_POLICIES.items():
    if (POLICY_DIR / _file).is_file():
        register(_spec, _shipped(_file), rules=_preset)
        _installed_policies.add(_spec)

__all__ = ["Agent", "AgentSpecError", "EXPERT_VALUE", "FunctionAgent", "SHIPPED_POLICIES", "SlowPlayerError",
           "available", "builtin", "expert_player", "is_code_spec", "is_slow", "make", "make_table_player", "register",
           "register_prefix"]


def _search(seed):
    return SearchAgent("classic", seed=seed)


register("search", _search, rules="classic", slow=True)


def _search_normal(seed):
    agent = SearchAgent("classic", rollout="normal", seed=seed)
    agent.name = "search(normal)"
    return agent


# A search player unlike the lab's strong players: its rollouts are the normal bot's, so it makes
# one of the tables a new policy never trained with (the promotion rule, eval/promotion.py).
register("search-normal", _search_normal, rules="classic", slow=True)

#: Sampled deals per decision of ``ppo-classic-search``: more deals, a stronger and slower player
#: (64 was measured stronger than 32 against hard tables).
POLICY_SEARCH_DETERMINIZATIONS = 64


def _policy_search(seed):
    policy = make("ppo-classic", seed=seed)  # loaded once: it plays the later cards and the passes
    agent = SearchAgent("classic", rollout="hard", own=policy, base=policy,
                        determinizations=POLICY_SEARCH_DETERMINIZATIONS, seed=seed)
    agent.name = f"search(ppo-classic over hard, {POLICY_SEARCH_DETERMINIZATIONS})"
    return agent


#: The ``expert``'s budget knob: sampled deals per decision (``expert:N`` sets it). Its other
#: settings are fixed: the policy's four most probable cards are searched, a card the policy
#: gives 97% or more is played without searching (about half of the card plays with a choice),
#: and the deals are dealt by the shipped belief model (``agents/belief.py``).
EXPERT_DETERMINIZATIONS = 48
EXPERT_CANDIDATES = 4
EXPERT_CONFIDENT = 0.97
#: The belief model of hard opponents the expert deals its worlds by (``hearts belief``).
EXPERT_BELIEF = POLICY_DIR / "belief_classic.pt"


#: The value model the ``expert-value`` search finishes its sampled deals with (``hearts value``).
EXPERT_VALUE = POLICY_DIR / "value_classic.pt"
#: ``expert-value``'s settings: sampled deals per decision (``expert-value:N`` sets it), and the
#: tricks each deal is played on (the current one and two more) before the value model takes over.
#: Chosen by measurement (docs/strength.md): one trick alone plays no better than the policy.
EXPERT_VALUE_DETERMINIZATIONS = 16
EXPERT_VALUE_LOOKAHEAD = 3


def expert_player(policy, rules="classic", seed=None, determinizations: int = EXPERT_DETERMINIZATIONS,
                  candidates: int = EXPERT_CANDIDATES, confident: float = EXPERT_CONFIDENT, value=None,
                  lookahead: int = EXPERT_VALUE_LOOKAHEAD):
    """The expert: a search player over ``policy`` (a policy agent), which passes, plays the
    searching seat's later cards in the rollouts and picks the cards searched (its ``candidates``
    likeliest; none where it gives its card ``confident`` or more); hard bots play the other seats,
    and the ``determinizations`` worlds per decision are dealt by the belief model
    :data:`EXPERT_BELIEF`. The ``expert`` spec is this over ``ppo-classic``; distillation's expert
    teacher (``train.distill``) is this over its student, narrowed further. With ``value`` (a value
    model or its file) each sampled deal is played ``lookahead`` tricks on (the current one
    included) and the value model gives the rest of the hand (``expert-value``)."""
    if not EXPERT_BELIEF.is_file():
        raise AgentSpecError(f"the expert deals its worlds by the belief model {EXPERT_BELIEF}, which is missing; "
                             "restore it from the repository, or train one with `hearts belief` (docs/training.md)")
    return SearchAgent(rules, rollout="hard", own=policy, base=policy, determinizations=determinizations,
                       seed=seed, candidates=candidates, confident=confident, belief=EXPERT_BELIEF, value=value,
                       lookahead=lookahead)


def _expert(seed, determinizations: int = EXPERT_DETERMINIZATIONS):
    agent = expert_player(make("ppo-classic", seed=seed), "classic", seed=seed, determinizations=determinizations)
    agent.name = f"expert({determinizations})"
    return agent


def _expert_value(seed, determinizations: int = EXPERT_VALUE_DETERMINIZATIONS):
    if not EXPERT_VALUE.is_file():
        raise AgentSpecError(f"expert-value finishes its deals with the value model {EXPERT_VALUE}, which is missing; "
                             "restore it from the repository, or train one with `hearts value` (docs/training.md)")
    agent = expert_player(make("ppo-classic", seed=seed), "classic", seed=seed, determinizations=determinizations,
                          value=EXPERT_VALUE)
    agent.name = f"expert-value({determinizations})"
    return agent


def _with_budget(name: str, factory, example: int):
    """The ``NAME:N`` spec of a search player ``factory(seed, N)``: N sampled deals per decision."""
    def build(text: str, seed, rules):
        if not text.isdigit() or not 1 <= int(text) <= 4096:
            raise AgentSpecError(f"{name}:N takes a whole number of sampled deals from 1 to 4096 (e.g. "
                                 f"{name}:{example}), got {name}:{text}")
        return factory(seed, int(text))
    return build


if "ppo-classic" in _installed_policies:
    register("ppo-classic-search", _policy_search, rules="classic", slow=True)
    register("expert", _expert, rules="classic", slow=True)
    register_prefix("expert:", _with_budget("expert", _expert, 48), argument="N", slow=True, rules="classic")
    register("expert-value", _expert_value, rules="classic", slow=True)
    register_prefix("expert-value:", _with_budget("expert-value", _expert_value, 16), argument="N", slow=True,
                    rules="classic")
