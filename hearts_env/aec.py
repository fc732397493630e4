"""Hearts as a PettingZoo AEC environment.

Environment card
----------------
================  ===========================================================================
Import            ``from hearts_env import env`` (or ``raw_env``); ``pettingzoo.make("aec", "HeartsLab/hearts-v1")``
Agents            ``player_0`` .. ``player_{N-1}``, N = ``rules.num_players`` (4, or 2); ``player_0`` is South
Action space      ``Discrete(52)``: a card id (``13 * suit + rank``) in every phase and variant
Observation       ``{"observation": float32[OBS_DIM], "action_mask": int8[52]}``; observation v1
                  (``hearts_env.observe``), relative to the observing seat
Action mask       exactly the legal cards of the agent to act; all zeros for every other agent
Passing           three single-card actions by the same agent (seat 0 first); cards move when all chose
Reward            minus the penalty points a hand gave the agent (moon and J♦ applied), at the
                  step that ends the hand; 0 otherwise
Episode           ``episode="hand"`` (default): one hand; its pass direction is drawn from the
                  seed unless ``options["hand_number"]`` fixes it. ``episode="game"``: hands until the
                  target score decides the game (a reward at every hand end)
Render modes      ``"ansi"`` (returns text), ``"human"`` (prints it)
Parallel API      ``pettingzoo.utils.turn_based_aec_to_parallel(env())`` (one agent acts per step);
                  ``is_parallelizable`` is False, so ``aec_to_parallel`` refuses it
================  ===========================================================================

``reset(seed=..., options=...)`` options: ``deal`` (one list of card texts per seat, e.g.
``[["2C", "QS", ...], ...]``), ``hand_number`` (fixes the pass direction), ``scores`` (game totals so
far); any other key raises ``ValueError`` listing these. ``raw_env.step`` refuses an illegal action
with :class:`~hearts_env.engine.IllegalActionError` (naming the card and the legal ones) and leaves
the game unchanged; ``env()`` adds PettingZoo's standard wrappers (an illegal action then ends the
game with reward -1 for the offender).

Version history: v1 (first version, observation v1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import engine
from .observe import observe as encode
from .render import render as render_text
from .rules import Rules
from .state import OVER, as_array
from .spaces import action_mask_box, action_space, observation_box

EPISODES = ("hand", "game")
RESET_OPTIONS = ("deal", "hand_number", "scores")
# PettingZoo's api_test and parallel_api_test call reset(options={"options": 1}) to see that reset
# takes options: that one key is accepted and ignored, so the envs pass them.
_SIGNATURE_PROBE = "options"


def resolve_rules(rules: str | Rules | dict) -> Rules:
    """A ``Rules`` from a preset name, a mapping of options or a ``Rules``."""
    return Rules.resolve(rules)


def check_episode(episode: str) -> str:
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
    return episode


def check_reset_options(options: dict | None, rules: Rules, num_games: int = 1) -> dict:
    """The reset options as a dict, checked before anything changes: an unknown key raises
    ``ValueError`` listing the known ones; ``hand_number`` must be whole numbers 0 or more and
    ``scores`` whole numbers, one per seat (``EngineArgumentError``, a ``ValueError``). With
    ``num_games`` (the vector env's) each may also be given per game: ``[num_games]`` hand numbers,
    ``[num_games, players]`` scores.

    (Every env of the package checks its options here: a misspelled ``deal`` must not quietly play
    a random deal, nor ``hand_number=1.7`` play hand 1.)"""
    options = dict(options or {})
    options.pop(_SIGNATURE_PROBE, None)
    unknown = sorted(set(options) - set(RESET_OPTIONS))
    if unknown:
        raise ValueError(f"unknown reset options {unknown}; known: {', '.join(RESET_OPTIONS)}")
    if "hand_number" in options:
        given = options["hand_number"]
        hand_number = np.asarray(given)
        if hand_number.dtype.kind not in "iu" or hand_number.shape not in ((), (num_games,)) or \
                (hand_number.size and (hand_number.min() < 0 or hand_number.max() >= 2**63)):
            per_game = f", or one per game ({num_games})" if num_games > 1 else ""
            raise engine.EngineArgumentError(
                f"options['hand_number'] must be a whole number 0 or more{per_game}; got {given!r}")
        options["hand_number"] = int(hand_number) if hand_number.ndim == 0 else hand_number.astype(np.int64)
    if "scores" in options:
        scores = np.asarray(options["scores"])
        players = rules.num_players
        if scores.dtype.kind not in "iu" or scores.shape not in ((players,), (num_games, players)):
            per_game = f", or one row per game [{num_games}, {players}]" if num_games > 1 else ""
            raise engine.EngineArgumentError(
                f"options['scores'] must be {players} whole numbers, one per seat{per_game}; "
                f"got {options['scores']!r}")
        options["scores"] = scores.astype(np.int64)
    return options


def env(**kwargs: Any) -> AECEnv:
    """The AEC env with PettingZoo's standard wrapper chain."""
    aec = raw_env(**kwargs)
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=-1)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return wrappers.OrderEnforcingWrapper(aec)


class raw_env(AECEnv):
    """Hearts for 4 (or 2) agents over the batched engine (a batch of one game)."""

    # Not parallelizable in PettingZoo's sense: agents do not act once each per cycle (a seat makes
    # its three pass picks in a row; a trick's winner leads the next), which aec_to_parallel needs.
    metadata = {
        "render_modes": ["human", "ansi"], "name": "hearts_v1", "is_parallelizable": False, "render_fps": 4
    }

    def __init__(self, rules: str | Rules | dict = "classic", episode: str = "hand", render_mode: str | None = None):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.rules = resolve_rules(rules)
        self.episode = check_episode(episode)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.rules.num_players)]
        self.agents = []
        self._observation_space = spaces.Dict({"observation": observation_box(), "action_mask": action_mask_box()})
        self._action_space = action_space()
        self._seed_rng = np.random.default_rng()
        self.state: engine.State | None = None
        # Per-seat arrays made once: a step at batch 1 costs a few microseconds, so allocations count.
        self._seat_of = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self._seat_arrays = [np.array([seat]) for seat in range(self.rules.num_players)]
        self._action = np.zeros(1, dtype=np.int64)

    # ---- spaces ---------------------------------------------------------------------------------

    def observation_space(self, agent: str) -> spaces.Dict:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_space

    # ---- episode --------------------------------------------------------------------------------

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        options = check_reset_options(options, self.rules)  # first: a refused reset changes nothing
        if seed is not None:
            self._seed_rng = np.random.default_rng(seed)
        game_seed = int(self._seed_rng.integers(2**63))
        cycle = len(self.rules.pass_cycle)
        default_hand = int(self._seed_rng.integers(cycle)) if self.episode == "hand" else 0
        hand_number = options.get("hand_number", default_hand)
        single = self.episode == "hand"
        if "deal" in options:
            self.state = engine.from_deal(
                self.rules, options["deal"], hand_number, options.get("scores"), game_seed, single_hand=single
            )
        else:
            self.state = engine.init_from_seeds(self.rules, np.array([game_seed], np.uint64), hand_number, single)
            if "scores" in options:
                self.state.scores[0] = options["scores"]
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.possible_agents[int(self.state.current_player[0])]

    def _check_started(self) -> None:
        if self.state is None:
            raise RuntimeError("the env has no game yet: call reset() first")

    def step(self, action: int | None) -> None:
        self._check_started()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise engine.IllegalActionError(f"{agent} must play a card (0..51), got None")
        action = as_array(action, "action", engine.IllegalActionError)  # (a torch tensor by value)
        # One integer only, and none that int64 would wrap (2**64 - 1 would read as -1): else the engine
        # says what is wrong.
        if action.dtype.kind not in "iu" or action.ndim or (action.dtype.kind == "u" and action >= 2**63):
            engine.step_inplace(self.state, action.reshape((1,) + action.shape))
        np.copyto(self._action, action, casting="unsafe")
        engine.step_inplace(self.state, self._action)  # raises, unchanged, if illegal
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        state = self.state
        if state.hand_over[0]:
            points = state.last_hand_points[0].tolist()
            for seat, name in enumerate(self.possible_agents):
                self.rewards[name] = -float(points[seat])
        if state.phase[0] == OVER:
            self.terminations = dict.fromkeys(self.agents, True)
            seat = (self._seat_of[agent] + 1) % len(self.possible_agents)
        else:
            seat = int(state.current_player[0])
        self.agent_selection = self.possible_agents[seat]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    # ---- views ----------------------------------------------------------------------------------

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._check_started()
        seat = self._seat_of[agent]
        observation = encode(self.state, self._seat_arrays[seat])[0]
        if self.state.current_player[0] == seat:
            mask = engine.legal_mask(self.state)[0].view(np.int8)
        else:
            mask = np.zeros(52, dtype=np.int8)
        return {"observation": observation, "action_mask": mask}

    def render(self) -> str | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        self._check_started()
        text = render_text(self.state, 0)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass
