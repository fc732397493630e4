"""``hearts play``: a game in the terminal, you (South) against agents (``terminal.game``).

Errors about what was asked (bad rules, an unknown agent, an unreadable record) are one line on
stderr and exit code 2, like the other subcommands.
"""

from __future__ import annotations

import argparse
import datetime
import secrets
import sys
from pathlib import Path

import numpy as np
import yaml

from agents import AgentSpecError, is_code_spec, make
from hearts_env.rules import PRESETS, RulesError
from hearts_env.settings_files import parse_value

from .. import arguments
from ..errors import UsageError, writable_file
from ..session import records
from ..session.match import Match
from ..terminal import screen
from ..terminal.game import HumanGame

DEFAULT_OPPONENT = "hard"


class PlayError(ValueError):
    """What the command was asked to do cannot be done; reported in one line, exit code 2."""


def register(subparsers) -> None:
    play = subparsers.add_parser(
        "play",
        help="play a game yourself (South) against three agents, in the terminal",
        description=(
            "Play Hearts as South (player_0) against agents. Type a card as text (QS, 10h, q♠) or by its "
            "number in your hand; when passing, one card per prompt or three at once (QS AS KS). "
            "Ctrl-C asks whether to save and quit; --resume FILE continues a saved game. See docs/play.md."
        ),
    )
    play.add_argument("--opponents", metavar="SPECS",
                      help=f"agent specs for the other seats, comma separated, clockwise from West "
                           f"(random, easy, normal, hard, ckpt:PATH, onnx:PATH); one spec fills every "
                           f"seat (default {DEFAULT_OPPONENT}; with --resume: the record's)")
    play.add_argument("--rules", help=f"preset ({', '.join(PRESETS)}) or a YAML/JSON file (default classic)")
    play.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE", help="override one option")
    play.add_argument("--seed", type=arguments.seed,
                      help="seed of the deals, 0 to 2**63 - 1 (default: a random one, shown and recorded)")
    play.add_argument("--save", metavar="FILE",
                      help="keep the game record here (saved after every hand, on quit and at the end; "
                           "default on quit: hearts-game-DATE.jsonl; with --resume: the resumed file)")
    play.add_argument("--resume", metavar="FILE",
                      help="continue a saved game (rules, seed, opponents from it)")
    play.add_argument("--deal", metavar="FILE",
                      help="fix the first deal: a YAML/JSON file with hands (by seat; omitted seats are "
                           "dealt at random), hand_number and scores (practice, tests; see docs/play.md)")
    play.add_argument("--hands", type=arguments.positive_int, metavar="N",
                      help="stop after N hands (the record can be resumed)")
    play.add_argument("--no-color", action="store_true", help="plain text, no colours or styles")
    play.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    console = screen.make_console(args.no_color)
    try:
        if args.resume:
            fixed = (("--rules", args.rules), ("--rule", args.rule), ("--seed", args.seed), ("--deal", args.deal))
            given = [flag for flag, value in fixed if value is not None and value != []]
            if given:
                raise PlayError(f"{', '.join(given)} cannot go with --resume (the record fixes them)")
            match, game = records.resume(args.resume)
            if match.over:
                raise PlayError(f"{args.resume}: this game is over; nothing to resume (see: hearts replay)")
            specs = (game.get("specs") or [])[1:]
            if args.opponents:
                specs = _opponent_specs(args.opponents, match.num_players)
            elif len(specs) != match.num_players - 1:
                raise PlayError(f"{args.resume}: the record names no opponents; give --opponents")
            else:
                _refuse_code_from_record(args.resume, specs)
            save_path = Path(args.save or args.resume)
        else:
            match = _new_match(args)
            specs = _opponent_specs(args.opponents or DEFAULT_OPPONENT, match.num_players)
            save_path = Path(args.save) if args.save else None
        if save_path is not None:  # found now, not when the first hand is saved
            try:
                writable_file(save_path, "the game record (--save)")
            except UsageError as err:
                raise PlayError(str(err)) from None
        seed = match.seed if match.seed is not None else 0
        played = sum(len(h["actions"]) for h in match.hands)
        opponents = {
            seat: _make_agent(spec, _agent_seed(seed, seat, played), match.rules)
            for seat, spec in enumerate(specs, 1)
        }
    except (PlayError, RulesError, records.RecordError) as err:
        print(f"hearts play: error: {err}", file=sys.stderr)
        return 2
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    game = HumanGame(
        match, opponents, ["human", *specs], console, save_path=save_path,
        default_save=Path(f"hearts-game-{stamp}.jsonl"), hands=args.hands,
    )
    return game.run(resumed=bool(args.resume))


def _new_match(args: argparse.Namespace):
    rules = arguments.load_rules(args.rules or "classic", args.rule)  # the --rules / --rule handling of every command
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    if not args.deal:
        return Match.new(rules, seed)
    path = Path(args.deal)
    if path.exists() and not path.is_file():  # a folder, or a device such as /dev/zero that never ends
        raise PlayError(f"--deal {path}: not a file; name a YAML/JSON file (see docs/play.md)")
    try:  # read as every settings file is read (YAML 1.2: `off` is a word, not False)
        data = parse_value(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise PlayError(f"--deal {path}: cannot read it ({err.strerror or err})") from None
    except UnicodeDecodeError as err:  # a binary file, or text in another encoding (latin-1, ...)
        raise PlayError(f"--deal {path}: not YAML/JSON (not UTF-8 text: byte {err.start + 1} is invalid)") from None
    except yaml.YAMLError as err:
        raise PlayError(f"--deal {path}: not YAML/JSON ({' '.join(str(err).split())})") from None
    except RecursionError:  # nested deeper than the YAML reader recurses
        raise PlayError(f"--deal {path}: not YAML/JSON (nested too deeply)") from None
    if not isinstance(data, dict) or not isinstance(data.get("hands"), list):
        raise PlayError(f"--deal {path}: expected a mapping with 'hands' (a list by seat), see docs/play.md")
    unknown = set(data) - {"hands", "hand_number", "scores"}
    if unknown:
        raise PlayError(f"--deal {path}: unknown key(s) {sorted(unknown)}; keys: hands, hand_number, scores")
    hand_number, scores = data.get("hand_number", 0), data.get("scores")
    if not _is_int(hand_number):
        raise PlayError(f"--deal {path}: hand_number must be a whole number (0 for the first hand), "
                        f"got {_shown(hand_number)}")
    if scores is not None and not (isinstance(scores, list) and all(_is_int(score) for score in scores)):
        raise PlayError(f"--deal {path}: scores must be a list of whole numbers, one per seat, got {_shown(scores)}")
    try:
        return Match.new(rules, seed, hand_number, data["hands"], scores)
    except (ValueError, TypeError) as err:
        raise PlayError(f"--deal {path}: {err}") from None


def _is_int(value) -> bool:
    """A whole number as the file wrote it: not a bool, not a float (1.7 or 2.0), not text ("3")."""
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value, limit: int = 60) -> str:
    """A value from a file, for a one-line message (cut short)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _opponent_specs(text: str, num_players: int) -> list[str]:
    specs = [s.strip() for s in text.split(",")]
    if any(not s for s in specs):
        raise PlayError(f"--opponents {text!r}: an empty spec; write e.g. easy,normal,hard")
    if len(specs) == 1:
        specs = specs * (num_players - 1)
    if len(specs) != num_players - 1:
        raise PlayError(
            f"--opponents {text!r}: this game has {num_players - 1} opponent(s); give that many specs or one"
        )
    return specs


def _refuse_code_from_record(path: str, specs: list[str]) -> None:
    """A record comes from anywhere: the specs in it may name agents and model files (``ckpt:``,
    ``onnx:``, only ever read as data), never code to run. The user's own --opponents may."""
    code = next((spec for spec in specs if is_code_spec(spec)), None)
    if code is not None:
        raise PlayError(f"{path}: the record names user code as an opponent ({code!r}), which a record cannot "
                        f"run; to run it, pass the opponents yourself with --opponents")


def _agent_seed(seed: int, seat: int, actions_so_far: int) -> int:
    return int(np.random.SeedSequence([abs(int(seed)), seat, actions_so_far]).generate_state(1)[0])


def _make_agent(spec: str, seed: int, rules):
    try:  # every spec (ckpt:PATH, onnx:PATH too), with one-line errors
        return make(spec, seed=seed, rules=rules)  # rules: a model made for another game is refused
    except AgentSpecError as err:
        raise PlayError(str(err)) from None  # names the spec: unknown, file not found, other rules, ...
