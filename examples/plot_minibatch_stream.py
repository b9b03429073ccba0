"""
Mini-batch fitting of a stream
==============================

:class:`fastrbfkm.MiniBatchRBFKMeans` learns from batches it is given one at
a time (``partial_fit``), for data that never sits in memory at once: a
generator, files, a database cursor. The temperature anneals over the
batches (``anneal_batches`` batches a temperature) and reaches the hard
limit, then hard mini-batch K-Means goes on. Here a stream of 400 batches
of 2000 rows (800,000 rows in all) is drawn from 32 Gaussian clusters in 8
dimensions, and the inertia of a held-out set is tracked as the batches
arrive, against scikit-learn's ``MiniBatchKMeans`` on the same batches.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.cluster import MiniBatchKMeans

from fastrbfkm import MiniBatchRBFKMeans

rng = np.random.default_rng(0)
k, d = 32, 8
means = rng.uniform(-20, 20, size=(k, d))


def batch(size):
    """One batch of the stream."""
    which = rng.integers(0, k, size)
    return (means[which] + rng.standard_normal((size, d))).astype(np.float32)


held_out = batch(20_000)
ours = MiniBatchRBFKMeans(n_clusters=k, anneal_batches=4, random_state=0)
theirs = MiniBatchKMeans(n_clusters=k, random_state=0, n_init=1)
seen, ours_inertia, theirs_inertia, sigmas = [], [], [], []
for i in range(400):
    B = batch(2000)
    ours.partial_fit(B)
    theirs.partial_fit(B)
    if i % 10 == 9:
        seen.append((i + 1) * 2000)
        ours_inertia.append(-ours.score(held_out))
        theirs_inertia.append(-theirs.score(held_out))
        sigmas.append(ours.sigma_)

best = held_out.shape[0] * d  # about the inertia at the true means: d per row
print(f"held-out inertia / (n d): ours {ours_inertia[-1] / best:.4f}, "
      f"MiniBatchKMeans {theirs_inertia[-1] / best:.4f}")

fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.5, 6), sharex=True)
top.semilogy(seen, np.array(ours_inertia) / best, label="MiniBatchRBFKMeans")
top.semilogy(seen, np.array(theirs_inertia) / best, label="MiniBatchKMeans")
top.set_ylabel("held-out inertia / (n d)")
top.legend()
bottom.plot(seen, sigmas)
bottom.set_ylabel("sigma_ (0: hard)")
bottom.set_xlabel("rows seen")
plt.show()
