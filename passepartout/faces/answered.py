"""How a face says that the small offline model answered.

A reply from the local model (a 135M-parameter model on this machine) reads like any
other, though it is often wrong; so every face that shows replies says so after it,
with the time it took, as Emacs does on the reply's heading.  Another model's reply
gets no mark.
"""

from __future__ import annotations

from passepartout.protocol import Done


def local_mark(done: Done, seconds: float) -> str | None:
    """The words after a turn's reply when the local model answered it, else None."""
    if not done.local or done.cancelled or not done.model:
        return None
    return f"(local model {done.model}, offline, {seconds:.1f} s)"
