"""``ember.compiler.config``: the knobs of ``ember.compile`` (as ``torch._dynamo.config``)."""

from __future__ import annotations

__all__ = ["config"]


class config:
    """``warmup``: eager calls of a new signature before it is captured (1, as TinyJit: state
    made lazily on a first call, LazyLinear's weights or an optimizer's buffers, exists by the
    capture); ``cache_size_limit``: plans per compiled function before it runs eagerly."""

    warmup = 1
    cache_size_limit = 8
