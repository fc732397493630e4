"""Golden games: whole games played by the Python engine, for the JavaScript engine to replay.

``python -m export.golden_games DIR`` writes ``DIR/golden_games.json`` (the JavaScript client keeps a
committed copy in ``clients/js/test/fixtures``; ``clients/js/test/engine.test.js`` replays it and
``tests/test_js_engine.py`` checks the copy is what this module writes).

Each game is played to its end (``engine`` + ``loop.play``) by a mix of the built-in bots
(``agents.make``: easy, normal, hard, random) under one rule set: every preset and a set of option
variants (each moon rule with a moon made, shooter's choice both ways, a moon stopped, J♦ bonus, each
hearts-breaking option, first-trick protection off, other pass cycles and counts, hearts trump at four
players, the short deck at four, the two-player game with and without passing). A variant that must
show an event (a moon, say) plays a batch of seeded games and keeps the first that shows it.

The file (``FORMAT``, version ``VERSION``) holds, per game: ``name``, ``why``, the full ``rules``
(``Rules.to_dict()``), ``seats`` (agent specs), ``seed`` and ``game`` (it is game ``game`` of
``deal.game_seeds(seed, batch)``, ``BATCH`` unless the variant says), ``start_scores``, the ``winner`` and
``hands``; per hand: ``hand_number``, ``deal`` (one character per card id 0..51: the seat it was
dealt to, ``-`` for dead or not in the deck), ``actions`` (``[seat, card id, legal]`` in order, passes
included, ``legal`` being the legal set before the action as a hexadecimal card set, bit ``id``),
``points`` (moon rule and J♦ applied), ``moon`` (seats that shot it) and ``scores`` (totals after).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import agents
from hearts_env import deal, engine, loop, scoring
from hearts_env.rules import Rules

GOLDEN_GAMES_FILE = "golden_games.json"
FORMAT = "hearts-lab-golden-games"
VERSION = 1
#: Games tried per variant (unless it says) while looking for its event (the first that shows it is kept).
BATCH = 24

MIX = ("hard", "normal", "easy", "random")
TWO = ("hard", "normal")

Hand = dict[str, Any]


# ---- what a variant must show -------------------------------------------------------------------

def any_game(rules: Rules, hands: list[Hand]) -> bool:
    return True


def moon_made(rules: Rules, hands: list[Hand]) -> bool:
    return any(any(h["moon"]) for h in hands)


def moon_added(rules: Rules, hands: list[Hand]) -> bool:
    """A moon scored by adding to the others (the shooter's 0)."""
    return any(any(m and p == 0 for m, p in zip(h["moon"], h["points"])) for h in hands)


def moon_subtracted(rules: Rules, hands: list[Hand]) -> bool:
    """A moon scored by subtracting from the shooter."""
    return any(any(m and p < 0 for m, p in zip(h["moon"], h["points"])) for h in hands)


def all_points_taken(rules: Rules, hands: list[Hand]) -> bool:
    """Some seat took every point card in play (with ``moon=off``: a moon that scores as taken)."""
    return any(any(h["shooter"]) for h in hands)


def second_fallback_opens(rules: Rules, hands: list[Hand]) -> bool:
    """A hand whose first two opening cards are dead (the two-player game: 6♣ opens)."""
    return any(all(h["deal"][c] == "-" for c in rules.opening_ids[:2]) for h in hands)


def moon_stopped(rules: Rules, hands: list[Hand]) -> bool:
    """Some seat took Q♠ and all but one to three hearts, and no one shot the moon."""
    return any(not any(h["shooter"]) and max(h["card_points"]) >= rules.moon_points - 3 for h in hands)


# ---- the variants -------------------------------------------------------------------------------

def variants() -> list[dict[str, Any]]:
    """``name``, ``why``, ``rules``, ``seats``, ``seed``, ``start_scores`` (None: 0) and ``needs``."""
    classic, two = Rules.preset("classic"), Rules.preset("two_player")
    short = classic.replace(target_score=50)  # option variants play to 50: shorter games, same rules
    choice = classic.replace(moon="shooters_choice")
    near = [60, 75, 40, 70]  # start scores near the target: a moon game need not be long
    shooters = ("hard", "hard", "random", "easy")
    out = []

    def add(name, why, rules, seats=MIX, start=None, needs=any_game, batch=BATCH):
        rules = rules.replace(name=name) if rules.name == "custom" else rules
        out.append(dict(name=name, why=why, rules=rules, seats=list(seats), seed=len(out) + 1,
                        start_scores=start, needs=needs, batch=batch))

    add("classic", "the classic preset", classic)
    add("quick", "the quick preset (to 50)", Rules.preset("quick"), MIX[::-1])
    add("long", "the long preset (to 150), from scores near it", Rules.preset("long"),
        start=[110, 95, 120, 80])
    add("two_player", "the two-player preset", two, TWO)
    add("two_player_moon", "two players, a 20-point moon made", two, ("hard", "random"), needs=moon_made)
    add("two_player_6c_opens", "two players, 2C and 4C dead: 6C opens", two, ("random", "easy"),
        needs=second_fallback_opens, batch=160)
    add("two_player_pass", "two players passing left, right, none; moon subtracts",
        two.replace(pass_cycle=("left", "right", "none"), moon="subtract_from_self"), TWO[::-1])
    add("moon_add_to_others", "a moon made, added to the others", classic, shooters, near, moon_made)
    add("moon_subtract_from_self", "a moon made, subtracted from the shooter",
        classic.replace(moon="subtract_from_self"), shooters, near, moon_made)
    add("moon_shooters_choice_add", "shooter's choice: adding to the others", choice, shooters,
        needs=moon_added)
    add("moon_shooters_choice_subtract", "shooter's choice: adding would end the game with the shooter not "
        "alone lowest, so it subtracts", choice, ("hard", "random", "hard", "random"), [70, 10, 80, 85],
        moon_subtracted)
    add("moon_off", "moon off: a seat takes every point card and keeps them", classic.replace(moon="off"),
        ("hard", "hard", "random", "random"), near, all_points_taken)
    add("moon_stopped", "a moon stopped: a seat takes Q♠ and all but a few hearts", classic,
        ("hard", "hard", "hard", "normal"), near, moon_stopped)
    add("moon_points_20", "a moon worth 20", classic.replace(moon_points=20), shooters, near, moon_made)
    add("jack_of_diamonds", "J♦ bonus (-10), with a moon made", short.replace(jack_of_diamonds_bonus=True),
        shooters, needs=moon_made)
    add("jack_of_diamonds_5", "J♦ bonus of -5, shooter's choice",
        short.replace(jack_of_diamonds_bonus=True, jack_of_diamonds_points=-5, moon="shooters_choice"))
    add("queen_breaks_hearts", "Q♠ breaks hearts", short.replace(queen_breaks_hearts=True))
    add("queen_waits_for_hearts", "Q♠ may not be led before hearts are broken",
        short.replace(queen_waits_for_hearts=True), MIX[::-1])
    add("queen_waits_and_breaks", "Q♠ waits for hearts and breaks them",
        short.replace(queen_waits_for_hearts=True, queen_breaks_hearts=True))
    add("hearts_open", "hearts need not be broken", short.replace(hearts_must_be_broken=False))
    add("no_first_trick_protection", "points allowed on the first trick",
        short.replace(first_trick_protection=False), ("random",) * 4)
    add("pass_across_one", "pass cycle across, left, right; one card",
        short.replace(pass_cycle=("across", "left", "right"), pass_count=1))
    add("pass_none", "no passing", short.replace(pass_cycle=("none",)))
    add("hearts_trump", "four players, hearts trump", short.replace(trump_suit="H"))
    add("short_deck_four", "four players, the 28-card deck", short.replace(deck="short28"),
        ("hard", "random", "normal", "easy"))
    return out


# ---- playing ------------------------------------------------------------------------------------

def _owner_text(rules: Rules, dealt: np.ndarray) -> str:
    owner = ["-"] * 52
    for seat, hand in enumerate(dealt):
        for card in range(52):
            if int(hand) >> card & 1:
                owner[card] = str(seat)
    return "".join(owner)


def play_games(rules: Rules, seats: list[str], seed: int, start_scores: list[int] | None,
               count: int = BATCH) -> list[dict[str, Any]]:
    """``count`` whole games from ``deal.game_seeds(seed, count)``, each as its ``hands`` and ``winner``."""
    bots = [agents.make(spec, seed=seed * 10 + i, rules=rules) for i, spec in enumerate(seats)]
    scores = None if start_scores is None else np.tile(np.asarray(start_scores, dtype=np.int64), (count, 1))
    state = engine.init_from_seeds(rules, deal.game_seeds(seed, count), 0, scores=scores)
    actions: list[list[list[Any]]] = [[] for _ in range(count)]
    hands: list[list[Hand]] = [[] for _ in range(count)]

    def on_decision(d: loop.Decisions) -> None:
        for game, seat, mask, action in zip(d.games, d.seat, d.mask, d.action):
            legal = sum(1 << int(c) for c in np.flatnonzero(mask))
            actions[game].append([int(seat), int(action), format(legal, "x")])

    def on_hand_end(h: loop.HandsEnded) -> None:
        s = h.state
        raw = scoring.card_points(rules, s.last_hand_won)
        shooter = scoring.moon_shooter(rules, s.last_hand_won, s.last_hand_dead)
        for row, game in enumerate(h.games):
            hands[game].append({
                "hand_number": int(s.last_hand_number[row]),
                "deal": _owner_text(rules, s.last_hand_dealt[row]),
                "actions": actions[game],
                "points": [int(x) for x in s.last_hand_points[row]],
                "moon": [bool(x) for x in s.last_hand_moon[row]],
                "scores": [int(x) for x in s.scores[row]],
                # for choosing games only (not written): points of the cards taken, who took them all
                "card_points": [int(x) for x in raw[row]],
                "shooter": [bool(x) for x in shooter[row]],
            })
            actions[game] = []

    loop.play(state, bots, np.arange(rules.num_players), on_decision=on_decision, on_hand_end=on_hand_end)
    return [{"index": g, "hands": hands[g], "winner": int(state.winner[g])} for g in range(count)]


def golden_game(variant: dict[str, Any]) -> dict[str, Any]:
    """The first game of the variant's batch that shows what it ``needs`` and lasts two hands or more."""
    rules = variant["rules"]
    played = play_games(rules, variant["seats"], variant["seed"], variant["start_scores"], variant["batch"])
    for game in played:
        if len(game["hands"]) >= 2 and variant["needs"](rules, game["hands"]):  # whole games of hands
            break
    else:
        raise RuntimeError(f"golden games: no game of {variant['name']!r} in {variant['batch']} shows "
                           f"{variant['needs'].__name__}")
    hands = [{k: v for k, v in h.items() if k not in ("card_points", "shooter")} for h in game["hands"]]
    start = variant["start_scores"] or [0] * rules.num_players
    return {"name": variant["name"], "why": variant["why"], "rules": rules.to_dict(),
            "seats": variant["seats"], "seed": variant["seed"], "game": game["index"], "start_scores": start,
            "winner": game["winner"],
            "hands": hands}


def golden_games() -> dict[str, Any]:
    return {
        "format": FORMAT, "version": VERSION,
        "note": "written by `python -m export.golden_games DIR` (export/golden_games.py): whole games of the "
                "Python engine; clients/js/test/engine.test.js replays them",
        "games": [golden_game(v) for v in variants()],
    }


def dumps(data: dict[str, Any]) -> str:
    """Compact JSON, one game per line (small, and a change shows as the games it touches)."""
    games = ",\n".join(json.dumps(g, separators=(",", ":"), ensure_ascii=False) for g in data["games"])
    head = json.dumps({k: v for k, v in data.items() if k != "games"}, ensure_ascii=False)[:-1]
    return f'{head}, "games": [\n{games}\n]}}\n'


def write_golden_games(out_dir: str | Path) -> Path:
    """Write ``golden_games.json`` into ``out_dir``; returns its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / GOLDEN_GAMES_FILE
    path.write_text(dumps(golden_games()), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m export.golden_games OUT_DIR   (e.g. clients/js/test/fixtures)",
              file=sys.stderr)
        return 2
    path = write_golden_games(argv[0])
    data = json.loads(path.read_text(encoding="utf-8"))
    hands = sum(len(g["hands"]) for g in data["games"])
    print(f"{path}: {len(data['games'])} games, {hands} hands, {path.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
