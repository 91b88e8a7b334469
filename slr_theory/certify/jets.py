"""Forward-mode jets on interval arrays: first derivatives (duals) and second (2-jets), for the charts' systems."""

from __future__ import annotations

import numpy as np

from ..interval import Interval

__all__ = []


class Dual:
    """An interval with interval first derivatives (forward mode): for the mean-value form."""

    __slots__ = ("d", "v")

    def __init__(self, v: Interval, d: list) -> None:
        self.v, self.d = v, d

    def __add__(self, o):
        if isinstance(o, Dual):
            return Dual(self.v + o.v, [a + b for a, b in zip(self.d, o.d, strict=True)])
        return Dual(self.v + o, self.d)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.v, [-a for a in self.d])

    def __sub__(self, o):
        return self + (-o)

    def __rsub__(self, o):
        return (-self) + o

    def __mul__(self, o):
        if isinstance(o, Dual):
            return Dual(
                self.v * o.v, [self.v * b + o.v * a for a, b in zip(self.d, o.d, strict=True)]
            )
        return Dual(self.v * o, [a * o for a in self.d])

    __rmul__ = __mul__

    def __pow__(self, n: int):
        if n != 2:
            raise ValueError("Dual ** n: n = 2 only")
        return Dual(self.v**2, [2.0 * self.v * a for a in self.d])


class Jet2:
    """An interval with its interval gradient and, unless ``h`` is None, its Hessian in
    ``n`` variables (forward mode; ``h`` holds the upper triangle, ``h[(i, j)]`` for ``i <=
    j``): for the overlaps as functions of a chart's coordinates (:class:`OverlapChart`,
    :class:`EdgeChart`). Constants (floats, intervals) combine without jets of their own."""

    __slots__ = ("g", "h", "v")

    def __init__(self, v: Interval, g: list, h: dict | None) -> None:
        self.v, self.g, self.h = v, g, h

    @classmethod
    def variables(cls, y: list[Interval], second: bool = True) -> list[Jet2]:
        n = len(y)
        zero = Interval(np.zeros(y[0].shape))
        one = Interval(np.ones(y[0].shape))
        pairs = [(i, j) for i in range(n) for j in range(i, n)]
        return [
            cls(
                y[i],
                [one if j == i else zero for j in range(n)],
                dict.fromkeys(pairs, zero) if second else None,
            )
            for i in range(n)
        ]

    def hess(self, i: int, j: int) -> Interval:
        return self.h[(i, j) if i <= j else (j, i)]

    def __add__(self, o) -> Jet2:
        if not isinstance(o, Jet2):
            return Jet2(self.v + o, self.g, self.h)
        h = None if self.h is None else {k: a + o.h[k] for k, a in self.h.items()}
        return Jet2(self.v + o.v, [a + b for a, b in zip(self.g, o.g, strict=True)], h)

    __radd__ = __add__

    def __neg__(self) -> Jet2:
        h = None if self.h is None else {k: -a for k, a in self.h.items()}
        return Jet2(-self.v, [-a for a in self.g], h)

    def __sub__(self, o) -> Jet2:
        return self + (-o)

    def __rsub__(self, o) -> Jet2:
        return (-self) + o

    def __mul__(self, o) -> Jet2:
        if not isinstance(o, Jet2):
            h = None if self.h is None else {k: a * o for k, a in self.h.items()}
            return Jet2(self.v * o, [a * o for a in self.g], h)
        g = [self.v * b + o.v * a for a, b in zip(self.g, o.g, strict=True)]
        h = None
        if self.h is not None:
            h = {
                (i, j): self.v * o.h[(i, j)] + o.v * a + self.g[i] * o.g[j] + self.g[j] * o.g[i]
                for (i, j), a in self.h.items()
            }
        return Jet2(self.v * o.v, g, h)

    __rmul__ = __mul__

    def _compose(self, f0: Interval, f1: Interval, f2: Interval) -> Jet2:
        """``f(self)`` from ``f``, ``f'`` and ``f''`` enclosed at the value."""
        h = None
        if self.h is not None:
            h = {(i, j): f1 * a + f2 * (self.g[i] * self.g[j]) for (i, j), a in self.h.items()}
        return Jet2(f0, [f1 * a for a in self.g], h)

    def sqrt(self) -> Jet2:
        r = self.v.sqrt()
        inv = r.reciprocal()
        return self._compose(r, 0.5 * inv, -0.25 * inv * inv * inv)

    def reciprocal(self) -> Jet2:
        inv = self.v.reciprocal()
        return self._compose(inv, -(inv * inv), 2.0 * inv * inv * inv)
