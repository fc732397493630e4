import numpy as np
import pytest

from hearts_env import cards


def test_card_id_contract():
    assert cards.parse_card("2C") == 0
    assert cards.parse_card("JD") == 22
    assert cards.parse_card("2H") == 26 and cards.parse_card("AH") == 38
    assert cards.parse_card("QS") == 49 and cards.parse_card("AS") == 51
    assert [cards.card_text(c) for c in (0, 22, 49, 51)] == ["2C", "JD", "QS", "AS"]


@pytest.mark.parametrize("text", ["10H", "th", "TH", "10♥", "t♥", " Th "])
def test_parse_accepts_variants(text):
    assert cards.parse_card(text) == cards.parse_card("TH")


def test_parse_symbols_and_lower_case():
    assert cards.parse_card("q♠") == 49
    assert cards.parse_card("a♦") == cards.parse_card("AD")


@pytest.mark.parametrize("bad", ["", "Q", "1H", "QX", "11S", "QSS", "♠Q"])
def test_parse_rejects_with_help(bad):
    with pytest.raises(ValueError, match="not a card"):
        cards.parse_card(bad)


def test_card_text_rejects_out_of_range():
    with pytest.raises(ValueError, match="0..51"):
        cards.card_text(52)


def test_round_trip_all_cards():
    for c in range(52):
        assert cards.parse_card(cards.card_text(c)) == c
        assert cards.parse_card(cards.card_symbol_text(c)) == c


def test_suits_are_contiguous_slices():
    for s in range(4):
        assert cards.cards_of(cards.SUIT_BITS[s]) == list(range(13 * s, 13 * s + 13))


def test_mask_bits_round_trip():
    rng = np.random.default_rng(0)
    masks = rng.random((100, 52)) < 0.3
    bits = cards.from_mask(masks)
    assert np.array_equal(cards.to_mask(bits), masks)
    assert np.array_equal(cards.count(bits), masks.sum(1))


def test_lowest_highest_nth():
    bits = np.array([cards.bits_of(cards.parse_cards("3C QH AS"))])
    assert cards.lowest_card(bits)[0] == cards.parse_card("3C")
    assert cards.highest_card(bits)[0] == cards.parse_card("AS")
    assert [cards.nth_card(bits, np.array([k]))[0] for k in range(3)] == cards.parse_cards("3C QH AS")
