"""The gradient of a logistic-regression loss over data larger than a worker's memory, on a
``dask.distributed.LocalCluster`` this script starts.

The loss is plain NumPy code. Given Dask arrays, the gradient mindgrad generates for it (the
same source as for NumPy arrays, printed below) builds a Dask graph: nothing is computed until
``.compute()``, which runs chunk by chunk on the workers, so no worker ever holds the data.
The data is drawn on the workers, chunk by chunk, and never held whole anywhere.

Run: ``python examples/dask_logistic_regression.py [--gigabytes 2] [--worker-memory 1GB]``
(needs ``dask[array]`` and ``distributed``: ``pip install ".[dask]"``; without them it says so
and stops). It prints the generated code, the gradient's
time, the check against the closed form ``x.T @ (sigmoid(x @ w) - y) / n`` (computed by Dask
directly), a few steps of gradient descent, and the peak memory of each worker.
"""

import argparse
import resource
import time

import numpy as np

import mindgrad


def loss(w, x, y):
    """The mean logistic loss of the labels ``y`` (0 or 1) given the scores ``x @ w``:
    log(1 + exp(z)) - y z, written with logaddexp to stay finite."""
    z = x @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def peak_rss():
    """The peak resident memory of this process, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main(argv=None):
    try:
        import dask.array as da
        from dask.distributed import Client, LocalCluster
        from dask.utils import parse_bytes
    except ImportError as e:  # Dask is optional: mindgrad itself does not need it
        print(f"this example needs Dask ({e}); install it with: pip install \".[dask]\" "
              "(or: pip install \"dask[array]\" distributed)")
        return None

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, default=2.0, help="size of the data x")
    parser.add_argument("--worker-memory", default="1GB", help="each worker's memory limit")
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--chunk-megabytes", type=float, default=32.0)
    parser.add_argument("--steps", type=int, default=3, help="steps of gradient descent")
    args = parser.parse_args(argv)

    features = args.features
    rows = int(args.gigabytes * 2**30 / (8 * features))
    chunk = max(1, int(args.chunk_megabytes * 2**20 / (8 * features)))
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=args.worker_memory,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        limit = parse_bytes(args.worker_memory)
        print(f"data x: {rows:,} x {features} float64 = {rows * features * 8 / 2**30:.2f} GiB "
              f"in chunks of {chunk:,} rows; 2 workers of {limit / 2**30:.2f} GiB each")

        draw = da.random.default_rng(0)
        x = draw.standard_normal((rows, features), chunks=(chunk, features))
        true_w = np.linspace(-1.0, 1.0, features)
        y = (draw.random(rows, chunks=chunk) < 1 / (1 + np.exp(-(x @ true_w)))).astype(float)
        w = np.zeros(features)

        gradient = mindgrad.grad(loss)
        lazy = gradient(w, x, y)
        print(f"\nthe gradient is a {type(lazy).__module__}.{type(lazy).__name__}, not "
              "computed yet; the code that built it:\n")
        print(mindgrad.source(gradient, w, x, y))

        start = time.perf_counter()
        g, closed_form = client.compute(
            [lazy, x.T @ (1 / (1 + np.exp(-(x @ w))) - y) / rows], sync=True)
        elapsed = time.perf_counter() - start
        difference = float(np.max(np.abs(g - closed_form)))
        print(f"gradient computed in {elapsed:.1f} s; largest difference from the closed "
              f"form: {difference:.1e} ({'matches' if difference < 1e-12 else 'DIFFERS'})")

        for step in range(args.steps):
            value, g = mindgrad.value_and_grad(loss)(w, x, y)
            value, g = client.compute([value, g], sync=True)
            print(f"step {step}: loss {float(value):.5f}")
            w = w - 2.0 * g

        peaks = client.run(peak_rss)
        for address, peak in sorted(peaks.items()):
            print(f"worker {address}: peak memory {peak / 2**30:.2f} GiB "
                  f"({peak / limit:.0%} of its limit)")
        return difference, max(peaks.values()), limit


if __name__ == "__main__":
    main()
