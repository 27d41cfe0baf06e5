"""The gradient of a logistic-regression loss on Dask arrays, on a ``LocalCluster``.

Run: ``python benchmarks/dask_bench.py [--gigabytes 0.25 0.5 1 2] [--worker-memory 1GB]``
(needs ``dask[array]`` and ``distributed``).

Two tables:

* memory against data size: for each size, a fresh cluster of two single-threaded worker
  processes, each with the memory limit given; the data ``x`` (50 features) is drawn on the
  workers chunk by chunk, and the gradient with respect to the weights (mindgrad's generated
  code, on Dask arrays) is computed once. It prints the time, and each worker's peak resident
  memory (its process's, from its start: the interpreter and libraries included) against its
  limit.
* time against NumPy, on the smallest size (data that fits in memory): the forward pass and
  the gradient on NumPy arrays in this process (one core), and on Dask arrays held in the
  workers' memory (``persist``, two cores), with the gradient over the forward pass of each.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

from dask_logistic_regression import loss  # noqa: E402
from timing import median_time  # noqa: E402  (benchmarks/timing.py)

import mindgrad  # noqa: E402

FEATURES = 50
CHUNK_ROWS = 2**16  # 25 MiB chunks of x


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def data(da, rows):
    draw = da.random.default_rng(0)
    x = draw.standard_normal((rows, FEATURES), chunks=(CHUNK_ROWS, FEATURES))
    true_w = np.linspace(-1.0, 1.0, FEATURES)
    y = (draw.random(rows, chunks=CHUNK_ROWS) < 1 / (1 + np.exp(-(x @ true_w)))).astype(float)
    return x, y


def warm_median(fn):
    """The median of 5 calls of ``fn`` after one (which builds the code and warms the cluster)."""
    fn()
    return median_time(fn, 5)


def memory_table(sizes, worker_memory):
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    from dask.utils import parse_bytes

    limit = parse_bytes(worker_memory)
    print(f"memory against data size: 2 workers of {limit / 2**30:.2f} GiB, one thread each")
    print(f"{'data':>9} {'data/worker limit':>18} {'gradient':>9} {'worker peaks (GiB)':>20} "
          f"{'peak/limit':>11}")
    gradient = mindgrad.grad(loss)
    for gigabytes in sizes:
        rows = int(gigabytes * 2**30 / (8 * FEATURES))
        with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=worker_memory,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            x, y = data(da, rows)
            start = time.perf_counter()
            client.compute(gradient(np.zeros(FEATURES), x, y), sync=True)
            elapsed = time.perf_counter() - start
            peaks = sorted(client.run(peak_rss).values())
        size = rows * FEATURES * 8
        print(f"{size / 2**30:7.2f}Gi {size / limit:17.2f}x {elapsed:8.1f}s "
              f"{', '.join(f'{p / 2**30:.2f}' for p in peaks):>20} "
              f"{max(peaks) / limit:10.0%}")


def time_table(gigabytes, worker_memory):
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    rows = int(gigabytes * 2**30 / (8 * FEATURES))
    gradient = mindgrad.grad(loss)
    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=worker_memory,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        x, y = data(da, rows)
        x, y = client.persist([x, y])
        x_np, y_np = client.compute([x, y], sync=True)
        w = np.zeros(FEATURES)
        rows_out = [
            ("NumPy (1 core)", warm_median(lambda: loss(w, x_np, y_np)),
             warm_median(lambda: gradient(w, x_np, y_np))),
            ("Dask, 2 workers", warm_median(lambda: client.compute(loss(w, x, y), sync=True)),
             warm_median(lambda: client.compute(gradient(w, x, y), sync=True))),
        ]
    print(f"\ntime against NumPy: {rows * FEATURES * 8 / 2**30:.2f} GiB of data that fits in "
          "memory (on Dask, persisted in the workers' memory); medians of 5 calls")
    print(f"{'arrays':<16} {'forward':>9} {'gradient':>9} {'grad/fwd':>9} {'grad/NumPy grad':>16}")
    numpy_grad = rows_out[0][2]
    for name, forward, grad in rows_out:
        print(f"{name:<16} {forward * 1e3:7.1f}ms {grad * 1e3:7.1f}ms {grad / forward:8.2f}x "
              f"{grad / numpy_grad:15.2f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gigabytes", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0])
    parser.add_argument("--worker-memory", default="1GB")
    args = parser.parse_args(argv)
    memory_table(args.gigabytes, args.worker_memory)
    time_table(min(args.gigabytes), args.worker_memory)


if __name__ == "__main__":
    main()
