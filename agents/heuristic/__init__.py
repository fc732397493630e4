"""Heuristic bots at three levels, each an ordered list of rules over the observation:
``easy`` (``easy.py``), ``normal`` (``normal.py``) and ``hard`` (``hard.py``)."""

from agents.base import register

from .easy import EasyBot
from .hard import HardBot
from .normal import NormalBot

register("easy", EasyBot)
register("normal", NormalBot)
register("hard", HardBot)

__all__ = ["EasyBot", "HardBot", "NormalBot"]
