"""A per-card scorer added to the policy's logits: facts about each card, computed from observation v1.

A plain network over observation v1 sees cards as 52 separate inputs. Facts that decide most card
plays, such as "this card takes the trick as it stands" or "two spades still out are higher than
this one", are comparisons across those inputs that an MLP learns only approximately, card by card. This
module computes them exactly, in torch, from the observation itself, so an exported model still takes
observation v1 and the game apps' contract does not change.

:func:`card_facts` gives ``[N, 52, CARD_FACTS]`` facts per card and ``[N, CONTEXT_FACTS]`` facts
about the trick. :class:`CardScorer` scores every card with one small shared layer,
``score_c = v . relu(A facts_c + B trunk + C context + b)``, added to the policy head's logit of
that card. ``v`` starts at zero, so adding a scorer to a trained network leaves its play unchanged
until it is fitted.

The facts are *hints*, not rules: they only read what the observation shows (a card is *out* when
it is in the deck but neither held nor played: in another hand, known or not, since the cards I
passed count, or among the two-player deck's dead cards, which nobody sees) and the engine's rules
stay the only judge of legality and scoring.
"""

from __future__ import annotations

import torch
from torch import nn

from hearts_env.cards import HEARTS, NUM_CARDS, NUM_RANKS, NUM_SUITS, RANK_CHARS, SPADES, card_id
from hearts_env.observe import OBSERVATION_LAYOUT, RULE_FLAGS, player_count
from hearts_env.rules import SHORT_DECK_RANKS

#: Names of the per-card facts, in order (see :func:`card_facts`).
CARD_FACT_NAMES = (
    "held", "out", "higher_out", "lower_out", "suit_out", "suit_held",
    "follows_lead", "takes_trick_now", "higher_in_trick", "trump",
    "clubs", "diamonds", "hearts", "spades", "rank", "points",
)
#: Names of the facts about the trick (see :func:`card_facts`).
CONTEXT_FACT_NAMES = ("trick_points", "cards_in_trick", "last_to_play", "leading", "trick_number",
                      "hearts_broken", "queen_seen")
CARD_FACTS = len(CARD_FACT_NAMES)
CONTEXT_FACTS = len(CONTEXT_FACT_NAMES)


def _piece(obs: torch.Tensor, name: str) -> torch.Tensor:
    where, shape = OBSERVATION_LAYOUT[name]
    return obs[:, where].reshape((obs.shape[0],) + shape)


def _constants() -> dict[str, torch.Tensor]:
    suit = torch.arange(NUM_CARDS) // NUM_RANKS
    rank = torch.arange(NUM_CARDS) % NUM_RANKS
    same_suit = suit[:, None] == suit[None, :]
    points = (suit == HEARTS).float()
    points[card_id(SPADES, 10)] = 13.0  # Q♠
    return {
        "suit": nn.functional.one_hot(suit, NUM_SUITS).float(),  # [52, 4]
        # higher[a, c]: card a is of c's suit and higher, so ``cards @ higher`` counts them per card c
        "higher": (same_suit & (rank[:, None] > rank[None, :])).float(),
        "rank": rank.float() / (NUM_RANKS - 1),
        "points": points,
        "short_deck": torch.isin(rank, torch.tensor([RANK_CHARS.index(r) for r in SHORT_DECK_RANKS])).float(),
    }


def card_facts(obs: torch.Tensor, constants: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(facts [N, 52, CARD_FACTS], context [N, CONTEXT_FACTS])`` from observations ``[N, OBS_DIM]``.

    Per card: held by me; out (in the deck, neither held nor played, so in another hand: the cards
    I passed count, as they can still beat mine; or dead); cards out of its suit above and below it;
    cards out and held of its suit; of the suit led; would take the trick as
    it stands (of the suit led and above every card of that suit in it, or a trump above every trump
    in it when the rules make hearts trump); cards of its suit in the trick above it; a trump; its
    suit, rank and points. About the trick: its points, how full it is, whether I play last, whether I lead, tricks
    done, hearts broken, Q♠ seen. Counts are scaled to about 0..1.
    """
    suit, higher = constants["suit"], constants["higher"]
    hand = _piece(obs, "hand")
    trick = _piece(obs, "trick").sum(dim=1)
    played = _piece(obs, "played_by").sum(dim=1)
    flags = _piece(obs, "rules")
    hearts_trump = flags[:, RULE_FLAGS.index("hearts_trump"), None]
    players = player_count(flags[:, RULE_FLAGS.index("two_players")])
    short = flags[:, RULE_FLAGS.index("short_deck"), None]
    in_deck = 1.0 - short * (1.0 - constants["short_deck"])
    out = torch.clamp(in_deck - hand - played, min=0.0)
    per_suit = lambda cards: (cards @ suit) @ suit.T  # noqa: E731 - cards of each card's suit
    lead = (_piece(obs, "trick") * _piece(obs, "trick_leader")[:, :, None]).sum(dim=1)
    follows = per_suit(lead)
    heart = suit[:, HEARTS][None, :]
    trump = hearts_trump * heart
    higher_in_trick = trick @ higher
    in_trick = trick.sum(dim=1)
    started = (in_trick > 0).float()[:, None]
    heart_in_trick = ((trick * heart).sum(dim=1, keepdim=True) > 0).float()
    trumped = hearts_trump * heart_in_trick * (1.0 - (lead * heart).sum(dim=1, keepdim=True))  # of another suit
    unbeaten = (higher_in_trick == 0).float()
    takes = started * unbeaten * (follows * (1.0 - trumped) + trump * (1.0 - follows))
    n = obs.shape[0]
    facts = torch.stack([
        hand, out, (out @ higher) / 12.0, (out @ higher.T) / 12.0,
        per_suit(out) / 13.0, per_suit(hand) / 13.0,
        follows, takes, higher_in_trick / 3.0, trump,
        *[suit[:, s].expand(n, NUM_CARDS) for s in range(NUM_SUITS)],
        constants["rank"].expand(n, NUM_CARDS), constants["points"].expand(n, NUM_CARDS) / 13.0,
    ], dim=-1)
    playing = _piece(obs, "phase")[:, 1]
    context = torch.stack([
        (trick @ constants["points"]) / 26.0, in_trick / 3.0, (in_trick == players - 1).float(),
        playing * (in_trick == 0).float(), _piece(obs, "trick_number")[:, 0],
        _piece(obs, "hearts_broken")[:, 0], _piece(obs, "queen_seen")[:, 0],
    ], dim=-1)
    return facts, context


_CONSTANT_NAMES = tuple(_constants())


class CardScorer(nn.Module):
    """``width`` shared units per card over its facts, the trunk's features and the trick's facts;
    one score per card, added to the policy logits (zero until trained: ``out`` starts at zero)."""

    def __init__(self, width: int, trunk_width: int):
        super().__init__()
        self.width = int(width)
        self.card = nn.Linear(CARD_FACTS, self.width)
        self.trunk = nn.Linear(trunk_width, self.width, bias=False)
        self.context = nn.Linear(CONTEXT_FACTS, self.width, bias=False)
        self.out = nn.Linear(self.width, 1, bias=False)
        nn.init.zeros_(self.out.weight)
        for name, value in _constants().items():  # fixed tables, rebuilt on load (not in the state dict)
            self.register_buffer(name, value, persistent=False)

    def forward(self, observation: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        """Scores ``[N, 52]`` for observations ``[N, OBS_DIM]`` with trunk features ``[N, trunk_width]``."""
        constants = {name: getattr(self, name) for name in _CONSTANT_NAMES}
        facts, context = card_facts(observation, constants)
        shared = self.trunk(features) + self.context(context)  # [N, width], the same for every card
        units = torch.relu(self.card(facts) + shared[:, None, :])
        return self.out(units).squeeze(-1)
