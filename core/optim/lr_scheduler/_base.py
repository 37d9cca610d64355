"""The scheduler base class: epochs, base learning rates and writing ``lr`` into the groups.

A scheduler's ``get_lr()`` gives the next learning rate of every parameter group, mostly
in PyTorch's recursive ("chainable") form, so two schedulers can act on one optimizer.
``step(epoch)`` uses the closed form where a scheduler has one, as PyTorch does.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...compiler._disable import eager_only
from ..optimizer import Optimizer

__all__ = ["EPOCH_DEPRECATION_WARNING", "LRScheduler", "format_param", "group_values"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch "
    "is different from None, the closed form is used instead of the new chainable form, where available."
)


def group_values(optimizer: Optimizer, key: str) -> list[Any]:
    return [group[key] for group in optimizer.param_groups]


def format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    """One value per parameter group (a scalar is repeated)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has {len(param)} "
                f"values, param_groups has {len(optimizer.param_groups)}."
            )
        return list(param)
    return [param] * len(optimizer.param_groups)


def check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` (and optionally ``_get_closed_form_lr()``)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:  # replayed eagerly by ember.compile, as the optimizers' step
            cls.step = eager_only(cls.__dict__["step"])  # type: ignore[method-assign]

    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an optimizer"
                    )
        self.base_lrs: list[Any] = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates the last ``step()`` set, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list[Any]:
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or jump to ``epoch``) and write the new ``lr`` into the groups."""
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", True):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
                "later, you should call them in the opposite order: `optimizer.step()` before "
                "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
                "of the learning rate schedule.",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True  # kept in the state dict, as PyTorch does
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")


def _track_optimizer_steps(optimizer: Optimizer) -> None:
    """Mark the optimizer when it steps, to warn about a scheduler stepped first."""
    if getattr(optimizer, "_step_tracked", False):
        return
    step = optimizer.step

    def tracked_step(*args: Any, **kwargs: Any) -> Any:
        optimizer._opt_called = True  # type: ignore[attr-defined]
        return step(*args, **kwargs)

    optimizer._opt_called = False  # type: ignore[attr-defined]
    optimizer._step_tracked = True  # type: ignore[attr-defined]
    optimizer.step = tracked_step  # type: ignore[method-assign]


LRScheduler.step = eager_only(LRScheduler.step)  # type: ignore[method-assign]
