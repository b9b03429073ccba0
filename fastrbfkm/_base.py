"""The base of the two estimators, :class:`fastrbfkm.RBFKMeans` and
:class:`fastrbfkm.MiniBatchRBFKMeans`: what they share once, as scikit-learn's
``_BaseKMeans`` does for ``KMeans`` and ``MiniBatchKMeans``.

The base holds the shared parameters' constraints and checks, the input door
for the training data and for new data, and the methods of a fitted model
(``predict``, ``predict_proba``, ``transform``, ``score``); each estimator
adds its parameters and its ``fit``.
"""

from __future__ import annotations

import numbers
import warnings
from typing import ClassVar

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import _kernels as K
from ._backend import open_rows
from ._deprecation import caller_level
from ._model import ASSIGNMENTS, METRICS
from ._rows import Rows
from ._threads import one_blas_thread
from ._validation import as_float_array, check_assignment, check_integer_params, check_sigma
from .seeding import INITS


class BaseRBFKMeans(ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """The shared part of the RBF K-Means estimators (not for direct use).

    Subclasses define ``__init__`` with the shared parameters (``n_clusters``,
    ``assignment``, ``sigma``, ``cooling``, ``init``, ``max_iter``, ``tol``,
    ``random_state``, ``verbose``, ``backend``) and their own, extend
    ``_parameter_constraints``, and implement ``fit``. A fitted model has
    ``cluster_centers_``, ``sigma_``, ``soft_sigma_`` and ``assignment``.
    """

    # ------------------------------------------------------------------ checks

    #: The parameters both estimators have, with their types and ranges;
    #: each estimator's ``_parameter_constraints`` adds its own. They are
    #: checked by scikit-learn's ``_validate_params`` at the start of ``fit``:
    #: a wrong value raises its ``InvalidParameterError``, which is a
    #: ``ValueError`` and a ``TypeError``.
    _shared_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "assignment": [StrOptions(set(ASSIGNMENTS))],
        "sigma": [StrOptions({"auto"}), Interval(numbers.Real, 0, None, closed="neither")],
        "cooling": [Interval(numbers.Real, 0, 1, closed="neither")],
        "init": [StrOptions(set(INITS)), callable, "array-like"],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "backend": [StrOptions({"auto", "cpu", "cuda"})],
        "metric": [StrOptions(set(METRICS))],
    }
    _parameter_constraints: ClassVar[dict] = _shared_constraints
    #: Parameters that must be finite where they are numbers.
    _finite_params: ClassVar[tuple[str, ...]] = ("sigma", "tol")

    def _check_params(self) -> None:
        """Check the parameters that do not depend on the data: the declared
        constraints, then finiteness."""
        self._validate_params()
        check_integer_params(self)
        for name in self._finite_params:
            value = getattr(self, name)
            if not isinstance(value, (str, type(None))) and not np.isfinite(value):
                raise ValueError(f"{name} must be finite; got {value!r}.")

    def _most_clusters(self) -> tuple[str, int]:
        """The parameter that bounds the number of centers, and its value."""
        return "n_clusters", int(self.n_clusters)

    def _check_params_against(self, rows: Rows) -> None:
        """Check the parameters that depend on the data's shape and dtype."""
        name, k = self._most_clusters()
        if k > rows.n:
            raise ValueError(f"n_samples={rows.n} should be >= {name}={k}.")
        if not isinstance(self.init, str) and not callable(self.init):
            self._init_array(self.init, rows)

    def _open_fit_rows(self, X, sample_weight) -> Rows:
        """The data of a fit through the input door, with every parameter
        checked (those that depend on the data against its rows source)."""
        self._check_params()
        rows = open_rows(
            X,
            sample_weight,
            self.backend,
            n_clusters=self._most_clusters()[1],
            fit=True,
            estimator=self,
            metric=self.metric,
        )
        self._check_params_against(rows)
        return rows

    def _init_array(self, init, rows: Rows, k: int | None = None) -> np.ndarray:
        """Given initial centers (an array, or what a callable ``init``
        returned for ``k`` centers, by default ``n_clusters``), checked
        against the data."""
        if k is None:
            if isinstance(self.n_clusters, str):  # "auto": the count is not known yet
                names = ", ".join(repr(name) for name in INITS)
                raise ValueError(
                    f"init must be one of {names} or a callable when "
                    "n_clusters='auto': an array fixes the number of clusters."
                )
            k = int(self.n_clusters)
        init = as_float_array(init, "init", dtype=rows.dtype, coordinates=True)
        # scikit-learn's KMeans words these errors so; its users search for them
        if init.ndim != 2 or init.shape[0] != k:
            raise ValueError(
                f"The shape of the initial centers {init.shape} does not match the number "
                f"of clusters {k}: init must have shape (n_clusters, n_features) = "
                f"({k}, {rows.d})."
            )
        if init.shape[1] != rows.d:
            raise ValueError(
                f"The shape of the initial centers {init.shape} does not match the number "
                f"of features of the data {rows.d}: init must have shape (n_clusters, "
                f"n_features) = ({k}, {rows.d})."
            )
        return init

    # ---------------------------------------------------------- fitted model

    def _soft_sigma(self, inertia: float, weight: float, d: int) -> float | None:
        """``soft_sigma_``: ``sigma_`` when positive; after hard iterations of
        a soft fit, twice the pooled variance per feature of the clusters."""
        if self.assignment == "hard":
            return None
        if self.sigma_ > 0:
            return float(self.sigma_)
        pooled = inertia / (weight * d)
        return 2.0 * pooled if pooled > 0 else None

    def _still_soft(self) -> str | None:
        """Why the model is not yet the K-Means model its annealing heads
        for (an estimator whose annealing can stop part-way says so), or
        None."""
        return None

    def _warn_if_soft(self) -> None:
        """A ``ConvergenceWarning``, attributed to the caller, when the model
        is used while its annealing has not ended (:meth:`_still_soft`)."""
        why = self._still_soft()
        if why is not None:
            level = caller_level(("fastrbfkm.", "sklearn."))  # past set_output's wrapper
            warnings.warn(why, ConvergenceWarning, stacklevel=level)

    @one_blas_thread
    def predict(self, X) -> np.ndarray:
        """Index of the nearest center for every row of X.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            New data.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Nearest center, ties to the lowest index (a device array for
            CUDA input; a lazy dask array for dask input, its chunks checked
            when computed).
        """
        rows = self._new_rows(X)
        self._warn_if_soft()
        return rows.labels(self._centers_like(rows))

    @one_blas_thread
    def predict_proba(self, X, sigma: float | None = None) -> np.ndarray:
        """Soft memberships: the fitted assignment's responsibilities of the
        final centers at a temperature.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            New data.
        sigma : float >= 0 or None, default=None
            The temperature, in units of squared distance. None:
            ``soft_sigma_`` (``sigma_`` for a fit that ends soft; a default
            fit ends hard, and gives soft memberships there without
            refitting); one-hot rows when it is None (``assignment="hard"``).
            0 gives one-hot rows. A hard fit takes no positive sigma: it has
            no soft assignment.

        Returns
        -------
        R : ndarray of shape (n_samples, n_clusters)
            Rows summing to 1, largest at the nearest center: entmax15 rows
            are sparse (zero for centers far from a row), softmax rows dense;
            a device array for CUDA input, a lazy dask array for dask input.
        """
        rows = self._new_rows(X)
        self._warn_if_soft()
        if sigma is None:
            soft = getattr(self, "soft_sigma_", None)  # None in models pickled before it
            sigma = self.sigma_ if self.sigma_ > 0 else (soft or 0.0)
        else:
            sigma = check_sigma(sigma)
            if sigma > 0 and self.assignment == "hard":
                raise ValueError(
                    "sigma: an estimator with assignment='hard' has no soft assignment; "
                    "fit with assignment='entmax15' or 'softmax' for soft memberships, or "
                    "use fastrbfkm.responsibilities(X, model.cluster_centers_, sigma)."
                )
        mode = check_assignment(self.assignment) if sigma > 0 else K.HARD
        return rows.responsibilities(self._centers_like(rows), sigma, mode)

    @one_blas_thread
    def transform(self, X) -> np.ndarray:
        """Distances to every center (the cluster-distance space): Euclidean,
        or cosine distances ``1 - x.c`` for ``metric="cosine"``.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            New data.

        Returns
        -------
        D : ndarray of shape (n_samples, n_clusters)
            ``||x - c_k||`` (``1 - x.c_k / ||x||`` for ``metric="cosine"``),
            in X's float dtype (a device array for CUDA input, a lazy dask
            array for dask input).
        """
        rows = self._new_rows(X)
        self._warn_if_soft()
        return rows.metric.distances(rows, self._centers_like(rows))

    @one_blas_thread
    def score(self, X, y=None, sample_weight=None) -> float:
        """Minus the (weighted) K-Means inertia of X at the fitted centers.

        Parameters
        ----------
        X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
            New data.
        y : Ignored
            Not used, present for API consistency.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights with a positive sum.

        Returns
        -------
        score : float
            ``-sum_i w_i min_k ||x_i - c_k||^2`` (for ``metric="cosine"``,
            of the cosine distances ``1 - x_i.c_k / ||x_i||``).
        """
        rows = self._new_rows(X, sample_weight)
        self._warn_if_soft()
        inertia = rows.total_inertia(self._centers_like(rows))
        return -rows.metric.inertia(inertia)

    def _new_rows(self, X, sample_weight=None) -> Rows:
        """New data as a rows source, checked against the fit."""
        check_is_fitted(self)
        centers = self.cluster_centers_
        metric = getattr(self, "metric", "euclidean")  # models pickled before it
        return open_rows(
            X, sample_weight, self.backend, centers=centers, estimator=self, metric=metric
        )

    def _centers_like(self, rows: Rows) -> np.ndarray:
        return np.ascontiguousarray(self.cluster_centers_, dtype=rows.dtype)

    @property
    def _n_features_out(self) -> int:
        return self.cluster_centers_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.sparse = True
        return tags
