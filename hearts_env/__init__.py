"""Hearts Lab: an exact, configurable, batched NumPy engine for the card game Hearts."""

from . import cards, engine
from .engine import IllegalActionError, from_deal, from_deals, init, legal_mask, step, step_inplace
from .rules import PRESETS, Rules, RulesError
from .state import OVER, PASS, PLAY, State

__version__ = "0.1.0"

__all__ = [
    "cards", "engine", "IllegalActionError", "from_deal", "from_deals", "init", "legal_mask", "step",
    "step_inplace", "PRESETS", "Rules", "RulesError", "OVER", "PASS", "PLAY", "State", "__version__",
]
