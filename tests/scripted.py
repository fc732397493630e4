"""Helpers for scripted tests that set up deals and play them by card name."""

from __future__ import annotations

import numpy as np

import hearts_env as he
from hearts_env import cards

NO_PASS_HAND = 3  # hand number whose classic pass direction is "none"


def owner_of(rules: he.Rules, fixed: dict[int, str], dead: str = "") -> np.ndarray:
    """A deal: the ``fixed`` cards per seat, ``dead`` set aside, the rest of the deck dealt in
    id order to fill each seat up to ``rules.hand_size``."""
    owner = np.full(cards.NUM_CARDS, -1, dtype=np.int64)
    used = set()
    for seat, text in fixed.items():
        for c in cards.parse_cards(text):
            assert c not in used, f"{cards.card_text(c)} fixed twice"
            owner[c] = seat
            used.add(c)
    dead_ids = set(cards.parse_cards(dead))
    spare = [c for c in cards.cards_of(rules.deck_bits) if c not in used and c not in dead_ids]
    for seat in range(rules.num_players):
        need = rules.hand_size - int((owner == seat).sum())
        assert need >= 0, f"seat {seat} has too many fixed cards"
        for c in spare[:need]:
            owner[c] = seat
        spare = spare[need:]
    assert not spare, "deal does not use the whole deck"
    return owner


def game(rules: he.Rules, fixed: dict[int, str], dead: str = "", hand_number: int = NO_PASS_HAND,
         scores=None, seed: int = 0) -> he.State:
    owner = owner_of(rules, fixed, dead)
    return he.from_deals(rules, owner[None], [hand_number], None if scores is None else [scores], [seed])


def play(state: he.State, moves: str) -> he.State:
    """Step one game through the given card texts, in order."""
    for text in moves.split():
        state = he.step(state, np.array([cards.parse_card(text)]))
    return state


def legal(state: he.State) -> set[str]:
    return {cards.card_text(c) for c in cards.cards_of(state.legal[0])}


def hand(state: he.State, seat: int) -> set[str]:
    return {cards.card_text(c) for c in cards.cards_of(state.hands[0, seat])}


def play_lowest(state: he.State, until_hand_ends: bool = True) -> he.State:
    """Play the lowest legal card for every seat until the current hand ends."""
    start = int(state.hand_number[0])
    while not state.done[0] and (not until_hand_ends or state.hand_number[0] == start):
        state = he.step(state, cards.lowest_card(state.legal))
    return state


def cards_text(text: str) -> set[str]:
    return {cards.card_text(c) for c in cards.parse_cards(text)}
