"""Statistics over deals: per-deal means, t-intervals, paired differences, deals needed.

Deals are the independent units. Each deal is replayed under several seatings (and, in a
round-robin, at several tables); the values of one agent on one deal are averaged first, so the
rotations of a deal count once and the luck of the cards cancels in paired differences (the idea
of duplicate bridge). Then over deals:

* the mean with a two-sided Student-t interval ``mean ± t(1 - α/2, n - 1) · sd / √n``;
* paired differences ``a - b`` per deal, with the same interval and the two-sided p-value of
  "no difference";
* deals needed for a chosen interval half-width ``h``: the smallest ``n`` with
  ``t(1 - α/2, n - 1) · sd / √n <= h``, from the observed standard deviation.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.special import ndtri, stdtr, stdtrit  # what scipy.stats.t and .norm compute, without loading scipy.stats


@dataclasses.dataclass(frozen=True)
class Interval:
    """A mean over ``n`` independent units with its confidence interval."""

    mean: float
    low: float
    high: float
    sd: float
    n: int
    confidence: float = 0.95
    p_value: float | None = None  # two-sided, against a true mean of 0 (set for differences)

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict:
        out = {
            "mean": self.mean, "low": self.low, "high": self.high, "half_width": self.half_width,
            "sd": self.sd, "n": self.n, "confidence": self.confidence,
        }
        if self.p_value is not None:
            out["p_value"] = self.p_value
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}


def t_interval(values, confidence: float = 0.95, test_zero: bool = False) -> Interval:
    """Mean of ``values`` (one per independent unit) with its two-sided t-interval.

    With fewer than two values the interval is infinite (nothing can be said about spread).
    ``test_zero`` adds the two-sided p-value of a one-sample t-test against 0.
    """
    x = np.asarray(values, dtype=np.float64).reshape(-1)
    n = int(x.size)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, math.nan, 0, confidence)
    mean = float(x.mean())
    if n < 2:
        return Interval(mean, -math.inf, math.inf, math.nan, n, confidence, math.nan if test_zero else None)
    sd = float(x.std(ddof=1))
    half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
    p_value = None
    if test_zero:
        if sd == 0:
            p_value = 1.0 if mean == 0 else 0.0
        else:
            t_stat = mean / (sd / math.sqrt(n))
            p_value = float(2 * stdtr(n - 1, -abs(t_stat)))  # t.sf(|t|, n - 1), both tails
    return Interval(mean, mean - half, mean + half, sd, n, confidence, p_value)


def paired_interval(a, b, confidence: float = 0.95) -> Interval:
    """The per-unit differences ``a - b`` with their t-interval and p-value (a paired t-test)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired values need the same shape, got {a.shape} and {b.shape}")
    return t_interval(a - b, confidence, test_zero=True)


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided critical value ``t(1 - α/2, df)`` for ``confidence = 1 - α``."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return float(stdtrit(df, 0.5 + confidence / 2))  # t.ppf


def deals_needed(sd: float, half_width: float, confidence: float = 0.95) -> int | None:
    """Smallest number of deals whose t-interval half-width is at most ``half_width`` given ``sd``.

    ``None`` when ``sd`` is unknown (fewer than two deals so far).
    """
    if half_width <= 0:
        raise ValueError(f"half_width must be positive, got {half_width}")
    if not math.isfinite(sd):
        return None
    if sd == 0:
        return 2
    z = float(ndtri(0.5 + confidence / 2))  # norm.ppf
    n = max(2, math.ceil((z * sd / half_width) ** 2))
    # The t quantile is above z, so step up until the t-interval fits (a few steps at most).
    while t_quantile(confidence, n - 1) * sd / math.sqrt(n) > half_width:
        n = max(n + 1, math.ceil((t_quantile(confidence, n - 1) * sd / half_width) ** 2))
    return n


def per_deal_means(deal: np.ndarray, values: np.ndarray, n_deals: int) -> tuple[np.ndarray, np.ndarray]:
    """``(means[n_deals], present[n_deals])``: the mean of ``values`` grouped by ``deal`` index."""
    deal = np.asarray(deal, dtype=np.int64).reshape(-1)
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    counts = np.bincount(deal, minlength=n_deals)
    sums = np.bincount(deal, weights=values, minlength=n_deals)
    present = counts > 0
    means = np.divide(sums, counts, out=np.zeros(n_deals), where=present)
    return means, present
