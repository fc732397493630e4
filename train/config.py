"""The training configuration: one validated value, loaded from YAML with ``key=value`` overrides.

Every field is documented below; an unknown key or a bad value raises :class:`ConfigError`
naming it. Nested keys are overridden with dots: ``league.snapshot_every=5``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hearts_env.rules import Rules, RulesError
from hearts_env.settings_files import apply_overrides, read_mapping


#: Rewards and value targets are penalty points / 26 (a hand's points without a moon), so they stay near [-1, 0].
REWARD_SCALE = 1.0 / 26.0


class ConfigError(ValueError):
    """A training config that cannot be used; the message names the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LeagueConfig(_Strict):
    """Who sits at the learner's tables. Each seat is drawn by these weights; every table keeps
    at least ``min_learners`` seats for the current policy (shared weights)."""

    current: float = Field(0.5, ge=0, description="weight of a seat played by the current policy")
    snapshots: float = Field(0.2, ge=0, description="weight of a seat played by a past snapshot")
    bots: dict[str, float] = Field(default_factory=lambda: {"easy": 0.05, "normal": 0.1, "hard": 0.15},
                                   description="weights of heuristic bots by spec")
    snapshot_every: int = Field(10, ge=1, description="iterations between snapshots added to the league")
    max_snapshots: int = Field(8, ge=1, description="snapshots kept (oldest dropped)")
    min_learners: int = Field(1, ge=1, description="current-policy seats per table, at least")


class ImitationConfig(_Strict):
    """Optional warm start: imitate a bot before PPO (behaviour cloning, plus a value fit)."""

    teacher: Optional[str] = Field(None, description="bot spec to imitate, e.g. hard; None skips it")
    decisions: int = Field(1_000_000, ge=0, description="teacher decisions to learn from")
    epochs: int = Field(3, ge=1)
    batch_size: int = Field(4096, ge=64)
    learning_rate: float = Field(1e-3, gt=0)


class TrainConfig(_Strict):
    run_name: str = Field("ppo", description="folder under the runs directory")
    rules: Any = Field("classic", description="rules preset name or a mapping of options")
    seed: int = 0
    total_decisions: int = Field(5_000_000, ge=1, description="learner decisions to train on")
    num_tables: int = Field(1024, ge=1, description="games played at once in each rollout (one hand each)")
    hidden: list[int] = Field(default_factory=lambda: [128, 128], description="hidden layer sizes")
    learning_rate: float = Field(3e-4, gt=0)
    anneal_lr: bool = True
    gamma: float = Field(1.0, ge=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    update_epochs: int = Field(2, ge=1)
    minibatch_size: int = Field(4096, ge=32)
    clip_coef: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    target_kl: Optional[float] = Field(None, gt=0, description="stop an update's epochs past this KL")
    reward: Literal["points", "relative"] = Field(
        "points", description="points: minus own penalty points; relative: minus (own - mean of the others)")
    league: LeagueConfig = Field(default_factory=LeagueConfig)
    imitation: ImitationConfig = Field(default_factory=ImitationConfig)
    init_from: Optional[str] = Field(
        None, description="policy checkpoint whose weights start the run (fine-tuning); instead of imitation. "
                          "A larger hidden grows it first (each layer at least as wide, layers may be appended), "
                          "keeping what it computes")
    eval_every: int = Field(20, ge=0, description="iterations between arena evaluations (0: never)")
    eval_deals: int = Field(200, ge=1)
    eval_opponents: list[str] = Field(default_factory=lambda: ["easy", "normal", "hard"])
    checkpoint_every: int = Field(5, ge=1, description="iterations between checkpoints")
    device: str = Field("auto", description="auto (a GPU when present), cpu, cuda, cuda:N")
    torch_threads: int = Field(2, ge=1)

    @field_validator("rules")
    @classmethod
    def _rules(cls, value: Any) -> Any:
        to_rules(value)
        return value

    @model_validator(mode="after")
    def _one_warm_start(self) -> "TrainConfig":
        if self.init_from and self.imitation.teacher:
            raise ValueError("init_from and imitation.teacher both set: start from a checkpoint or imitate a bot, "
                             "not both (set imitation.teacher=null)")
        return self

    @property
    def rules_value(self) -> Rules:
        return to_rules(self.rules)


def to_rules(value: Any) -> Rules:
    try:
        return Rules.resolve(value)
    except RulesError as err:  # pydantic reports ValueErrors against the field
        raise ValueError(str(err)) from None


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    """A config from a YAML file (or the defaults) with ``key=value`` overrides applied."""
    data: dict[str, Any] = {} if path is None else read_mapping(path, ConfigError, "config")
    apply_overrides(data, overrides, ConfigError, "learning_rate=1e-4")
    try:
        return TrainConfig(**data)
    except ValidationError as err:
        problems = []
        for problem in err.errors():
            field = ".".join(str(p) for p in problem["loc"]) or "config"
            message = problem["msg"].removeprefix("Value error, ")
            if problem["type"] == "extra_forbidden":
                message = "unknown setting"
            problems.append(f"{field}: {message}")
        raise ConfigError("invalid training config: " + "; ".join(problems)) from None
