"""Real model steps replay on every call after the capture: no value a step reads on the host
(an index or target range check, a mask test) may make ember.compile fall back to eager."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import nn

VOCAB, EMB, STEPS = 50, 16, 6


class _LM(nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.emb = nn.Embedding(VOCAB, EMB)
        if kind == "transformer":
            layer = nn.TransformerEncoderLayer(EMB, 2, 32, dropout=0.1)
            self.body: Any = nn.TransformerEncoder(layer, 2)
        else:
            self.body = nn.LSTM(EMB, EMB, 2, dropout=0.1)
        self.head = nn.Linear(EMB, VOCAB)

    def forward(self, x: Any) -> Any:
        h = self.emb(x)
        if self.kind == "transformer":
            mask = nn.Transformer.generate_square_subsequent_mask(x.shape[0])
            h = self.body(h, mask=mask, is_causal=True)
        else:
            h, _ = self.body(h)
        return F.log_softmax(self.head(h), dim=-1)


def _cnn() -> Any:
    return nn.Sequential(
        nn.Conv2d(1, 4, 3),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(36, 5),
    )


def _lm_batch(i: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(i)
    x = ember.tensor(rng.integers(0, VOCAB, (7, 3)))
    return x, ember.tensor(rng.integers(0, VOCAB, (21,)))


def _image_batch(i: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(i)
    return ember.tensor(rng.standard_normal((4, 1, 8, 8)).astype(np.float32)), ember.tensor(
        rng.integers(0, 5, (4,))
    )


CASES: dict[str, tuple[Callable[[], Any], Callable[[int], tuple[Any, Any]], Callable[..., Any]]] = {
    "transformer": (
        lambda: _LM("transformer"),
        _lm_batch,
        lambda out, y: F.nll_loss(out.reshape(-1, VOCAB), y),
    ),
    "lstm": (lambda: _LM("lstm"), _lm_batch, lambda out, y: F.nll_loss(out.reshape(-1, VOCAB), y)),
    "cnn": (_cnn, _image_batch, F.cross_entropy),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_call_after_the_capture_replays_and_equals_eager(case: str) -> None:
    make, batch, loss_fn = CASES[case]
    runs, body = [], [0]
    for compiled in (False, True):
        ember.manual_seed(0)
        model = make()
        opt = ember.optim.Adam(model.parameters(), lr=1e-3)

        def step(x: Any, y: Any, model: Any = model, opt: Any = opt, counting: bool = compiled) -> Any:
            body[0] += counting
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            ember.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            return loss

        fn = ember.compile(step) if compiled else step
        ember.manual_seed(1)
        runs.append(
            [fn(*batch(i)).item() for i in range(STEPS)] + [p.detach().numpy() for p in model.parameters()]
        )
        if compiled:
            assert fn.explain() == []
    assert body[0] == ember.compiler.config.warmup + 1  # the warm-up, the capture, then replays only
    for i, (a, b) in enumerate(zip(*runs)):
        assert np.array_equal(a, b), f"{case}: item {i} differs from eager"
