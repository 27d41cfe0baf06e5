"""``python3 -m mindgrad.fuzz --count N --seed S --modes grad,jvp,hvp,value,third --out DIR``

``--jobs J`` runs J processes; ``--modes`` defaults to all eight (``third`` is jvp over jvp over
grad, ``forward3`` jvp three times, ``rfr`` grad over jvp over grad: the slowest; ``vmap`` maps
the function over three examples and differentiates through the map).

``--scipy`` lets the programs call SciPy's functions too (SciPy must be installed).
"""

from __future__ import annotations

import argparse
import collections
import importlib
import tempfile

from mindgrad.fuzz import generator, oracle, runner, shrinker


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m mindgrad.fuzz",
                                     description="Differentiate random NumPy programs and "
                                                 "check every number against finite differences.")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="index of the first program")
    parser.add_argument("--modes", default=",".join(oracle.MODES))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="CPU seconds per program and mode")
    parser.add_argument("--out", default=None, help="write each minimized failure here")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--shrink-max", type=int, default=40,
                        help="shrink at most this many failures per (mode, outcome, error)")
    parser.add_argument("--scipy", action="store_true",
                        help="call scipy.special, scipy.stats.norm and scipy.linalg too")
    opts = parser.parse_args(argv)
    libraries = ("scipy",) if opts.scipy else ()
    for library in libraries:
        try:
            importlib.import_module(library)
        except ImportError:
            parser.error(f"--{library}: {library} cannot be imported here")
    modes = [m for m in opts.modes.split(",") if m]
    unknown = set(modes) - set(oracle.MODES)
    if unknown:
        parser.error(f"unknown modes {sorted(unknown)}: choose from {', '.join(oracle.MODES)}")

    def early(index, mode, result):
        print(f"program {index}, {mode}: {result.outcome}: {result.detail}", flush=True)

    per_mode = {}
    counts, failures, seconds = runner.timed_batch(opts.seed, opts.count, modes, opts.jobs,
                                                   opts.timeout, opts.start, on_failure=early,
                                                   libraries=libraries, seconds=per_mode)
    print(runner.table(counts, per_mode))
    print(f"{opts.count} programs in {seconds:.1f} s ({seconds / max(opts.count, 1):.3f} s each,"
          f" {opts.jobs} job(s))")
    shrunk = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="mindgrad-shrink-") as directory:
        for index, mode, result in failures:
            program = generator.generate(opts.seed, index, libraries=libraries)
            print(f"\n== program {index}, {mode}: {result.outcome}: {result.detail}")
            key = (mode, result.signature)
            if not opts.no_shrink and shrunk[key] < opts.shrink_max:
                shrunk[key] += 1
                program = shrinker.shrink(program, mode, directory)
            print(program.source.rstrip())
            print(f"# inputs: {program.inputs}")
            if opts.out:
                source = program.source + f"\nINPUTS = {program.inputs!r}\nSEED = {program.seed}\n"
                runner.write_failure(opts.out, opts.seed, index, mode, result, source)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
