"""``hearts play`` driven as a person would, through a pseudo-terminal (pexpect), and ``hearts replay``.

Each game runs the real command (``python -m hearts_app.cli play --no-color ...``) in a pty, reads
the screen (the hand rows ``n:card`` with ``*`` on legal cards, the prompts) and types answers.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from hearts_env import cards
from hearts_app.terminal.game import InputError, parse_choice

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[1]
PASS_PROMPT = r"Pass card (\d) of (\d) to (\w+) > "
PLAY_PROMPT = r"Your play \(legal: ([^)\r\n]*)\) > "
ERROR_LINE = r"✗ ([^\r\n]*)\r\n"
HAND_CARD = re.compile(r"(\d+):(10|[2-9JQKA])([♣♦♥♠])([*> ]?)")
MOON_HAND = "AC KC QC JC AD KD QD JD AS KS QS JS AH".split()


def ids(texts) -> list[int]:
    return [cards.parse_card(t) for t in texts]


class Player:
    """A person at the terminal: reads prompts and the shown hand, types lines."""

    def __init__(self, tmp_path: Path, *args: str):
        env = dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONPATH=str(ROOT), TERM="dumb")
        env.pop("NO_COLOR", None)
        self.child = pexpect.spawn(
            sys.executable, ["-m", "hearts_app.cli", "play", "--no-color", *args],
            cwd=str(tmp_path), env=env, encoding="utf-8", timeout=30, dimensions=(50, 220),
        )
        self.output: list[str] = []
        self.hand: list[int] = []  # the shown hand, in display order (numbers 1..)
        self.marked: list[int] = []  # cards shown with '*'
        self.table = ""  # the text shown before the last prompt

    def _saw(self, text: str) -> None:
        self.output.append(text)
        at = text.rfind("Your hand")
        if at >= 0:
            start = text.rfind("\nHand ", 0, at)  # the table: from its title line to the prompt
            self.table = text[start + 1 if start >= 0 else 0 :]
            rows = HAND_CARD.findall(text[at:])
            self.hand = [cards.parse_card(rank + suit) for _, rank, suit, _ in rows]
            assert [int(n) for n, *_ in rows] == list(range(1, len(rows) + 1))
            self.marked = [cards.parse_card(rank + suit) for _, rank, suit, mark in rows if mark == "*"]

    def prompt(self) -> tuple[str, list[int] | None]:
        """Wait for the next prompt: ("pass", None), ("play", legal cards) or ("end", None)."""
        i = self.child.expect([PASS_PROMPT, PLAY_PROMPT, pexpect.EOF])
        self._saw(self.child.before + (self.child.after if i < 2 else ""))
        if i == 0:
            return "pass", None
        if i == 1:
            return "play", ids(self.child.match.group(1).split())
        return "end", None

    def send(self, line: str) -> None:
        self.child.sendline(line)

    def error(self, fragment: str) -> str:
        """The one-line answer to bad input; it names the legal cards and the prompt comes again."""
        self.child.expect(ERROR_LINE)
        line = self.child.match.group(1)
        assert fragment in line, line
        return line

    def expect(self, pattern: str) -> str:
        self.child.expect(pattern)
        self._saw(self.child.before + self.child.after)
        return self.child.after

    def finish(self) -> int:
        self.child.expect(pexpect.EOF)
        self._saw(self.child.before)
        self.child.close()
        return self.child.exitstatus

    @property
    def text(self) -> str:
        return "".join(self.output)


def read_record(path: Path) -> tuple[dict, dict]:
    header, game = [json.loads(line) for line in path.read_text().splitlines()]
    assert header["type"] == "header" and game["type"] == "game"
    return header, game


def human_cards(hand_record: dict) -> list[str]:
    return [card for seat, card in hand_record["actions"] if seat == 0]


def play_out(player: Player, kind: str, legal) -> list[int]:
    """Play legal cards (by number and by text, alternately) until the command ends."""
    sent = []
    while kind != "end":
        assert kind == "play"
        choice = legal[-1]
        player.send(str(player.hand.index(choice) + 1) if len(sent) % 2 else cards.card_text(choice))
        sent.append(choice)
        kind, legal = player.prompt()
    return sent


def replay(path: Path, *args: str) -> tuple[int, str]:
    out = pexpect.run(
        f"{sys.executable} -m hearts_app.cli replay --no-color {' '.join(args)} {path}",
        cwd=str(ROOT), env=dict(os.environ, PYTHONIOENCODING="utf-8", PYTHONPATH=str(ROOT)),
        encoding="utf-8", withexitstatus=True, timeout=60,
    )
    return out[1], out[0]


# ---------------------------------------------------------------------------------------------
# Input parsing (no terminal)
# ---------------------------------------------------------------------------------------------


def test_parse_choice_forms_and_refusals():
    hand = ids("2C 7C QC 5D TH QS AS".split())
    legal = ids(["2C", "7C", "QC"])
    assert parse_choice("QC", hand, legal, passing=False) == ids(["QC"])
    assert parse_choice(" 2 ", hand, legal, passing=False) == ids(["7C"])
    assert parse_choice("q♣", hand, legal, passing=False) == ids(["QC"])
    assert parse_choice("qs 10h, 7", ids(hand), hand, passing=True, picks_left=3) == ids(["QS", "TH", "AS"])
    for line, why in [("", "empty line"), ("zz", "not a card"), ("9", "no card number 9"),
                      ("KH", "do not hold"), ("QS", "cannot be played"), ("2C 7C", "one card at a time")]:
        with pytest.raises(InputError, match=why):
            parse_choice(line, hand, legal, passing=False)
    with pytest.raises(InputError, match="2 more cards to pass, not 3"):
        parse_choice("QS AS 2C", hand, hand[1:], passing=True, picks_left=2)
    with pytest.raises(InputError, match="already chose 2♣"):
        parse_choice("2C", hand, hand[1:], passing=True, picks_left=2)
    with pytest.raises(InputError, match="twice"):
        parse_choice("QS qs", hand, hand, passing=True, picks_left=3)


# ---------------------------------------------------------------------------------------------
# Through a pseudo-terminal
# ---------------------------------------------------------------------------------------------


def test_whole_hand_with_passing_and_bad_input(tmp_path):
    record = tmp_path / "hand.jsonl"
    p = Player(tmp_path, "--seed", "5", "--opponents", "easy,normal,hard", "--hands", "1",
               "--save", str(record))
    kind, _ = p.prompt()
    assert kind == "pass" and "pass left" in p.text and "to West" in p.text
    dealt = p.hand
    assert len(dealt) == 13 and dealt == sorted(dealt) and p.marked == dealt
    p.send("zz")
    assert cards.format_cards(dealt, symbols=True) in p.error("'zz' is not a card")
    assert p.prompt()[0] == "pass"
    p.send("1")
    assert p.prompt()[0] == "pass" and "Pass card 2 of 3" in p.text[-40:]
    p.send("1")
    p.error("you already chose")
    assert p.prompt()[0] == "pass"
    p.send(f"{cards.card_symbol_text(dealt[1]).lower()} 3")  # two at once, by text and by number
    passed = dealt[:3]

    kind, legal = p.prompt()
    assert kind == "play" and "You passed" in p.text
    # Bad input: each gets one line naming the legal cards, then the same prompt again.
    p.send("")
    assert p.error("empty line").endswith("legal: " + cards.format_cards(legal, symbols=True))
    assert p.prompt() == ("play", legal)
    p.child.sendeof()
    p.error("end of input")
    assert p.prompt() == ("play", legal)
    p.send("1x")
    p.error("'1x' is not a card")
    assert p.prompt() == ("play", legal)
    p.send("99")
    p.error("no card number 99")
    assert p.prompt() == ("play", legal)
    not_held = next(c for c in range(52) if c not in p.hand)
    p.send(cards.card_text(not_held))
    p.error(f"you do not hold {cards.card_symbol_text(not_held)}")
    assert p.prompt() == ("play", legal)

    sent, refused_illegal = [], False
    while kind != "end":
        assert kind == "play" and p.marked == legal  # the '*' marks are the legal cards
        illegal = [c for c in p.hand if c not in legal]
        if illegal and not refused_illegal:
            p.send(cards.card_text(illegal[0]))
            p.error(f"{cards.card_symbol_text(illegal[0])} cannot be played now")
            assert p.prompt() == ("play", legal)
            refused_illegal = True
        choice = legal[0]
        p.send(str(p.hand.index(choice) + 1) if len(sent) % 2 else cards.card_text(choice))
        sent.append(choice)
        kind, legal = p.prompt()
    assert p.finish() == 0
    assert refused_illegal and len(sent) == 13
    assert "Hand 1 over." in p.text and "Stopped after 1 hand" in p.text
    for n in range(1, 14):
        assert f"Trick {n}: " in p.text
    # Every move is in the record: the three passes and the thirteen cards typed.
    _, game = read_record(record)
    first = game["hands"][0]
    assert human_cards(first) == [cards.card_text(c) for c in passed + sent]
    assert len(first["actions"]) == 4 * 3 + 52 and sum(first["points"]) in (26, 78)
    assert game["scores"] == first["points"] and not game["finished"]


def test_moon_from_a_fixed_deal_and_its_record_replays(tmp_path):
    deal = tmp_path / "moon.yaml"
    deal.write_text("hand_number: 3  # no pass\nhands:\n  - " + " ".join(MOON_HAND) + "\n")
    record = tmp_path / "moon.jsonl"
    p = Player(tmp_path, "--deal", str(deal), "--seed", "8", "--opponents", "random,easy,normal",
               "--hands", "1", "--save", str(record))
    kind, legal = p.prompt()
    assert "no pass" in p.text and sorted(p.hand) == sorted(ids(MOON_HAND))
    for card in MOON_HAND:  # the highest card each time: every trick is South's
        assert kind == "play" and cards.parse_card(card) in legal
        p.send(card)
        kind, legal = p.prompt()
    assert p.finish() == 0
    assert "You shot the moon!" in p.text
    summary = p.text[p.text.index("Hand 4 over."):]
    for name, points in [("You", 0), ("West", 26), ("North", 26), ("East", 26)]:
        assert re.search(rf"{name}\s+{re.escape(f'{points:+d}')}\s+{points}\s", summary), summary
    _, game = read_record(record)
    assert game["hands"][0]["moon"] == 0 and game["hands"][0]["custom_deal"]
    assert game["scores"] == [0, 26, 26, 26]

    status, out = replay(record)
    assert status == 0, out
    assert "South (human) shot the moon!" in out
    assert "points [0, 26, 26, 26], totals [0, 26, 26, 26] — the same as the record" in out
    assert out.count("Trick ") == 13


def test_ctrl_c_saves_and_resume_continues_the_same_game(tmp_path):
    record = tmp_path / "saved.jsonl"
    p = Player(tmp_path, "--seed", "11", "--opponents", "normal", "--save", str(record))
    assert p.prompt()[0] == "pass"
    three = " ".join(cards.card_text(c) for c in p.hand[-3:])  # three at once: "QS AS KS"
    p.send(three)
    kind, legal = p.prompt()
    for _ in range(2):
        p.send(cards.card_text(legal[0]))
        kind, legal = p.prompt()
    assert kind == "play"
    table_before, hand_before = p.table, p.hand
    assert "trick 3 of 13" in table_before
    p.child.sendintr()  # Ctrl-C: asked to save and quit; n goes on with the same prompt
    p.expect(r"Save and quit\? \[y/n\] ")
    p.send("n")
    assert p.prompt() == ("play", legal) and p.hand == hand_before
    p.child.sendintr()
    p.expect(r"Save and quit\? \[y/n\] ")
    p.send("y")
    assert p.finish() == 0
    assert f"Saved to {record}" in p.text
    _, saved = read_record(record)
    assert human_cards(saved["hands"][0])[:3] == three.split() and not saved["finished"]
    saved_actions = saved["hands"][0]["actions"]

    q = Player(tmp_path, "--resume", str(record), "--hands", "1")
    kind, resumed_legal = q.prompt()
    assert "Resumed" in q.text and "seed 11" in q.text and "West: normal" in q.text
    assert (kind, resumed_legal) == ("play", legal) and q.hand == hand_before
    assert q.table == table_before  # the same hand, trick, scores and cards on the table
    play_out(q, kind, resumed_legal)
    assert q.finish() == 0 and "Hand 1 over." in q.text
    _, final = read_record(record)
    hand = final["hands"][0]
    assert hand["actions"][: len(saved_actions)] == saved_actions and len(hand["actions"]) == 64
    assert final["scores"] == hand["points"] and final["hands"][1]["actions"] == []

    status, out = replay(record)
    assert status == 0 and "the same as the record" in out and "unfinished" in out


def test_two_player_game(tmp_path):
    record = tmp_path / "two.jsonl"
    p = Player(tmp_path, "--rules", "two_player", "--opponents", "easy", "--seed", "2", "--hands", "1",
               "--save", str(record))
    kind, legal = p.prompt()
    assert kind == "play" and "no pass" in p.text and "North: easy" in p.text and "West" not in p.text
    assert len(p.hand) == 13 and all(cards.card_text(c)[0] in "2468TQA" for c in p.hand)
    play_out(p, kind, legal)
    assert p.finish() == 0
    summary = p.text[p.text.index("Hand 1 over."):]
    assert re.search(r"You\s+[+-]\d+", summary) and re.search(r"North\s+[+-]\d+", summary)
    _, game = read_record(record)
    hand = game["hands"][0]
    assert len(hand["dealt"]) == 2 and len(hand["dead"]) == 2 and len(hand["actions"]) == 26
    assert replay(record)[0] == 0


def test_replay_of_arena_records_checks_scores(tmp_path):
    from eval import arena
    from eval.deals import DealSet
    from hearts_env import Rules

    rules = Rules.preset("quick")
    path = tmp_path / "arena.jsonl"
    plan = arena.head_to_head_plan(rules, ["easy"], "random", episode="game")
    arena.run(plan, DealSet.generate(rules, 1, seed=3), seed=1, workers=1, records=path)
    status, out = replay(path, "--all", "--brief")
    assert status == 0, out
    assert out.count("the same as the record") == 4 and "Game over" in out

    lines = path.read_text().splitlines()
    game = json.loads(lines[1])
    game["points"][0] += 1  # a record the engine does not reproduce
    path.write_text("\n".join([lines[0], json.dumps(game)]) + "\n")
    status, out = replay(path)
    assert status == 1 and "MISMATCH" in out
    dealt = game["hands"][0]["dealt"]
    dealt[0], dealt[1] = dealt[1], dealt[0]  # seats swapped: not the seed's deal
    path.write_text("\n".join([lines[0], json.dumps(game)]) + "\n")
    status, out = replay(path)
    assert status == 2 and "not what the seed deals" in out


# ---------------------------------------------------------------------------------------------
# Files from elsewhere: a record never runs code, a --deal file is read as the project reads files
# ---------------------------------------------------------------------------------------------

MARKING_BOT = (
    "from pathlib import Path\n"
    "Path(__file__).with_name('ran').write_text('imported')\n\n"
    "class Bot:\n"
    "    def act(self, observation, action_mask):\n"
    "        return action_mask.argmax(axis=1)\n"
)


def _saved_record(tmp_path: Path, specs: list[str]) -> Path:
    from hearts_app.session import records
    from hearts_app.session.match import Match
    from hearts_env import Rules

    return records.save(tmp_path / "game.jsonl", Match.new(Rules.preset("classic"), 3), specs)


@pytest.mark.parametrize("spec", ["evil.py:Bot", "evil:Bot"])
def test_resume_refuses_user_code_named_by_a_record(tmp_path, monkeypatch, capsys, spec):
    """A record comes from anywhere: its specs may name agents and model files, never code to run."""
    from hearts_app import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.py").write_text(MARKING_BOT)
    path = _saved_record(tmp_path, ["human", "random", spec, "hard"])
    assert cli.main(["play", "--no-color", "--resume", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hearts play: error: {path}: "), lines
    assert repr(spec) in lines[0] and "--opponents" in lines[0], lines
    assert not (tmp_path / "ran").exists() and "evil" not in sys.modules


def test_resume_runs_user_code_the_user_names_with_opponents(tmp_path):
    (tmp_path / "evil.py").write_text(MARKING_BOT)
    path = _saved_record(tmp_path, ["human", "random", "evil.py:Bot", "hard"])
    p = Player(tmp_path, "--resume", str(path), "--opponents", "random,evil.py:Bot,hard", "--hands", "1")
    try:
        assert p.prompt()[0] == "pass"
        assert (tmp_path / "ran").read_text() == "imported"
    finally:
        p.child.close(force=True)


@pytest.mark.parametrize("content, words", [
    ("hand_number: 1.7\n", ["hand_number", "1.7"]),
    ("hand_number: '3'\n", ["hand_number", "'3'"]),
    ("hand_number: yes\n", ["hand_number", "'yes'"]),  # YAML 1.2: a word, not True (= hand 1)
    ("hand_number: true\n", ["hand_number", "True"]),
    ("hand_number: 3\nscores: [1.5, 0, 0, 0]\n", ["scores", "1.5"]),
    ("hand_number: 3\nscores: [off, 0, 0, 0]\n", ["scores", "'off'"]),  # YAML 1.2: not False (= 0)
    ("hand_number: 3\nscores: [true, 0, 0, 0]\n", ["scores", "True"]),
    ("hand_number: 3\nscores: 5\n", ["scores", "5"]),
])
def test_a_deal_file_with_a_non_integer_hand_number_or_score_is_one_line(tmp_path, monkeypatch, capsys, content,
                                                                         words):
    from hearts_app import cli

    monkeypatch.chdir(tmp_path)  # (a game that started by mistake saves its record here)
    path = tmp_path / "deal.yaml"
    path.write_text(content + "hands:\n  - " + " ".join(MOON_HAND) + "\n")
    assert cli.main(["play", "--no-color", "--opponents", "random", "--deal", str(path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"hearts play: error: --deal {path}: "), lines
    assert all(word in lines[0] for word in words), lines
