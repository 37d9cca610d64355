"""L-BFGS: a quasi-Newton method from a short history of steps and gradient changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._ops.join import cat
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad, no_grad
from ._line_search import strong_wolfe
from .optimizer import Optimizer, check_range

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    r"""L-BFGS (Nocedal), as PyTorch implements it; ``step(closure)`` runs up to ``max_iter`` iterations.

    Each iteration, with flat gradient ``g`` and history pairs ``(s_i, y_i)``, ``rho_i = 1 / y_i.s_i``::

        q = -g;  a_i = rho_i s_i.q;  q -= a_i y_i          (newest to oldest)
        r = (y.s / y.y) q;  b_i = rho_i y_i.r;  r += (a_i - b_i) s_i   (oldest to newest)
        p = p + t r        (t = lr, or from the strong-Wolfe line search)

    Example::

        opt = ember.optim.LBFGS(model.parameters(), lr=1, line_search_fn="strong_wolfe")
        def closure():
            opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); return loss
        opt.step(closure)
    """

    def __init__(
        self,
        params: Any,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_range("learning rate", lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr,
            "max_iter": max_iter,
            "max_eval": max_eval,
            "tolerance_grad": tolerance_grad,
            "tolerance_change": tolerance_change,
            "history_size": history_size,
            "line_search_fn": line_search_fn,
        }
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def _flat_grad(self) -> Tensor:
        from .._creation import zeros

        views = [
            zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape(-1) for p in self._params
        ]
        return cat(views, 0)

    def _add_grad(self, step: Any, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset : offset + n].view_as(p), alpha=step)
            offset += n

    def _evaluate_at(
        self, closure: Callable[[], Any], x: list[Tensor], t: Any, d: Tensor
    ) -> tuple[float, Tensor]:
        self._add_grad(t, d)
        loss = float(closure())
        g = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, g

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Minimise the closure's loss for up to ``max_iter`` iterations; returns the first loss."""
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        def evaluate() -> Any:
            with enable_grad():
                return closure()

        orig_loss = evaluate()
        loss = float(orig_loss)
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= group["tolerance_grad"]:
            return orig_loss
        _Iterations(self, group, state, evaluate).run(loss, flat_grad)
        return orig_loss


_KEY_ORDER = ("func_evals", "n_iter", "al", "d", "t", "old_dirs", "old_stps", "ro", "H_diag")


def _torch_key_order(st: dict[str, Any]) -> None:
    """Reorder the state's keys as PyTorch leaves them, so state dicts list alike."""
    items = dict(st)
    st.clear()
    st.update({k: items.pop(k) for k in _KEY_ORDER if k in items})
    st.update(items)


class _Iterations:
    """The iteration loop of one ``LBFGS.step``; state persists in ``opt.state`` between steps."""

    def __init__(self, opt: LBFGS, group: dict[str, Any], state: dict[str, Any], evaluate: Any) -> None:
        self.opt, self.group, self.state, self.evaluate = opt, group, state, evaluate

    def direction(self, flat_grad: Tensor) -> Tensor:
        st, hist = self.state, self.group["history_size"]
        if st["n_iter"] == 1:
            st.update(old_dirs=[], old_stps=[], ro=[], H_diag=1)
            return flat_grad.neg()
        y = flat_grad.sub(st["prev_flat_grad"])
        s = st["d"].mul(st["t"])
        ys = y.dot(s)
        if ys > 1e-10:
            if len(st["old_dirs"]) == hist:
                for k in ("old_dirs", "old_stps", "ro"):
                    st[k].pop(0)
            st["old_dirs"].append(y)
            st["old_stps"].append(s)
            st["ro"].append(1.0 / ys)
            st["H_diag"] = ys / y.dot(y)
        return self._two_loop(flat_grad)

    def _two_loop(self, flat_grad: Tensor) -> Tensor:
        st = self.state
        dirs, stps, ro = st["old_dirs"], st["old_stps"], st["ro"]
        al = st.setdefault("al", [None] * self.group["history_size"])
        q = flat_grad.neg()
        for i in range(len(dirs) - 1, -1, -1):
            al[i] = stps[i].dot(q) * ro[i]
            q.add_(dirs[i], alpha=-al[i])
        r = q * st["H_diag"]
        for i in range(len(dirs)):
            be_i = dirs[i].dot(r) * ro[i]
            r.add_(stps[i], alpha=al[i] - be_i)
        return r

    def run(self, loss: float, flat_grad: Tensor) -> None:
        g, st, opt = self.group, self.state, self.opt
        lr, evals, n_iter = g["lr"], 1, 0
        while n_iter < g["max_iter"]:
            n_iter += 1
            st["n_iter"] += 1
            d = st["d"] = self.direction(flat_grad)
            prev = st.get("prev_flat_grad")
            st["prev_flat_grad"] = flat_grad.clone() if prev is None else prev.copy_(flat_grad)
            prev_loss = st["prev_loss"] = loss
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if st["n_iter"] == 1 else lr
            st["t"] = t
            gtd = flat_grad.dot(d)
            if gtd > -g["tolerance_change"]:
                break
            loss, flat_grad, t, ls_evals, converged = self._move(t, d, loss, flat_grad, gtd, evals, n_iter)
            st["t"] = t
            evals += ls_evals
            st["func_evals"] += ls_evals
            if n_iter == g["max_iter"] or evals >= g["max_eval"] or converged:
                break
            if d.mul(t).abs().max() <= g["tolerance_change"] or abs(loss - prev_loss) < g["tolerance_change"]:
                break
        _torch_key_order(st)
        del opt

    def _move(
        self, t: Any, d: Tensor, loss: float, flat_grad: Tensor, gtd: Any, evals: int, n_iter: int
    ) -> tuple:
        g, opt = self.group, self.opt
        if g["line_search_fn"] is not None:
            if g["line_search_fn"] != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x0 = [p.clone() for p in opt._params]

            def obj(x: Any, step: Any, direction: Tensor) -> tuple[float, Tensor]:
                return opt._evaluate_at(self.evaluate, x, step, direction)

            loss, flat_grad, t, ls_evals = strong_wolfe(
                obj, x0, t, d, loss, flat_grad, gtd, max_ls=g["max_eval"] - evals
            )
            opt._add_grad(t, d)
            return loss, flat_grad, t, ls_evals, bool(flat_grad.abs().max() <= g["tolerance_grad"])
        opt._add_grad(t, d)
        if n_iter == g["max_iter"]:
            return loss, flat_grad, t, 0, False
        loss = float(self.evaluate())
        flat_grad = opt._flat_grad()
        return loss, flat_grad, t, 1, bool(flat_grad.abs().max() <= g["tolerance_grad"])
