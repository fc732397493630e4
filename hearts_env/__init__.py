"""Hearts Lab: an exact, configurable, batched NumPy engine for the card game Hearts."""

from . import cards, engine
from .aec import env, raw_env
from .engine import EngineArgumentError, IllegalActionError, from_deal, from_deals, init, legal_mask, step, step_inplace
from .rules import PRESETS, Rules, RulesError
from .state import OVER, PASS, PLAY, State

__version__ = "0.1.0"

__all__ = [
    "cards", "engine", "EngineArgumentError", "IllegalActionError", "from_deal", "from_deals", "init", "legal_mask", "step",
    "step_inplace", "PRESETS", "Rules", "RulesError", "OVER", "PASS", "PLAY", "State", "__version__",
    "env", "raw_env",
]


from . import registration  # noqa: E402,F401  (registers the Gymnasium and PettingZoo ids)
