"""Rollout workers: PPO's shards played in other processes, the learner staying in the driver.

A :class:`RolloutWorker` holds what playing a shard needs besides the plan: a CPU copy of the policy
(the driver's weights are loaded into it for each iteration), its own league (the bots, made as the
driver makes them, and the snapshots the driver sends when they change) and one torch thread. Each
iteration the driver hands every worker its shards (shard k goes to worker k mod N) with the
weights, and merges what comes back in shard order (train/rollouts.py). A shard plays the same in
any process, so the number of workers and the backend do not change the weights.

:class:`LocalRolloutPool` runs the workers as processes of this machine that end with the driver
(train/workers.py); eval/cluster.py's ``RayRolloutPool`` runs them as Ray actors on any number of
machines. Both answer :meth:`play` alike, and a worker that dies is a :class:`RolloutWorkerError`:
the run writes its checkpoint and stops, and ``hearts train --resume`` goes on from there.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any

import torch

from agents.policy import PolicyNet

from .config import TrainConfig, config_from_mapping
from .critic import CriticNet
from .opponents import League
from .rollouts import Rollout, TablePlan, play_shard
from .workers import die_with_parent


class RolloutWorkerError(RuntimeError):
    """A rollout worker died or failed: one line naming it."""


class RolloutWorker:
    """Plays shards of the driver's plans (see the module docstring)."""

    def __init__(self, config_data: dict[str, Any]):
        torch.set_num_threads(1)  # one core per worker: the workers, not torch's threads, use the machine
        self.config: TrainConfig = config_from_mapping(config_data)
        self.league = League(self.config.league, self.config.rules_value, seed=self.config.seed)
        self.net = PolicyNet(hidden=self.config.hidden)
        self.critic = CriticNet(self.config.critic_hidden) if self.config.critic == "full_information" else None

    def play(self, weights: dict, snapshots: list[tuple[int, dict]] | None,
             plans: list[TablePlan]) -> tuple[list[Rollout], float]:
        """The rollouts of ``plans`` with the ``weights`` of the policy (and of the critic, when the run
        has one: ``{"policy": ..., "critic": ...}``), the league's snapshots replaced by ``snapshots``
        unless None, and the seconds spent playing them."""
        began = time.perf_counter()
        self.net.load_state_dict(weights["policy"])
        if self.critic is not None:
            self.critic.load_state_dict(weights["critic"])
        if snapshots is not None:
            self.league.replace_snapshots(snapshots, self.config.hidden)
        out = [play_shard(self.net, self.league, plan, self.config, torch.device("cpu"), self.critic) for plan in plans]
        return out, time.perf_counter() - began


def shares(count: int, workers: int) -> list[list[int]]:
    """The shard indices each of ``workers`` workers plays: shard k to worker k mod ``workers``."""
    return [list(range(w, count, workers)) for w in range(workers)]


def in_shard_order(parts: list[list[Rollout]], count: int) -> list[Rollout]:
    """The workers' answers (each in its :func:`shares` order) as one list in shard order."""
    out: list[Rollout | None] = [None] * count
    for share, rollouts in zip(shares(count, len(parts)), parts):
        for k, rollout in zip(share, rollouts):
            out[k] = rollout
    return out  # type: ignore[return-value]


def _serve(connection, parent: int, config_data: dict[str, Any]) -> None:
    """A local worker process: answers the driver's requests until it closes the connection."""
    die_with_parent(parent)
    worker = RolloutWorker(config_data)
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        try:
            connection.send(("ok", worker.play(*request)))
        except Exception as err:  # noqa: BLE001 (sent to the driver, which stops with it)
            connection.send(("error", f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"))


class LocalRolloutPool:
    """``workers`` rollout worker processes on this machine (see the module docstring)."""

    backend = "local"

    def __init__(self, config: TrainConfig, workers: int):
        context = multiprocessing.get_context("fork")  # the workers are this process's children
        self.connections, self.processes = [], []
        for _ in range(workers):
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(theirs, os.getpid(), config.model_dump()), daemon=True,
                                      name="hearts-rollout-worker")
            process.start()
            theirs.close()
            self.connections.append(mine)
            self.processes.append(process)

    @property
    def workers(self) -> int:
        return len(self.processes)

    def play(self, weights: dict, snapshots: list[tuple[int, dict]] | None,
             plans: list[TablePlan]) -> tuple[list[Rollout], float]:
        """Every plan's rollout, in order, and the longest time a worker spent playing."""
        for index, share in enumerate(shares(len(plans), self.workers)):
            try:
                self.connections[index].send((weights, snapshots, [plans[k] for k in share]))
            except (ConnectionError, OSError):
                raise self._died(index) from None
        answers = []
        for index, connection in enumerate(self.connections):
            try:
                status, answer = connection.recv()
            except (EOFError, ConnectionError, OSError):
                raise self._died(index) from None
            if status != "ok":
                raise RolloutWorkerError(f"rollout worker {index} failed: {answer}")
            answers.append(answer)
        return in_shard_order([rollouts for rollouts, _ in answers], len(plans)), max(s for _, s in answers)

    def _died(self, index: int) -> RolloutWorkerError:
        process = self.processes[index]
        process.join(timeout=1)
        why = f"exit code {process.exitcode}" if process.exitcode is not None else "no answer"
        return RolloutWorkerError(f"rollout worker {index} (pid {process.pid}) died ({why})")

    def close(self) -> None:
        for connection in self.connections:
            connection.close()
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
