"""`gc_paused`: Python's cycle collector held off while a compile builds many objects.

The IR parser, the frontend's parser and each stage of the compile pipeline build graphs,
webs of reference cycles of ten or so small objects per node, none of which become garbage
before the step ends (Note [Compile-time cost] in `autodiff.pipeline`). It lives in `ir`, the
lowest package, so that every package that compiles can use it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while the block allocates its many small objects:
    the collector's repeated scans of them would otherwise double the time to read a
    10,000-node graph (or a long function). Nested uses leave it as the outermost found it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
