"""A dask fit on a two-worker cluster, after ``python -m fastrbfkm compile``
and before the tests run several processes at a time: numba's on-disk cache
is not safe when processes compile the same functions at once (numba issue
4807). A fresh clone's first README dask snippet (a client and two worker
processes compiling beside each other) failed twice on a cold cache with an
np.dot size error in hard_assign, and passed on a warm one; here the
workers only load what the compile command wrote."""

from fastrbfkm import RBFKMeans


def on_dask() -> None:
    import dask.array as da
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1) as cluster, Client(cluster):
        X = da.random.default_rng(0).standard_normal((60_000, 32), chunks=(25_000, 32))
        for dtype in ("float32", "float64"):
            RBFKMeans(8, assignment="hard", random_state=0).fit(X.astype(dtype))
            RBFKMeans(8, random_state=0).fit(X.astype(dtype)).predict_proba(X).compute()


if __name__ == "__main__":  # the cluster's worker processes re-import this file
    on_dask()
    print("kernels compiled")
