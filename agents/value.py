"""A value model: the points each seat ends the hand with, read from a whole deal at a trick's start.

The search player (``agents/search.py``) plays each candidate card in each of its sampled deals,
lets the other seats finish the trick, and asks this model what the hand will then give its seat,
instead of playing every sampled deal to the end with rollout players. The model sees the whole
deal: every seat's hand, the points each seat has taken and whether hearts are broken, through an
encoder of its own (:func:`encode`). No seat agent ever gets that input at play time; the search
builds its deals from what its own seat saw (``hearts_env.worlds``), so it stays honest.

``ValueNet`` maps the encoding, in seats relative to the trick's leader, to

* the expected penalty points of the hand for each seat (moons included: the shooter's 0 and the
  others' 26), and
* logits of who shoots the moon (one of the four seats, or nobody), for calibration checks.

It learns them from finished hands played at tables of mixed players (``train/value.py``: the bots
and the trained networks), so that it does not expect every table to be one kind of player.

A value file is a checkpoint (``agents.checkpoint``: tensors and JSON only, loaded without running
code) whose metadata says ``"kind": "value"`` and the encoding's version.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import nn

from hearts_env import cards, scoring
from hearts_env.rules import Rules
from hearts_env.state import PLAY, State

from .checkpoint import CheckpointError, load_network, save
from .policy import mlp_trunk

KIND = "value"
#: The version of :func:`encode`'s layout; a value file records the one it was trained on.
ENCODING_VERSION = 1
SEATS = 4
#: Columns of the encoding: each card's holder (relative seat, -1: gone), the points each seat has
#: taken this hand, hearts broken.
CODE_WIDTH = cards.NUM_CARDS + SEATS + 1
#: The network's input: each card's holder one-hot, the points taken / 26, hearts broken.
FEATURES = cards.NUM_CARDS * SEATS + SEATS + 1
#: Points per hand in the classic game: the scale of the points in and out of the network.
POINTS = 26.0


def check_rules(rules: Rules) -> None:
    """The value model is for four-player games with the whole deck (every unseen card is in a hand)."""
    if rules.num_players != SEATS or rules.deck_size != 52 or rules.dead_cards:
        raise ValueError("a value model is for four-player games with the whole 52-card deck")


def leader_seats(leader: np.ndarray) -> np.ndarray:
    """``[N, 4]``: the absolute seat of each seat relative to the trick's ``leader`` (relative seat
    ``r`` is ``(leader + r) % 4``): the columns the network's seats are read from and written to."""
    return (np.asarray(leader)[:, None] + np.arange(SEATS)[None, :]) % SEATS


def encode(state: State, games: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(codes [N, CODE_WIDTH] int8, leader [N])`` of the ``games`` of ``state`` (default all),
    each at the start of a trick: every card's holder as a seat relative to the trick's leader
    (0 to 3; -1 for a card played), the points each relative seat has taken this hand (before the
    moon), whether hearts are broken. Raises ``ValueError`` for a game not at a trick's start."""
    rows = np.arange(state.batch_size) if games is None else np.asarray(games, dtype=np.int64)
    check_rules(state.rules)
    if not ((state.phase[rows] == PLAY) & (state.num_in_trick[rows] == 0)).all():
        raise ValueError("the value model reads states at the start of a trick (phase play, no card on the table)")
    leader = state.current_player[rows]
    seats = leader_seats(leader)
    codes = np.empty((rows.size, CODE_WIDTH), dtype=np.int8)
    holder = codes[:, :cards.NUM_CARDS]
    holder.fill(-1)
    held = cards.to_mask(np.take_along_axis(state.hands[rows], seats, axis=1))  # [N, 4, 52]
    for relative in range(SEATS):
        holder[held[:, relative]] = relative
    taken = np.take_along_axis(state.taken[rows], seats, axis=1)
    codes[:, cards.NUM_CARDS:cards.NUM_CARDS + SEATS] = scoring.card_points(state.rules, taken)
    codes[:, -1] = state.hearts_broken[rows]
    return codes, leader


def features(codes: torch.Tensor) -> torch.Tensor:
    """The network's input ``[N, FEATURES]`` float32 from :func:`encode`'s codes: each card's holder
    one-hot (card ``c`` held by relative seat ``r``: column ``4c + r``; a card gone: none), then the
    points taken / 26 and hearts broken."""
    codes = codes.long()
    holder = codes[:, :cards.NUM_CARDS]
    spare = FEATURES  # a column past the features takes the cards that are gone
    column = torch.where(holder >= 0, torch.arange(cards.NUM_CARDS)[None, :] * SEATS + holder, spare)
    x = torch.zeros(len(codes), FEATURES + 1)
    x.scatter_(1, column, 1.0)  # (a scatter: several times faster than a one-hot of every card)
    x[:, cards.NUM_CARDS * SEATS:-2] = codes[:, cards.NUM_CARDS:cards.NUM_CARDS + SEATS].float() / POINTS
    x[:, -2] = codes[:, -1].float()
    return x[:, :FEATURES]


class ValueNet(nn.Module):
    """Codes ``[N, CODE_WIDTH]`` to ``(points [N, 4], moon logits [N, 5])``, seats relative to the
    trick's leader; the points are in hand points (the network works in 26ths), the fifth moon
    logit is "nobody shoots"."""

    def __init__(self, hidden: Sequence[int] = (512, 256)):
        super().__init__()
        self.hidden = tuple(int(h) for h in hidden)
        self.trunk = mlp_trunk(FEATURES, self.hidden)
        width = self.hidden[-1] if self.hidden else FEATURES
        self.points = nn.Linear(width, SEATS)
        self.moon = nn.Linear(width, SEATS + 1)

    def forward(self, codes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        trunk = self.trunk(features(codes))
        return self.points(trunk) * POINTS, self.moon(trunk)


class Value:
    """A trained :class:`ValueNet` as the search player uses it."""

    def __init__(self, net: ValueNet, name: str = "value", batch: int = 32768):
        self.net = net.eval()
        self.name = name
        self.batch = batch

    def hand_points(self, state: State, games: np.ndarray | None = None) -> np.ndarray:
        """``[N, 4]`` float32: the points each seat (absolute) is expected to end the hand with, for
        the ``games`` of ``state`` (default all), each at the start of a trick."""
        codes, leader = encode(state, games)
        out = np.empty((len(codes), SEATS), dtype=np.float32)
        with torch.inference_mode():
            for start in range(0, len(codes), self.batch):
                points, _ = self.net(torch.from_numpy(codes[start:start + self.batch]))
                out[start:start + self.batch] = points.numpy()
        absolute = np.empty_like(out)
        np.put_along_axis(absolute, leader_seats(leader), out, axis=1)
        return absolute


def save_value(path, net: ValueNet, meta: dict[str, Any]):
    """Write a value file (a checkpoint with ``kind: value`` and the encoding's version)."""
    return save(path, net, {**meta, "kind": KIND, "encoding_version": ENCODING_VERSION})


def load_value(path, rules: Rules | None = None) -> Value:
    """The value model of a file, checked like a policy checkpoint (never runs code): its kind,
    encoding version, rules (the same game as ``rules`` when given) and sizes."""
    net, meta = load_network(path, rules, KIND, "value model", lambda hidden, _scorer: ValueNet(hidden))
    if meta.get("encoding_version") != ENCODING_VERSION:
        raise CheckpointError(f"{path} reads deals in encoding v{meta.get('encoding_version')!s:.20}; this version "
                              f"reads v{ENCODING_VERSION}")
    try:
        check_rules(Rules.from_dict(meta["rules"]))
    except ValueError as err:
        raise CheckpointError(f"{path}: {err}") from None
    return Value(net, name=f"value:{path}")
