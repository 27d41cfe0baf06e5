"""What ``import mindgrad`` costs a fresh process (a notebook kernel start, a script).

Run: ``python benchmarks/import_time.py [runs]``. Each run is a new interpreter that times
``import numpy, gast`` and then ``import mindgrad``; the script prints the medians and the
part mindgrad adds over numpy and gast (the target is at most 120 ms). Measure with the
package's bytecode compiled, as ``pip install`` leaves it (``python -m compileall mindgrad``
first when ``PYTHONDONTWRITEBYTECODE`` is set): otherwise every run compiles the sources.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

_PROBE = """
import time
t0 = time.perf_counter()
import numpy, gast
t1 = time.perf_counter()
import mindgrad
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def main(runs: int = 15):
    base, own = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                             check=True).stdout.split()
        base.append(float(out[0]))
        own.append(float(out[1]))
    print(f"{runs} fresh processes, medians:")
    print(f"  import numpy, gast   {statistics.median(base) * 1e3:8.1f} ms")
    print(f"  import mindgrad      {statistics.median(own) * 1e3:8.1f} ms  (over numpy and gast)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
