"""Runs a batch of random programs in several modes, in parallel, and counts the outcomes.

Each job is its own process; each (program, mode) has a limit of CPU time (not of wall time,
so that a loaded machine does not turn slow checks into failures), after which it counts as a
crash of type ``Timeout``. A crash of a class ``known.py`` lists counts as ``known``; the
other failures (wrong, crash) are shrunk and written to ``out``.
"""

from __future__ import annotations

import collections
import contextlib
import multiprocessing
import os
import signal
import tempfile
import time

from mindgrad.fuzz import generator, known, oracle

FAILURES = ("wrong", "crash")


class Timeout(BaseException):
    """A (program, mode) ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds):
    """Raise Timeout in the main thread once the process has used ``seconds`` of CPU time
    (no limit off the main thread, or where there is no ITIMER_PROF)."""
    if not seconds or not hasattr(signal, "setitimer") or not hasattr(signal, "ITIMER_PROF"):
        yield
        return

    def expire(signum, frame):
        raise Timeout()

    old = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def check(program, mode, directory, timeout):
    """``oracle.check_program`` under a time limit; a crash that ``known.py`` accounts for
    comes back as ``known``, naming its issue (a wrong number never does: see ``known``)."""
    try:
        with time_limit(timeout):
            result = oracle.check_program(program, mode, directory)
    except Timeout:
        result = oracle.Result("crash", f"no answer within {timeout} s of CPU time", "Timeout")
    issue = known.known_issue(program.source, mode, result)
    if issue is not None:
        return oracle.Result("known", f"{issue.name} ({issue.area}): {result.detail}",
                             result.error)
    return result


def _work(task):
    seed, index, modes, timeout, directory, libraries = task
    program = generator.generate(seed, index, libraries=libraries)
    outcomes = []
    for mode in modes:
        start = time.perf_counter()
        result = check(program, mode, directory, timeout)
        outcomes.append((mode, result, time.perf_counter() - start))
    return index, outcomes


def run_batch(seed, count, modes=oracle.MODES, jobs=1, timeout=30.0, start=0,
              on_failure=None, libraries=(), seconds=None):
    """``(counts, failures)`` for programs ``start .. start + count - 1`` of batch ``seed``
    (written with ``generator.generate``'s ``libraries``).

    ``counts[mode][outcome]`` counts programs; ``failures`` lists ``(index, mode, Result)``,
    each also passed to ``on_failure`` as soon as it is known. A dict passed as ``seconds``
    gets, per mode, the seconds its checks took in all.
    """
    counts = {m: collections.Counter() for m in modes}
    failures = []
    with tempfile.TemporaryDirectory(prefix="mindgrad-fuzz-") as directory:
        tasks = [(seed, i, tuple(modes), timeout, directory, tuple(libraries))
                 for i in range(start, start + count)]
        if jobs <= 1:
            results = map(_work, tasks)
            pool = None
        else:
            pool = multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=100)
            results = pool.imap_unordered(_work, tasks, chunksize=4)
        try:
            for index, outcomes in results:
                for mode, result, took in outcomes:
                    counts[mode][result.outcome] += 1
                    if seconds is not None:
                        seconds[mode] = seconds.get(mode, 0.0) + took
                    if result.outcome in FAILURES:
                        failures.append((index, mode, result))
                        if on_failure is not None:
                            on_failure(index, mode, result)
        finally:
            if pool is not None:
                pool.terminate()
                pool.join()
    failures.sort(key=lambda f: (f[0], f[1]))
    return counts, failures


def table(counts, seconds=None):
    """The counts as text: one row per mode, one column per outcome (and with ``seconds``, the
    mean seconds per program in that mode)."""
    head = f"{'mode':<6}" + "".join(f"{o:>12}" for o in oracle.OUTCOMES)
    rows = [f"{m:<6}" + "".join(f"{c[o]:>12}" for o in oracle.OUTCOMES) for m, c in counts.items()]
    if seconds is not None:
        head += f"{'s/program':>12}"
        rows = [row + f"{seconds.get(m, 0.0) / max(sum(c.values()), 1):>12.3f}"
                for row, (m, c) in zip(rows, counts.items())]
    return "\n".join([head] + rows)


def timed_batch(*args, **kwargs):
    start = time.perf_counter()
    counts, failures = run_batch(*args, **kwargs)
    return counts, failures, time.perf_counter() - start


def write_failure(out, seed, index, mode, result, source):
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"seed{seed}_{index:05d}_{mode}_{result.outcome}.py")
    header = (f"# mindgrad fuzz: seed {seed}, program {index}, mode {mode}: {result.outcome}\n"
              + "".join(f"# {line}\n" for line in result.detail.splitlines()[:6]))
    with open(path, "w") as fh:
        fh.write(header + source)
    return path
