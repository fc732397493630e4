"""The games API: ``GET /api/v1/options``, ``POST /api/v1/games``, ``GET /api/v1/games/{id}``,
``POST /api/v1/games/{id}/play``, ``GET /api/v1/games/{id}/record`` over a ``games.GameStore``
(views from ``view``). Refusals are ``GameError`` (``app`` answers them)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from hearts_env import cards
from hearts_env.rule_space import OFFERED_CHOICES
from hearts_env.rules import PRESETS

from ..bots import AgentInfo
from ..games import GameError, GameStore, default_opponents
from ..schemas import NewGame, Play


def option_choices() -> dict[str, list]:
    """Each option the page sets, with its choices (the real ``Rules`` field names and values): the
    options the rule families cover (``hearts_env.rule_space.OFFERED_CHOICES``)."""
    return copy.deepcopy(OFFERED_CHOICES)


def router(store: GameStore, offered: Sequence[str], info: dict[str, AgentInfo]) -> APIRouter:
    """The games API over ``store``, offering the ``offered`` agents (``info``: the presets each plays)."""
    routes = APIRouter(prefix="/api/v1", tags=["games"])
    offered = list(offered)
    by_preset = {name: [s for s in offered if name in info[s].presets] for name in PRESETS}

    @routes.get("/options")
    def options() -> dict[str, Any]:
        """Presets (with their rules), the options the page offers and the offered agents."""
        return {
            "presets": list(PRESETS),
            "preset_rules": {name: rules.to_dict() for name, rules in PRESETS.items()},
            "options": option_choices(),
            "agents": offered,
            "agents_by_preset": by_preset,
            "default_opponents": default_opponents(offered),
        }

    @routes.post("/games", status_code=201)
    def create_game(body: NewGame) -> dict[str, Any]:
        """A new game; the opponents play up to your first decision. Returns the game's view."""
        return store.create(body.preset, body.rules, body.opponents, body.seed)

    @routes.get("/games/{game_id}")
    def get_game(game_id: str) -> dict[str, Any]:
        """The game as you see it (after a restart, loaded from its record)."""
        return store.view(game_id)

    @routes.post("/games/{game_id}/play")
    def play(game_id: str, body: Play) -> dict[str, Any]:
        """Play a card (or pick one to pass); the opponents play up to your next decision."""
        try:
            card = cards.parse_card(body.card)
        except ValueError as err:
            raise GameError(422, f"card: {err}") from None
        return store.play(game_id, card)

    @routes.get("/games/{game_id}/record")
    def record(game_id: str):
        """The game's record (JSON lines; ``hearts replay FILE``), once the game is over."""
        with store.locked(game_id) as game:
            if not game.match.over:
                raise GameError(409, "the record is available when the game is over: it shows every "
                                     "hand as dealt (the seed deals them all)", reason={"code": "record_not_ready"})
            text = game.path.read_text(encoding="utf-8")
        return Response(text, media_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="hearts-game-{game_id}.jsonl"'})

    return routes
