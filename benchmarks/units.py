"""Sizes and times as people read them.

>>> human_bytes(256 * 2**20), human_bytes(96), format_time(0.0000123), format_time(2.5)
('256MiB', '96B', '12.3 us', '2.5 s')
"""

from __future__ import annotations

__all__ = ["format_time", "human_bytes"]


def human_bytes(count: int) -> str:
    """``1024`` -> ``'1KiB'``; sizes that are no whole number of KiB stay in bytes."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale}{unit}"
    return f"{count}B"


def format_time(seconds: float) -> str:
    """``0.000000512`` -> ``'512 ns'``: three significant digits in the largest fitting unit."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"
