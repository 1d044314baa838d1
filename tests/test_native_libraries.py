"""Kernel libraries go with the last kernel that uses them (issue 29, item 5).

Each compiled kernel maps its shared object (five mappings, ~20-30 KB resident); a
long-running service that builds many specialisations must not keep every one. The
native backend holds its compiled kernels weakly, and a library is closed (``dlclose``)
once nothing refers to it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="counts mappings in /proc/self/maps")

_SCRIPT = r"""
import gc, json, sys
import numpy as np
import portakern as pk
from portakern.backends.native_build import loaded_libraries

SRC = '''
@kernel void addk(float* y, const float* x) {
    const long i = @index(Global, Linear);
    y[i] = x[i] + {{ K }};
}
'''
N = int(sys.argv[1])

def maps():
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)

x = np.arange(16, dtype=np.float32)
y = np.empty_like(x)
warm = pk.kernel(SRC, K=-1)
warm(y, x, ndrange=16)
del warm
gc.collect()
base = (loaded_libraries(), maps())
kept = [pk.kernel(SRC, K=i) for i in range(N)]
for i, k in enumerate(kept):
    k(y, x, ndrange=16)
    assert (y == x + i).all()
twin = pk.kernel(SRC, K=0)  # the same source: the same library, shared
twin(y, x, ndrange=16)
gc.collect()
held = (loaded_libraries(), maps())
del kept, k
gc.collect()
dropped = (loaded_libraries(), maps())
twin(y, x, ndrange=16)  # still loaded: its twin's going did not close it
assert (y == x).all()
del twin
gc.collect()
print(json.dumps({"base": base, "held": held, "dropped": dropped,
                  "gone": (loaded_libraries(), maps())}))
"""


def test_unreachable_kernels_release_their_libraries(cache_dir):
    n = 4
    env = dict(os.environ, PORTAKERN_CACHE_DIR=str(cache_dir), PORTAKERN_CPU="native")
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(n)], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.splitlines()[-1])
    (lib0, maps0), (lib1, maps1) = got["base"], got["held"]
    assert lib1 - lib0 == n and maps1 - maps0 >= 2 * n  # each library open and mapped
    assert got["dropped"][0] - lib0 == 1  # only the twin's (K=0) is left
    assert got["gone"][0] == lib0 and got["gone"][1] <= maps0  # every mapping went
