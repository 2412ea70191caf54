# numpy matrix products through OpenBLAS with its own threads: a checksum
# per round, rounded so that the threads' summation order cannot show.
import sys
import numpy as np
n = int(sys.argv[1]) if len(sys.argv) > 1 else 400
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
rng = np.random.default_rng(1)
a = rng.standard_normal((n, n))
for r in range(1, rounds + 1):
    b = rng.standard_normal((n, n))
    c = a @ b
    a = c / np.linalg.norm(c)
    print(f"round {r} trace {np.trace(a):.6f}", flush=True)
np.save("result.npy", np.round(a, 6))
