"""``ember.amp.GradScaler``: PyTorch's dynamic loss scaling.

The inf/NaN check of a step is a few device reductions (one per gradient, then one over their
results per device) read back with a single host synchronisation per step, not one per parameter.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum
from typing import Any

from .._tensor import Tensor
from ..backends.dtypes import float16, float32, float64, int32
from ..compiler._disable import eager_only
from .autocast_mode import _usable

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scales the loss so small float16 gradients survive, unscales before the step, skips
    steps whose gradients overflowed and adapts the scale (PyTorch's schedule)."""

    def __init__(
        self,
        device: str = "cuda",
        init_scale: float = 2.0**16,
        growth_factor: float = 2.0,
        backoff_factor: float = 0.5,
        growth_interval: int = 2000,
        enabled: bool = True,
    ) -> None:
        self._device = device
        self._enabled = enabled
        if enabled and not _usable(device):
            warnings.warn(
                f"ember.{device}.amp.GradScaler is enabled, but {device.upper()} is not available.  Disabling.",
                stacklevel=2,
            )
            self._enabled = False
        if self._enabled:
            assert growth_factor > 1.0, "The growth factor must be > 1.0."
            assert backoff_factor < 1.0, "The backoff factor must be < 1.0."
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(_fresh_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."
        assert self._scale is not None, f"Attempted {funcname} but _scale is None.  " + fix
        assert self._growth_tracker is not None, f"Attempted {funcname} but _growth_tracker is None.  " + fix
        return self._scale, self._growth_tracker

    def _lazy_init(self, dev: Any) -> None:
        from .. import full

        self._scale = full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32, device=dev)

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.device)
            assert self._scale is not None
            return outputs * self._scale.to(device=outputs.device)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(v) for v in outputs)
        if hasattr(outputs, "__iter__"):
            return map(self.scale, outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, allow_fp16: bool) -> dict[Any, Tensor]:
        """Unscale every gradient in place; per device, one 0-d bool tensor: any non-finite."""
        from .. import no_grad, stack

        flags: dict[Any, list[Tensor]] = defaultdict(list)
        with no_grad():  # in place on the gradients, never recorded (create_graph's included)
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype == float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    flags[g.device].append(g.isfinite().all().logical_not())
                    g.mul_(inv_scale.to(device=g.device))
            return {dev: stack(fs).any() for dev, fs in flags.items()}

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale (once per step; ``step`` does it if not)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        assert self._scale is not None
        inv_scale = self._scale.to(float64).reciprocal().to(float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()`` unless a gradient is inf/NaN (then the step is skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        found = state["found_inf_per_device"]
        assert len(found) > 0, "No inf checks were recorded for this optimizer."
        retval = None
        if not bool(_combine(found)):  # the one host synchronisation of the step
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off the scale after a skipped step; grow it after ``growth_interval`` good ones."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = (
                    "new_scale should be a float or a 1-element ember.FloatTensor with requires_grad=False."
                )
                assert new_scale.device.type == self._device, reason
                assert new_scale.numel() == 1, reason
                assert new_scale.requires_grad is False, reason
                scale.copy_(new_scale.reshape(()))
        else:
            infs = [
                f for s in self._per_optimizer_states.values() for f in s["found_inf_per_device"].values()
            ]
            assert len(infs) > 0, "No inf checks were recorded prior to update."
            self._update_scale(scale, tracker, _combine_list(infs, scale.device))
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _update_scale(self, scale: Tensor, tracker: Tensor, found_inf: Tensor) -> None:
        """PyTorch's ``_amp_update_scale_`` in device ops: no host synchronisation."""
        from .. import where

        grown = tracker + 1
        grow = grown >= self._growth_interval
        bigger = scale * self._growth_factor
        new_scale = where(
            found_inf,
            scale * self._backoff_factor,
            where(grow & bigger.isfinite(), bigger, scale),
        )
        new_tracker = where(found_inf | grow, tracker * 0, grown)
        scale.copy_(new_scale)
        tracker.copy_(new_tracker.to(int32))

    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """Scale, factors, interval and tracker as plain numbers (empty when disabled)."""
        if not self._enabled:
            return {}
        return {
            "scale": self.get_scale(),
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._get_growth_tracker(),
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The source state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        if self._enabled:
            assert len(self._per_optimizer_states) == 0, (
                "A GradScaler instance may only be pickled at the beginning "
                "of an iteration, or at the end after scaler.update()."
            )
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _combine(found: dict[Any, Tensor]) -> Tensor:
    """Any non-finite gradient on any device, as one tensor (one host read when tested)."""
    flags = list(found.values())
    return _combine_list(flags, flags[0].device)


def _combine_list(flags: list[Tensor], device: Any) -> Tensor:
    from .. import stack

    return stack([f.to(device=device) for f in flags]).any()


# ember.compile replays the scaler's step and update eagerly (they read found_inf on the host).
GradScaler.step = eager_only(GradScaler.step)  # type: ignore[method-assign]
GradScaler.update = eager_only(GradScaler.update)  # type: ignore[method-assign]
