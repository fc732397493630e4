"""Gymnasium environments: one learner seat against fixed opponents, single and vectorised.

* ``HeartsSeatEnv`` (``gymnasium.make("HeartsLab/Hearts-v1")``): a ``gymnasium.Env`` where the
  learner plays ``seat`` and the other seats are agents given by spec (``"random"``, ``"easy"``, ...,
  or any callable ``f(observation, action_mask) -> actions``). Observation: observation v1,
  ``float32[OBS_DIM]``; action: ``Discrete(52)``; the legal mask is ``info["action_mask"]`` and
  ``action_masks()`` (what sb3-contrib's ``MaskablePPO`` reads).
* ``HeartsVectorEnv`` (``gymnasium.make_vec("HeartsLab/Hearts-v1", num_envs=N)``): the same for N
  games stepped together by the batched engine; opponents act for all games at once.
  ``metadata["autoreset_mode"]`` is ``SAME_STEP``: a game whose episode ends is reset within the
  same ``step``; the returned observation is the new episode's first, and the last observation
  of the finished episode is in ``info["final_obs"]`` (``info["_final_obs"]`` marks which games).
  Same-step, because then every step returns a learner's turn with a non-empty mask in every game
  (next-step autoreset would return a finished game with an all-zero mask, then ignore the action
  taken on it). Gymnasium's vector wrappers that need next-step (``NormalizeObservation`` and the
  other observation wrappers) refuse this env; ``docs/engine.md`` lists the ones that work.

Rewards: minus the learner's penalty points for a hand, at the step in which the hand ends
(whoever played its last card). Episodes are one hand (default; the pass direction is drawn from
the seed) or a whole game (``episode="game"``).

Illegal actions: ``illegal_action="terminate"`` (default) ends the episode with reward
``-illegal_penalty`` (26, a whole hand's points) and ``info["illegal_action"] = True``: every
action of ``Discrete(52)`` is then valid input, as Gymnasium's ``check_env`` and trainers that do
not mask expect (a masked trainer never plays one). ``illegal_action="raise"`` raises
``IllegalActionError`` naming the card and the legal ones, and nothing changes. In every mode an
action must be an integer card id (any integer type): a float or a string raises
``IllegalActionError``, as in the engine.

Reset options: ``deal``, ``hand_number``, ``scores`` (as in the AEC env); any other key raises.
``render_mode``: ``"ansi"`` or ``"human"``; ``gymnasium.make`` warns about any other and ``render()``
then raises ``gymnasium.error.UnsupportedMode`` (Stable-Baselines3's ``make_vec_env`` asks for
``"rgb_array"`` whether it renders or not).
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import cards, engine, loop
from .aec import check_episode, check_reset_options, resolve_rules
from .engine import IllegalActionError
from .observe import observe
from .render import render as render_text
from .rules import Rules
from .spaces import action_space, observation_box
from .state import State, as_array

ILLEGAL_MODES = ("raise", "terminate")
#: An opponent: a spec string (``"hard"``, ``"ckpt:PATH"``, ...), an object with a batched
#: ``act(observation, action_mask)`` or a plain callable ``f(observation, action_mask) -> actions``.
OpponentSpec = Any


def as_opponent(spec: OpponentSpec, seed: int | None, rules: Rules) -> Any:
    """An opponent: an agent object as it is, or what ``agents.make`` builds from a spec string or
    another callable (an agent class or factory, given ``rules=``/``seed=``, or a play function).

    ``agents.make`` is imported here, and only when it is needed: the environment package imports
    nothing above it at module level (DESIGN.md section 4), and an agent object needs nothing.
    """
    if not isinstance(spec, (str, type)) and callable(getattr(spec, "act", None)):
        return spec
    if not isinstance(spec, str) and not callable(spec):
        raise TypeError(f"an opponent must be a spec string, an agent or a callable, got {type(spec).__name__}")
    from agents import make  # lazy: agents sits above hearts_env

    return make(spec, seed=seed, rules=rules)


class SeatTables:
    """N games where one seat is the learner and the other seats are agents (the shared core)."""

    def __init__(
        self,
        rules: Rules,
        num_games: int,
        seat: int,
        opponents: OpponentSpec | Sequence[OpponentSpec] | dict[int, OpponentSpec],
        episode: str,
    ):
        self.rules = rules
        self.num_games = num_games
        if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < rules.num_players:
            raise ValueError(f"seat must be a whole number 0..{rules.num_players - 1}, got {seat!r}")
        self.seat = int(seat)
        self.episode = check_episode(episode)
        self.others = [s for s in range(rules.num_players) if s != seat]
        self.opponent_specs = self._spread(opponents)
        self.opponents: dict[int, Any] = {}
        self.make_opponents(None)
        self.state: State | None = None
        self.seed_rng = np.random.default_rng()

    def _spread(self, opponents) -> dict[int, OpponentSpec]:
        if isinstance(opponents, dict):
            missing = set(self.others) - set(opponents)
            if missing:
                raise ValueError(f"opponents must name an agent for seats {sorted(missing)}")
            extra = set(opponents) - set(self.others)
            if extra:
                raise ValueError(f"opponents names seats {sorted(extra, key=str)}, which are not opponents' seats; "
                                 f"the opponents sit at seats {self.others} (the learner at seat {self.seat})")
            return {s: opponents[s] for s in self.others}
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != len(self.others):
                raise ValueError(f"give {len(self.others)} opponents (seats {self.others}), got {len(opponents)}")
            return dict(zip(self.others, opponents))
        return dict.fromkeys(self.others, opponents)

    def make_opponents(self, seed: int | None) -> None:
        """Build the opponent agents; string specs get seeds derived from ``seed``."""
        for index, (s, spec) in enumerate(self.opponent_specs.items()):
            self.opponents[s] = as_opponent(spec, None if seed is None else seed * 7919 + index, self.rules)

    # ---- starting episodes ----------------------------------------------------------------------

    def start(self, games: np.ndarray, options: dict | None = None) -> None:
        """Start new episodes in the given games and play the opponents up to the learner's turn."""
        options = check_reset_options(options, self.rules, self.num_games)
        n = len(games)
        seeds = self.seed_rng.integers(0, 2**63, size=n, dtype=np.uint64)
        single = self.episode == "hand"
        cycle = len(self.rules.pass_cycle)
        default_hands = self.seed_rng.integers(cycle, size=n) if single else np.zeros(n, np.int64)
        hand_numbers = np.full(n, options["hand_number"]) if "hand_number" in options else default_hands
        if "deal" in options:
            if n != 1:
                raise ValueError("options['deal'] sets one game; use it with a single-game env")
            fresh = engine.from_deal(self.rules, options["deal"], int(hand_numbers[0]), options.get("scores"),
                                     int(seeds[0]), single_hand=single)
        else:
            fresh = engine.init_from_seeds(self.rules, seeds, hand_numbers, single)
            if "scores" in options:
                fresh.scores[:] = options["scores"]
        if self.state is None or len(games) == self.num_games:
            self.state = fresh
        else:
            self.state.assign(games, fresh)
        self.play_opponents()

    # ---- stepping -------------------------------------------------------------------------------

    def learner_turn(
        self, actions: np.ndarray, illegal_action: str, penalty: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The learner's action in every game, then the opponents' up to its next turn.

        Returns ``(rewards [N], illegal [N])``. The engine checks the actions: with ``"raise"`` its
        ``IllegalActionError`` propagates and nothing changes; with ``"terminate"`` the games whose
        card it refuses do not act and get reward ``-penalty`` (the caller ends their episodes).
        """
        illegal = np.zeros(self.num_games, dtype=bool)
        try:  # the common case, every action legal: one validation, in the engine
            engine.step_inplace(self.state, actions)
        except IllegalActionError:
            if illegal_action == "raise":
                raise
            # Shape and type only (no game acts): a float or a string is the caller's bug, not a
            # move, so it raises in this mode too.
            actions, _ = engine.validate_actions(self.state, actions, np.zeros(self.num_games, dtype=bool))
            in_range = (actions >= 0) & (actions < cards.NUM_CARDS)
            legal = engine.legal_mask(self.state)[np.arange(self.num_games), np.where(in_range, actions, 0)]
            illegal = ~(in_range & legal)
            engine.step_inplace(self.state, np.where(illegal, 0, actions), np.flatnonzero(~illegal))
        # Outside the try: an opponent's illegal card is the opponent's error, never the learner's.
        ended = self.state.hand_over & ~illegal
        rewards = np.where(ended, -self.state.last_hand_points[:, self.seat], 0).astype(np.float64)
        rewards[illegal] = -penalty
        return rewards + self.play_opponents(), illegal

    def play_opponents(self) -> np.ndarray:
        """Let the opponents act, batched, until every live game waits for the learner; returns
        the learner's rewards [N] for the hands that ended meanwhile."""
        rewards = np.zeros(self.num_games)

        def score(ended: loop.HandsEnded) -> None:
            rewards[ended.games] -= ended.state.last_hand_points[:, self.seat]

        agents = [self.opponents[s] for s in self.others]
        seating = np.full(self.rules.num_players, -1)  # -1: the learner's seat, left to step()
        seating[self.others] = np.arange(len(self.others))
        loop.play(self.state, agents, seating, on_hand_end=score)
        return rewards

    def check_started(self) -> None:
        """Refuse to step or show games that reset() has not started yet."""
        if self.state is None:
            raise RuntimeError("the env has no game yet: call reset() first")

    def observation(self) -> np.ndarray:
        return observe(self.state, np.full(self.num_games, self.seat))

    def action_mask(self) -> np.ndarray:
        """``[N, 52]`` int8 legal cards of the learner (zeros where its episode is over)."""
        mask = engine.legal_mask(self.state).astype(np.int8)
        mask[self.state.current_player != self.seat] = 0
        return mask


def _check_penalty(penalty) -> float:
    if isinstance(penalty, (bool, np.bool_, str)) or not isinstance(penalty, (int, float, np.number)) \
            or not np.isfinite(penalty):
        raise ValueError(f"illegal_penalty must be a finite number of points, got {penalty!r}")
    return float(penalty)


def _check_illegal_mode(mode: str) -> str:
    if mode not in ILLEGAL_MODES:
        raise ValueError(f"illegal_action must be one of {ILLEGAL_MODES}, got {mode!r}")
    return mode


class HeartsSeatEnv(gymnasium.Env):
    """One learner seat against fixed opponents, one game (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        rules: str | Rules | dict = "classic",
        seat: int = 0,
        opponents: OpponentSpec | Sequence[OpponentSpec] | dict[int, OpponentSpec] = "random",
        episode: str = "hand",
        illegal_action: str = "terminate",
        illegal_penalty: float = 26.0,
        render_mode: str | None = None,
    ):
        # Any render_mode is accepted, as Gymnasium's own envs do (gymnasium.make warns about one
        # missing from metadata["render_modes"]); render() refuses it.
        self.rules = resolve_rules(rules)
        self.tables = SeatTables(self.rules, 1, seat, opponents, episode)
        self.illegal_action = _check_illegal_mode(illegal_action)
        self.illegal_penalty = _check_penalty(illegal_penalty)
        self.render_mode = render_mode
        self.observation_space = observation_box()
        self.action_space = action_space()
        self._over = False  # the episode ended (the game, or an illegal action): step() needs reset()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_reset_options(options, self.rules)  # first: a refused reset changes nothing
        super().reset(seed=seed)
        if seed is not None:
            self.tables.seed_rng = np.random.default_rng(seed)
            self.tables.make_opponents(seed)
        self.tables.start(np.array([0]), options)
        self._over = False
        return self.tables.observation()[0], self._info()

    def step(self, action):
        tables = self.tables
        tables.check_started()
        if self._over:
            raise RuntimeError("the episode is over: call reset() before step()")
        # No int(action): it would play 0.7 or "0" as card 0. The engine refuses non-integers.
        action = as_array(action, "action", IllegalActionError)  # (a torch tensor by value)
        rewards, illegal = tables.learner_turn(action.reshape(-1), self.illegal_action,
                                               self.illegal_penalty)
        info = self._info()
        if illegal[0]:
            info["illegal_action"] = True
        self._over = bool(tables.state.done[0] or illegal[0])
        if self.render_mode == "human":
            self.render()
        return tables.observation()[0], float(rewards[0]), self._over, False, info

    def action_masks(self) -> np.ndarray:
        """Boolean legal mask of the learner (for sb3-contrib's MaskablePPO)."""
        return self.tables.action_mask()[0].astype(bool)

    def _info(self) -> dict[str, Any]:
        state = self.tables.state
        return {
            "action_mask": self.tables.action_mask()[0],
            "hand_number": int(state.hand_number[0]),
            "scores": state.scores[0].copy(),
        }

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'")
            return None
        if self.render_mode not in self.metadata["render_modes"]:
            raise gymnasium.error.UnsupportedMode(
                f"render_mode {self.render_mode!r} is not supported; use one of {self.metadata['render_modes']}"
            )
        self.tables.check_started()
        text = render_text(self.tables.state, 0, seat=self.tables.seat)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None


class HeartsVectorEnv(VectorEnv):
    """N games, one learner seat each, stepped together (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 8,
        rules: str | Rules | dict = "classic",
        seat: int = 0,
        opponents: OpponentSpec | Sequence[OpponentSpec] | dict[int, OpponentSpec] = "random",
        episode: str = "hand",
        illegal_action: str = "terminate",
        illegal_penalty: float = 26.0,
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
    ):
        # gymnasium.make_vec passes render_mode and max_episode_steps when they are given; any other
        # keyword is a mistake and raises TypeError (a misspelled ``opponents`` must not play random).
        # A render_mode is kept, as the single-game env keeps one, though the vector env draws nothing.
        self.render_mode = render_mode
        if max_episode_steps is not None:
            raise ValueError("the vector env ends episodes by the rules only: max_episode_steps is not supported")
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a whole number, at least 1, got {num_envs!r}")
        num_envs = int(num_envs)
        self.num_envs = num_envs
        self.rules = resolve_rules(rules)
        self.tables = SeatTables(self.rules, num_envs, seat, opponents, episode)
        self.illegal_action = _check_illegal_mode(illegal_action)
        self.illegal_penalty = _check_penalty(illegal_penalty)
        self.single_observation_space = observation_box()
        self.single_action_space = action_space()
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._all = np.arange(num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_reset_options(options, self.rules, self.num_envs)  # first: a refused reset changes nothing
        if seed is not None:
            self.tables.seed_rng = np.random.default_rng(seed)
            self.tables.make_opponents(seed)
        self.tables.start(self._all, options)
        return self.tables.observation(), {"action_mask": self.tables.action_mask()}

    def step(self, actions):
        tables = self.tables
        tables.check_started()
        # No cast to int64: it would play 0.7 as card 0. The engine refuses non-integers.
        actions = as_array(actions, "actions", IllegalActionError).reshape(-1)
        rewards, illegal = tables.learner_turn(actions, self.illegal_action, self.illegal_penalty)
        terminated = tables.state.done | illegal
        truncated = np.zeros(self.num_envs, dtype=bool)
        infos: dict[str, Any] = {"illegal_action": illegal}
        if terminated.any():
            ended = np.flatnonzero(terminated)
            final_obs = tables.observation()
            infos["final_obs"] = final_obs
            infos["_final_obs"] = terminated.copy()
            tables.start(ended)
        infos["action_mask"] = tables.action_mask()
        return tables.observation(), rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        return self.tables.action_mask().astype(bool)
