"""The strong-Wolfe line search LBFGS uses (Nocedal & Wright, algorithms 3.5 and 3.6)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["strong_wolfe"]


def cubic_min(x1: Any, f1: Any, g1: Any, x2: Any, f2: Any, g2: Any, bounds: Any = None) -> Any:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to ``bounds``."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt() if hasattr(d2_square, "sqrt") else d2_square**0.5
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


class _Bracket:
    """Points (step, loss, gradient, directional derivative) bracketing an acceptable step."""

    def __init__(self, t: list, f: list, g: list, gtd: list) -> None:
        self.t, self.f, self.g, self.gtd = t, f, g, gtd

    def set(self, i: int, t: Any, f: Any, g: Any, gtd: Any) -> None:
        self.t[i], self.f[i], self.g[i], self.gtd[i] = t, f, g, gtd


def strong_wolfe(
    obj: Callable[[Any, Any, Any], tuple[float, Any]],
    x: Any,
    t: Any,
    d: Any,
    f: float,
    g: Any,
    gtd: Any,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Any, Any, int]:
    """Returns (loss, flat gradient, step, evaluations) at a step satisfying the strong Wolfe conditions."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = obj(x, t, d)
    evals, ls_iter, done = 1, 0, False
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    br = None
    while ls_iter < max_ls:  # bracketing phase
        if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev) or gtd_new >= 0:
            br = _Bracket([t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], [gtd_prev, gtd_new])
            break
        if abs(gtd_new) <= -c2 * gtd:
            br, done = _Bracket([t], [f_new], [g_new], [gtd_new]), True
            break
        t_next = cubic_min(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10)
        )
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = t_next
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        br = _Bracket([0, t], [f, f_new], [g, g_new], [gtd, gtd_new])
    return _zoom(obj, x, d, f, gtd, br, done, ls_iter, evals, d_norm, c1, c2, tolerance_change, max_ls)  # type: ignore[arg-type]


def _zoom(
    obj: Any,
    x: Any,
    d: Any,
    f: float,
    gtd: Any,
    br: _Bracket,
    done: bool,
    ls_iter: int,
    evals: int,
    d_norm: Any,
    c1: float,
    c2: float,
    tolerance_change: float,
    max_ls: int,
) -> tuple[float, Any, Any, int]:
    insuf_progress = False
    low, high = (0, 1) if br.f[0] <= br.f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(br.t[1] - br.t[0]) * d_norm < tolerance_change:
            break
        t = cubic_min(br.t[0], br.f[0], br.gtd[0], br.t[1], br.f[1], br.gtd[1])
        t, insuf_progress = _keep_inside(t, br.t, insuf_progress)
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= br.f[low]:
            br.set(high, t, f_new, g_new.clone(), gtd_new)
            low, high = (0, 1) if br.f[0] <= br.f[1] else (1, 0)
            continue
        if abs(gtd_new) <= -c2 * gtd:
            done = True
        elif gtd_new * (br.t[high] - br.t[low]) >= 0:
            br.set(high, br.t[low], br.f[low], br.g[low], br.gtd[low])
        br.set(low, t, f_new, g_new.clone(), gtd_new)
    return br.f[low], br.g[low], br.t[low], evals


def _keep_inside(t: Any, bracket: list, insuf_progress: bool) -> tuple[Any, bool]:
    """Move a trial step that hugs an end of the bracket back inside it (zoom safeguard)."""
    hi, lo = max(bracket), min(bracket)
    eps = 0.1 * (hi - lo)
    if min(hi - t, t - lo) >= eps:
        return t, False
    if insuf_progress or t >= hi or t <= lo:
        return (hi - eps if abs(t - hi) < abs(t - lo) else lo + eps), False
    return t, True
