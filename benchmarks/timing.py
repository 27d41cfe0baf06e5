"""Timing for the benchmarks: medians over repeated calls."""

from __future__ import annotations

import statistics
import time


def median_time(fn, repeat=30):
    """The median of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def first_and_median(fn, repeat=20):
    """The time of the first call of ``fn`` (it builds the code), then the median of the next
    ``repeat``."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start, median_time(fn, repeat)
