"""Hearts Lab: an exact, configurable, batched NumPy engine for the card game Hearts."""

from . import cards, engine
from .engine import EngineArgumentError, IllegalActionError, from_deal, from_deals, init, legal_mask, step, step_inplace
from .rules import PRESETS, Rules, RulesError
from .state import OVER, PASS, PLAY, State

__version__ = "0.1.0"

__all__ = [
    "cards", "engine", "EngineArgumentError", "IllegalActionError", "from_deal", "from_deals", "init", "legal_mask", "step",
    "step_inplace", "PRESETS", "Rules", "RulesError", "OVER", "PASS", "PLAY", "State", "__version__",
]


def __getattr__(name):
    # The PettingZoo and Gymnasium faces load on first use, so engine-only users skip their imports.
    if name in ("env", "raw_env"):
        from . import aec

        return getattr(aec, name)
    raise AttributeError(f"module 'hearts_env' has no attribute {name!r}")


from . import registration  # noqa: E402,F401  (registers the Gymnasium and PettingZoo ids)
