"""PPO with action masks, by self-play on the batched engine, readable top to bottom.

One iteration:

1. **Rollout.** ``num_tables`` games each play one hand (fresh deals; the pass direction drawn per
   table). The league fills the seats; every decision of a current-policy seat is recorded as one
   step of that (table, seat)'s trajectory: observation, mask, action, log-probability, value.
   The only reward is at the end of the hand: minus the seat's penalty points (or, with
   ``reward: relative``, minus its points less the mean of the other seats), scaled by 1/26.
2. **Advantages.** GAE(gamma, lambda) along each trajectory, vectorised over all trajectories.
3. **Update.** ``update_epochs`` passes of shuffled minibatches: the clipped surrogate, a value
   loss, an entropy bonus; the learning rate decays linearly when ``anneal_lr``.
4. **Bookkeeping.** TensorBoard scalars (``charts/``, ``losses/``, ``eval/``), league snapshots,
   an atomic checkpoint every ``checkpoint_every`` iterations, arena evaluations every
   ``eval_every``.

Everything random in iteration ``k`` is seeded from ``(seed, k)``, so a run resumed from a
checkpoint plays exactly the iterations the uninterrupted run would have played.
"""

from __future__ import annotations

import copy
import json
import re
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from agents.checkpoint import CheckpointError, load, load_net, save
from agents.policy import PolicyAgent, PolicyNet, widened
from hearts_env.rules import Rules, shown_value

from .config import SettingsChanged, TrainConfig, changed_settings, check_agents
from .critic import CriticNet
from .imitation import imitate
from .opponents import BOT_BASE, League
from .rollout_workers import LocalRolloutPool, RolloutWorkerError
from .rollouts import Rollout, gae, iteration_rng, merge, play_shard, plan_tables, shards



def available_devices() -> list[str]:
    """The torch devices training can use on this machine: ``cpu``, then ``cuda:N`` for each GPU
    torch sees (and ``mps`` on a Mac that has it)."""
    names = ["cpu"]
    if torch.cuda.is_available():
        names += [f"cuda:{index}" for index in range(torch.cuda.device_count())]
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        names.append("mps")
    return names


def pick_device(name: str) -> torch.device:
    """``auto`` (a GPU when torch sees one, else the CPU), ``cuda`` (the current GPU) or one of
    :func:`available_devices`; anything else, a GPU this machine lacks included, is a ValueError
    naming the devices there are (torch would fail at the first tensor moved, with a traceback)."""
    text = str(name).strip().lower()
    if text == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    there = available_devices()
    if text in there or (text == "cuda" and torch.cuda.is_available()):
        return torch.device(text)
    gpus = "" if torch.cuda.is_available() else " (torch sees no CUDA GPU here)"
    raise ValueError(f"device {name!r} is not on this machine{gpus}; the devices here are auto, "
                     f"{', '.join(there)}")


def collect(net: PolicyNet, league: League, rules: Rules, config: TrainConfig, iteration: int,
            device: torch.device, critic: CriticNet | None = None) -> Rollout:
    """Play one hand at every table in this process, shard after shard (train/rollouts.py); return the
    current policy's decisions with advantages."""
    plan = plan_tables(league, rules, config, iteration)
    return merge([play_shard(net, league, part, config, device, critic)
                  for part in shards(plan, config.rollout_shards or 1)])


def _on_cpu(net: nn.Module) -> dict[str, torch.Tensor]:
    """A network's weights on the CPU, to send to the rollout workers."""
    return {name: tensor.detach().cpu() for name, tensor in net.state_dict().items()}


def update(net: PolicyNet, optimizer: torch.optim.Optimizer, batch: Rollout, config: TrainConfig,
           rng: np.random.Generator, device: torch.device, critic: CriticNet | None = None,
           critic_optimizer: torch.optim.Optimizer | None = None, policy: bool = True) -> dict[str, float]:
    """PPO's clipped update on one rollout; returns the loss statistics. With a ``critic`` (and its
    optimizer) the value loss trains it instead of the policy's value head; ``policy=False`` trains
    the critic alone (its warm-up)."""
    net.train()
    hidden = torch.as_tensor(batch.hidden, device=device) if critic is not None else None
    obs = torch.as_tensor(batch.obs, device=device)
    mask = torch.as_tensor(batch.mask, device=device)
    action = torch.as_tensor(batch.action, device=device)
    old_logp = torch.as_tensor(batch.logp, device=device)
    advantage = torch.as_tensor(batch.advantage, device=device)
    returns = torch.as_tensor(batch.returns, device=device)
    size = len(batch.action)
    stats: dict[str, list[float]] = {k: [] for k in ("policy", "value", "entropy", "approx_kl", "clip_fraction")}
    for _ in range(config.update_epochs):
        order = rng.permutation(size)
        epoch_kl = []
        for start in range(0, size, config.minibatch_size):
            idx = torch.as_tensor(order[start:start + config.minibatch_size], device=device)
            logits, value = net(obs[idx], mask[idx])
            if critic is not None:
                value = critic(obs[idx], hidden[idx])
            log_probs = torch.log_softmax(logits, dim=-1)
            new_logp = log_probs.gather(1, action[idx][:, None]).squeeze(1)
            probs = log_probs.exp()
            entropy = -(torch.where(mask[idx], probs * log_probs, torch.zeros_like(probs))).sum(-1).mean()
            ratio = (new_logp - old_logp[idx]).exp()
            adv = advantage[idx]
            # (a minibatch of one row, the last of a rollout, has no spread: its std is NaN, its advantage 0)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(idx) > 1 else adv - adv.mean()
            policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - config.clip_coef, 1 + config.clip_coef)).mean()
            value_loss = 0.5 * ((value - returns[idx]) ** 2).mean()
            if critic is None:
                loss = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
                optimizer.step()
            else:  # two networks, two steps: the policy from the advantages, the critic from the returns
                if policy:
                    optimizer.zero_grad()
                    (policy_loss - config.ent_coef * entropy).backward()
                    nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
                    optimizer.step()
                critic_optimizer.zero_grad()
                (config.vf_coef * value_loss).backward()
                nn.utils.clip_grad_norm_(critic.parameters(), config.max_grad_norm)
                critic_optimizer.step()
            with torch.no_grad():
                log_ratio = new_logp - old_logp[idx]
                kl = ((ratio - 1) - log_ratio).mean().item()
                stats["approx_kl"].append(kl)
                stats["clip_fraction"].append(((ratio - 1).abs() > config.clip_coef).float().mean().item())
            stats["policy"].append(policy_loss.item())
            stats["value"].append(value_loss.item())
            stats["entropy"].append(entropy.item())
            epoch_kl.append(kl)
        if config.target_kl is not None and np.mean(epoch_kl) > config.target_kl:
            break
    out = {k: float(np.mean(v)) for k, v in stats.items()}
    variance = np.var(batch.returns)
    out["explained_variance"] = float(1 - np.var(batch.returns - batch.value) / variance) if variance > 0 else 0.0
    return out


def _run_state_problem(meta: dict, payload: dict) -> str | None:
    """What is wrong with a run's checkpoint as :meth:`Run._restore` reads it (counters that are no
    counts, snapshot names that are no snapshots' of its folder, no optimizer), or None."""
    for key in ("iteration", "learner_decisions", "all_decisions"):
        value = meta.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"its {key} is {shown_value(value, 60)}, not a count"
    seconds = meta.get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not np.isfinite(seconds):
        return f"its seconds are {shown_value(seconds, 60)}, not a number"
    if not isinstance(meta.get("imitated"), bool) or not isinstance(meta.get("imitation", {}), dict):
        return "its imitated and imitation are not a flag and an object"
    if not isinstance(meta.get("config"), dict) or not isinstance(payload.get("optimizer"), dict):
        return "it holds no config or no optimizer state"
    snapshots = meta.get("snapshots")
    if not (isinstance(snapshots, list) and all(isinstance(n, str) and re.fullmatch(r"snapshot_\d+\.pt", n)
                                                for n in snapshots)):
        return f"its snapshots are {shown_value(snapshots, 60)}, not names of snapshot files of its folder"
    return None


# ---------------------------------------------------------------------------------------------
# The run: set-up, resume, loop, checkpoints, logs
# ---------------------------------------------------------------------------------------------


class Run:
    """A training run in ``runs/<run_name>``: everything needed to resume lives in that folder."""

    def __init__(self, config: TrainConfig, runs_dir: str | Path = "runs", resume: bool = False,
                 device: str | None = None, progress: bool = True, log=print, evaluate=None, extend: bool = False,
                 rollout_workers: int = 0, rollout_pool=None):
        """``evaluate(agent, config) -> {opponent: points per hand}`` measures the policy every
        ``eval_every`` iterations (the command passes the arena's head-to-head; training itself
        does not depend on the evaluation package).

        ``resume`` continues the run in the folder with the settings it was started with: any other
        setting is refused by name (``ConfigError``), except ``device`` and ``torch_threads``, and
        ``total_decisions`` when ``extend`` (to train a run, finished or not, to a new budget).

        ``rollout_workers``: play the rollouts' shards in that many workers (0: in this process), made by
        ``rollout_pool(config, workers)`` (default: processes of this machine, train/rollout_workers.py;
        eval/cluster.py makes Ray actors). A config without ``rollout_shards`` takes one shard per worker
        when the run starts (a resumed run keeps its own): the weights depend on the shards alone."""
        check_agents(config)  # a bad agent spec fails now, not at iteration 2 or after the folder exists
        if rollout_workers < 0:
            raise ValueError(f"--rollout-workers must be 0 (rollouts in this process) or more, got {rollout_workers}")
        self.rollout_workers, self.rollout_pool = rollout_workers, rollout_pool or LocalRolloutPool
        self._sent_snapshots: tuple[int, ...] | None = None  # the snapshots the workers hold
        self.time_split = {"rollout": 0.0, "transfer": 0.0, "learning": 0.0}  # seconds of this process's iterations
        self.config = config
        self.evaluator = evaluate
        self.rules = config.rules_value
        self.dir = Path(runs_dir) / config.run_name
        self.device = pick_device(device or config.device)
        self.progress = progress
        self.log = log
        torch.set_num_threads(config.torch_threads)
        torch.manual_seed(config.seed)  # the initial weights; everything later is seeded per iteration
        self.net = PolicyNet(hidden=config.hidden).to(self.device)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.learning_rate, eps=1e-5)
        self.critic = self.critic_optimizer = None
        if config.critic == "full_information":
            self.critic = CriticNet(config.critic_hidden).to(self.device)
            self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=config.learning_rate, eps=1e-5)
        self.league = League(config.league, self.rules, seed=config.seed)
        self.iteration = 0
        self.learner_decisions = 0
        self.all_decisions = 0
        self.seconds = 0.0
        self.imitated = False
        self.imitation_stats: dict[str, float] = {}
        latest = self.dir / "checkpoints" / "latest.pt"
        if resume:
            if not latest.is_file():
                raise FileNotFoundError(f"--resume: no checkpoint at {latest}; start the run without --resume")
            self._restore(latest, extend)
        elif latest.is_file():
            raise FileExistsError(f"{self.dir} already holds a run; pass --resume to continue it or pick another run_name")
        else:
            if self.config.rollout_shards is None:
                self.config = self.config.model_copy(update={"rollout_shards": max(1, rollout_workers)})
            if config.init_from:
                self._warm_start(config.init_from)
        if rollout_workers > self.config.rollout_shards:
            raise ValueError(f"--rollout-workers {rollout_workers}: the run's rollouts have {self.config.rollout_shards} "
                             f"shard(s), work for at most {self.config.rollout_shards} worker(s); a new run takes "
                             f"rollout_shards={rollout_workers} (the weights depend on the shards, not on the workers)")

    # ---- checkpoints ------------------------------------------------------------------------

    def meta(self) -> dict:
        space = self.config.rule_space_value
        return {
            "rules": self.rules.to_dict(),
            **({"rule_space": space.to_dict()} if space is not None else {}),
            "config": self.config.model_dump(),
            "iteration": self.iteration,
            "learner_decisions": self.learner_decisions,
            "all_decisions": self.all_decisions,
            "seconds": self.seconds,
            "imitated": self.imitated,
            "imitation": self.imitation_stats,
            "snapshots": [f"snapshot_{step:06d}.pt" for step in self.league.snapshot_steps],
        }

    def checkpoint(self) -> Path:
        extra = None
        if self.critic is not None:
            extra = {"critic": self.critic.state_dict(), "critic_optimizer": self.critic_optimizer.state_dict()}
        path = save(self.dir / "checkpoints" / "latest.pt", self.net, self.meta(), self.optimizer, extra=extra)
        return path

    @property
    def finished(self) -> bool:
        """The run has trained its budget and written the summary (and policy) of exactly this point:
        nothing is left to do. (A summary of an earlier budget, after a kill that came between the
        last checkpoint and the new summary, does not count: the policy file is not yet this one.)"""
        summary = self.dir / "summary.json"
        if self.learner_decisions < self.config.total_decisions or not summary.is_file():
            return False
        try:
            return json.loads(summary.read_text()).get("learner_decisions") == self.learner_decisions
        except ValueError:
            return False

    def _restore(self, path: Path, extend: bool) -> None:
        payload = load(path)
        meta = payload["meta"]
        problem = _run_state_problem(meta, payload)
        if problem:
            raise ValueError(f"--resume: {path} is not a checkpoint of a run: {problem}")
        if self.config.rollout_shards is None:  # the run's own (a run from before shards had one)
            self.config = self.config.model_copy(update={"rollout_shards": meta["config"].get("rollout_shards") or 1})
        if not Rules.from_dict(meta["rules"]).same_game(self.rules):
            raise ValueError(f"{path} belongs to a run with other rules; resume it with its own config")
        # A resumed run must be the run that was started: other hyperparameters would silently make
        # a different one (and another network size cannot even load), so name every change.
        changes = changed_settings(meta["config"], self.config, extend=extend)
        if changes:
            budget = any(change.startswith("total_decisions ") for change in changes)
            raise SettingsChanged(f"--resume: {self.dir} was started with other settings: {'; '.join(changes)}; "
                                  f"resume it with its own config"
                                  + ("; to change its budget pass --extend" if budget else ""), changes)
        self.net.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        if self.critic is not None:
            extra = payload.get("extra") if isinstance(payload.get("extra"), dict) else {}
            if not isinstance(extra.get("critic"), dict) or not isinstance(extra.get("critic_optimizer"), dict):
                raise ValueError(f"--resume: {path} holds no critic, which a run with critic full_information "
                                 f"saves: it is not this run's checkpoint")
            self.critic.load_state_dict(extra["critic"])
            self.critic_optimizer.load_state_dict(extra["critic_optimizer"])
        self.iteration = meta["iteration"]
        self.learner_decisions = meta["learner_decisions"]
        self.all_decisions = meta["all_decisions"]
        self.seconds = meta["seconds"]
        self.imitated = meta["imitated"]
        self.imitation_stats = meta.get("imitation", {})  # older checkpoints have none
        for name in meta["snapshots"]:
            snap = load(self.dir / "snapshots" / name)
            net = PolicyNet(hidden=self.config.hidden)
            net.load_state_dict(snap["model"])
            self.league.add_snapshot(net, snap["meta"]["iteration"])

    def _warm_start(self, path: str) -> None:
        """Start from a saved policy's weights (same rules and observation version). A larger
        ``hidden`` grows the saved network first, keeping what it computes (``widened``)."""
        net, meta = load_net(path, self.rules)
        if net.card_scorer_units:  # PolicyNet(hidden) here: PPO does not train the per-card scorer
            raise CheckpointError(f"init_from {path}: it has a per-card scorer ({net.card_scorer_units} units, from "
                                  f"`hearts distill fit --card-scorer`), which PPO training does not support; "
                                  f"start from a network without one")
        try:
            start = widened(net, self.config.hidden)  # an exact copy when the sizes match
        except ValueError as err:
            raise CheckpointError(f"init_from {path}: {err}; or set hidden to its layers") from None
        self.net.load_state_dict(start.state_dict())
        grown = "" if list(meta["hidden"]) == list(self.config.hidden) else (
            f", grown from layers {list(meta['hidden'])} to {list(self.config.hidden)} (same outputs)")
        self.log(f"started from the weights of {path}{grown}")

    def _snapshot(self) -> None:
        self.league.add_snapshot(self.net, self.iteration)
        save(self.dir / "snapshots" / f"snapshot_{self.iteration:06d}.pt", self.net, self.meta())

    # ---- the loop ---------------------------------------------------------------------------

    def train(self) -> dict:
        from torch.utils.tensorboard import SummaryWriter  # needs tensorboard (the train extra), only for a run

        config = self.config
        if self.finished:
            # Resuming a finished run changes nothing: rewriting its summary would lose the final
            # evaluation, and a new TensorBoard file would be noise. Its summary is the answer.
            self.log(f"{self.dir} is already finished ({self.learner_decisions:,} of {config.total_decisions:,} "
                     f"learner decisions); nothing was changed. To train it further, resume it with --extend and "
                     f"a larger total_decisions")
            return json.loads((self.dir / "summary.json").read_text())
        writer = SummaryWriter(str(self.dir))
        if self.iteration == 0 and not self.imitated:
            writer.add_text("hyperparameters", hyperparameter_table(config))
            if config.imitation.teacher:
                stats = self.imitation_stats = imitate(self.net, self.rules, config, self.device, log=self.log)
                for key, value in stats.items():
                    writer.add_scalar(f"imitation/{key}", value, 0)
            self.imitated = True
            self.checkpoint()
        pool = self.rollout_pool(config, self.rollout_workers) if self.rollout_workers else None
        try:
            return self._loop(writer, pool)
        finally:
            if pool is not None:
                pool.close()

    def _rollout(self, pool) -> tuple[Rollout, float | None]:
        """This iteration's rollout, and the longest time a worker spent playing (None: no workers)."""
        config = self.config
        if pool is None:
            return collect(self.net, self.league, self.rules, config, self.iteration, self.device, self.critic), None
        plan = plan_tables(self.league, self.rules, config, self.iteration)
        steps = tuple(self.league.snapshot_steps)
        snapshots = None if steps == self._sent_snapshots else self.league.snapshot_states()
        weights = {"policy": _on_cpu(self.net)} | ({"critic": _on_cpu(self.critic)} if self.critic is not None else {})
        parts, busiest = pool.play(weights, snapshots, shards(plan, config.rollout_shards))
        self._sent_snapshots = steps
        return merge(parts), busiest

    def _loop(self, writer, pool) -> dict:
        config = self.config
        bar = tqdm(total=config.total_decisions, initial=min(self.learner_decisions, config.total_decisions),
                   unit="dec", disable=not self.progress, dynamic_ncols=True)
        last_eval: dict = {}
        while self.learner_decisions < config.total_decisions:
            start = time.perf_counter()
            if config.anneal_lr:
                fraction = 1.0 - self.learner_decisions / config.total_decisions
                for group in self.optimizer.param_groups + (self.critic_optimizer.param_groups if self.critic else []):
                    group["lr"] = fraction * config.learning_rate
            try:
                batch, busiest = self._rollout(pool)
            except RolloutWorkerError as err:
                self.checkpoint()  # (the weights of the iterations done: nothing is lost)
                raise RolloutWorkerError(f"{err}; the run stopped after iteration {self.iteration} and its "
                                         f"checkpoint is written: continue it with --resume") from None
            rollout_seconds = time.perf_counter() - start
            policy_learns = self.iteration >= config.critic_warmup_iterations or self.critic is None
            losses = update(self.net, self.optimizer, batch, config, iteration_rng(config.seed + 1, self.iteration),
                            self.device, self.critic, self.critic_optimizer, policy=policy_learns)
            elapsed = time.perf_counter() - start
            self.time_split["rollout"] += busiest if busiest is not None else rollout_seconds
            self.time_split["transfer"] += rollout_seconds - busiest if busiest is not None else 0.0
            self.time_split["learning"] += elapsed - rollout_seconds
            self.iteration += 1
            if policy_learns:  # (the critic's warm-up trains no policy: it spends none of the budget)
                self.learner_decisions += len(batch.action)
            self.all_decisions += batch.decisions
            self.seconds += elapsed
            step = self.learner_decisions
            rate = batch.decisions / elapsed
            writer.add_scalar("charts/points_per_hand", float(batch.learner_points.mean()), step)
            writer.add_scalar("charts/moons_made", batch.moons_made, step)
            writer.add_scalar("charts/moons_suffered", batch.moons_suffered, step)
            writer.add_scalar("charts/decisions_per_s", rate, step)
            writer.add_scalar("charts/learner_decisions_per_s", len(batch.action) / elapsed, step)
            writer.add_scalar("charts/rollout_fraction", rollout_seconds / elapsed, step)
            if busiest is not None:  # the rollout's wall time, split: workers playing, the rest (transfer, waiting)
                writer.add_scalar("charts/rollout_worker_seconds", busiest, step)
                writer.add_scalar("charts/rollout_transfer_seconds", rollout_seconds - busiest, step)
            writer.add_scalar("charts/learning_rate", self.optimizer.param_groups[0]["lr"], step)
            for key, value in losses.items():
                writer.add_scalar(f"losses/{key}", value, step)
            if self.iteration % config.league.snapshot_every == 0:
                self._snapshot()
            if config.eval_every and self.iteration % config.eval_every == 0:
                last_eval = self.evaluate()
                for opponent, points in last_eval.items():
                    writer.add_scalar(f"eval/points_vs_{opponent}", points, step)
            if self.iteration % config.checkpoint_every == 0:
                self.checkpoint()
            if not self.progress:
                self.log(f"iteration {self.iteration}: {self.learner_decisions:,}/{config.total_decisions:,} learner "
                         f"decisions, {rate:,.0f} decisions/s, points/hand {batch.learner_points.mean():.2f}"
                         + (f", eval {last_eval}" if self.iteration % max(config.eval_every, 1) == 0 and last_eval else ""))
            bar.update(min(len(batch.action), max(0, config.total_decisions - bar.n)))
            bar.set_postfix(dec_s=f"{rate:,.0f}", pts=f"{batch.learner_points.mean():.2f}",
                            **{f"vs_{name}": f"{points:.2f}" for name, points in last_eval.items()}, refresh=False)
        bar.close()
        self.checkpoint()
        policy = save(self.dir / "policy.pt", self.net.cpu(), self.meta())
        self.net.to(self.device)
        writer.close()
        summary = {
            "iterations": self.iteration, "learner_decisions": self.learner_decisions,
            "all_decisions": self.all_decisions, "seconds": round(self.seconds, 1),
            "decisions_per_s": round(self.all_decisions / max(self.seconds, 1e-9)),
            "policy": str(policy), "eval": last_eval,
            "rollout_workers": self.rollout_workers,
            "time_split_seconds": {key: round(value, 2) for key, value in self.time_split.items()},
        }
        if self.imitation_stats:
            summary["imitation"] = self.imitation_stats
        (self.dir / "summary.json").write_text(json.dumps(summary, indent=2))
        return summary

    def evaluate(self) -> dict[str, float]:
        """Points per hand of the current (greedy) policy against each eval opponent, measured by
        the ``evaluate`` function the run was given (none: no evaluation)."""
        if self.evaluator is None or not self.config.eval_opponents:
            return {}
        agent = PolicyAgent(copy.deepcopy(self.net).cpu(), name="current")
        return self.evaluator(agent, self.config)


def hyperparameter_table(config: TrainConfig) -> str:
    rows = ["|setting|value|", "|-|-|"]
    for key, value in config.model_dump().items():
        rows.append(f"|{key}|{value}|")
    return "\n".join(rows)


__all__ = ["Run", "Rollout", "collect", "gae", "update", "BOT_BASE"]
