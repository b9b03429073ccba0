"""The library's tunable constants, in one place, each with what it trades.

Every value here was chosen by measurement (``bench/README.md`` has the
history); changing one changes results or speed, never correctness. The
modules that use a constant import it by name, so a test may still patch it
where it is used (``monkeypatch.setattr(fastrbfkm.lloyd, "MANY_CLUSTERS", 4)``).
Block sizes and thresholds inside the kernels stay in ``fastrbfkm._kernels``
(kernel files import only kernels).
"""

from __future__ import annotations

# ----------------------------------------------------------------- annealing
# (fastrbfkm.annealing, fastrbfkm._schedule, fastrbfkm.estimator)

#: Active centers closer than this times sqrt(sigma) are merged into one.
#: Larger merges splits that have not yet opened; smaller keeps near-copies
#: that cost a soft pass each and will only merge later.
MERGE_RADIUS = 1e-2
#: Softmax rows count as hard when the mass off the winner is at most this:
#: the annealing stops there. Smaller costs temperatures for no visible
#: change of the centers (softmax is never exactly one-hot).
SOFTMAX_HARD_TOL = 1e-12
#: A center splits only when its critical temperature is above the next
#: temperature by more than this (relative): right after the start just above
#: sigma_c the two are equal in exact arithmetic (softmax, and entmax15 with
#: k = 2), and the side on which rounding falls must not decide the split
#: (it differs with the order of summation, e.g. over Dask chunks).
SPLIT_MARGIN = 1e-9
#: Of the centers unstable at the next temperature, those whose expected
#: split gain (mass times principal variance of the cell) is at least this
#: fraction of the largest split there; the others wait. 0 splits every
#: unstable center: with many modes in many dimensions that doubles the
#: centers a temperature and gives every branch of the split tree the same
#: number of centers, whatever its mass (200000 x 64, 2000 modes of mixed
#: sizes, k = 1024: the annealing alone at 1.43 of KMeans(n_init=1)'s
#: inertia, against 1.025, 1.020 and 1.018 at 0.5, 0.7 and 0.85, with 19,
#: 22 and 31 temperatures).
SPLIT_GAIN_RATIO = 0.7
#: A fresh split is still opening while the distance between its two
#: centers grows by more than this factor in a soft step; the temperature
#: is not left before it stops. Closer to 1 holds temperatures longer.
SPLIT_OPENING_GROWTH = 1.01
#: Most temperatures a schedule may have (a cooling factor so close to 1
#: that it needs more is refused rather than allocated).
MAX_TEMPERATURES = 100_000
#: RMS size of the symmetry-breaking nudge, relative to the data's spread:
#: large enough to survive rounding, small enough not to bias the split.
PERTURBATION = 1e-3
#: Most soft steps at a temperature once every center is active, in an
#: annealing that ``refine`` finishes (see ``anneal_steps``): more steps
#: follow the soft solution closer at a linear cost, which the hard polish
#: makes up for anyway.
TAIL_STEPS = 10
#: ``anneal_size="auto"`` (:func:`fastrbfkm.annealing.auto_anneal_size`):
#: ``ANNEAL_ROWS_MIN`` rows up to ``MANY_CLUSTERS`` centers; from there the
#: annealing's work (rows x centers) stays at ``ANNEAL_ROWS_MIN x
#: MANY_CLUSTERS`` until it is ``ANNEAL_ROWS_PER_CENTER`` rows a center, and
#: never fewer (a cap of 50000 rows left 12 rows a center at 4096 centers:
#: the polish on that sample overfitted it, and three of the any-k sets
#: ended 0.3-1.3% above KMeans(n_init=1); with 32 rows a center, on
#: 200000 x 32 rows of 8192 isotropic modes, 0.9968 of it instead of
#: 1.0126, in 81 s instead of 49 s, KMeans(n_init=1) 152 s). A soft pass then costs about as
#: much at 256 centers as at 128; with many centers the polish on the sample
#: and then Lloyd and the swaps on every row find the centers the sample
#: could not resolve. At 256 to 1024 centers on the any-k sets, 8192 to
#: 32768 annealed rows instead of 25600 to 50000 took 10-60% less time at
#: 0.0-0.8% more inertia, below KMeans(n_init=1)'s on every set
#: (bench/README.md, "Fewer annealed rows at many centers").
ANNEAL_ROWS_PER_CENTER = 32
ANNEAL_ROWS_MIN = 20_000
#: The polish after an annealing (the choice of start, the swap moves)
#: runs Lloyd to this many times ``tol``; a last Lloyd run on every row
#: ends at ``tol``. Lloyd creeps: on 200000 x 64 rows of 2000 modes at
#: k = 256 from the sample's polished centers, 10 of 82 iterations gave all
#: but 0.06% of the inertia's fall. The swap rounds on every row there:
#: 349 Lloyd iterations at tol, 187 at 100 x tol and a last run at tol
#: (inertia 0.9910 and 0.9915 of KMeans(n_init=1)'s); 1000 x tol misjudged
#: the moves (0.9945).
POLISH_TOL_FACTOR = 100.0
#: With ``MANY_CLUSTERS`` centers or more, most swap rounds on every row
#: after those on the annealing sample (below it, as many as on the sample:
#: a round is one move there). A round of many moves costs a pass for the
#: cells and two Lloyd runs on every row, and after the rounds on the sample
#: each gains little: at k = 1024 on 200000 x 64 rows of 2000 modes, the
#: uncapped rounds were half of the default fit and lowered the inertia by
#: 0.5% (0.9843 of ``KMeans(n_init=1)``'s); one round kept 0.9894 in half
#: the time, none 0.9912.
EVERY_ROW_SWAP_ROUNDS = 1

# -------------------------------------------------------- swap moves (lloyd)

#: From this many centers on, the swap search makes many moves a round
#: (``lloyd._moves_at_once``), with a bounded number of rounds; below it,
#: one move a round, the best of the ranked candidates.
MANY_CLUSTERS = 128
#: Moves a round with many centers: at most one per this many centers.
#: Fewer moves a round are safer, more make fewer rounds (each a Lloyd run).
BATCH_CELLS = 32
#: With many centers, the search stops after a round that lowered the
#: inertia by less than this (relative), at the latest after log2(k)
#: rounds. On blobs with k = 128-2048 (50000-200000 rows, d = 16-64) the
#: rounds kept gaining 0.1-0.3% each up to that cap: 2e-3 stopped many
#: searches early, their fits ending 0.3-1.7% higher on average. On data
#: with more modes than centers (``bench/any_k.py``'s sets) 1e-3 took
#: 15-35% off the default fit at k = 256 and 1024 for 0.0-0.6% of inertia
#: (0.04% on average over six sets at k = 256; the same inertia on the
#: blobs of ``bench/kscale.py`` at k = 512 and 1024, where the k-means++
#: start wins); 2e-4 before.
MIN_ROUND_GAIN = 1e-3
#: Moves of one round conflict when a center of one is among the nearest
#: this many centers of a center of the other.
NEIGHBOURS = 4
#: One move a round: at most this many rounds more than log2(k). On the
#: problems of bench/fit_suite.py and bench/quality.py --sweep the search
#: never kept more than 2 moves.
ONE_MOVE_ROUNDS = 2
#: Free centers r, cheapest first, tried for each cell s when moves are
#: made many at once.
PARTNERS = 16
#: A trial move is kept when it lowers the inertia by more than this
#: (relative): below it, a "gain" may be rounding.
MIN_SWAP_GAIN = 1e-12
#: A one-move trial's Lloyd run stops once its last three decreases of the
#: inertia each shrank and its gap to the inertia it must beat is more than
#: this many times what the rest would add up to if the decreases kept
#: shrinking at the last ratio (``lloyd._losing``). Losing trials on data
#: without clusters crept on for 35-55 iterations. On the 42 problems of
#: bench/fit_suite.py and bench/quality.py --sweep every default fit kept
#: its inertia with 10% fewer Lloyd iterations in all; the default fit of
#: a 30000 x 300 uniform CSR matrix (k = 8, seeds 0-7) took 0.92-1.28 s
#: against 0.84-2.64 s. Cutting on the last decrease alone (10 x) lost a
#: swap trial that crept, then sped up, and won; judging after two
#: shrinking decreases would have lost it had they shrunk once more.
TRIAL_PATIENCE = 2.0

# ------------------------------------------------- mini-batch annealing

#: A split moves the two centers this many standard deviations (along the
#: principal axis of the center's rows) apart: larger than the full fit's
#: nudge, since a moving average over batches opens a split more slowly than
#: converged soft Lloyd steps do.
SPLIT_STEP = 1.0
#: A fresh split is still opening while its gap grows by more than this over
#: a temperature's batches; the temperature is then held, at most MAX_HOLDS
#: times in a row.
OPENING = 0.05
MAX_HOLDS = 10
#: The annealing ends, once every center is active, when the batch's free
#: energy is within this fraction of its inertia (or every row was hard).
COLD_GAP = 1e-3
#: The polish at the end of the annealing (``_end_annealing``): most Lloyd
#: iterations a run, and scikit-learn's relative tolerance.
POLISH_ITER = 100
POLISH_TOL = 1e-4

# ------------------------------------------------- principal axes (Lanczos)

#: Most features for which the scatter matrices are formed; above it the
#: principal pairs come from Lanczos passes over X (memory O(k d) instead of
#: O(k d^2); the two cost about the same near d = 128).
DENSE_MAX = 128
#: Most Lanczos steps (passes over X) per eigenpair.
LANCZOS_STEPS = 20
#: Lanczos steps of a rough estimate (``rough=True`` of
#: :func:`fastrbfkm._axes.principal`): a lower bound of each largest eigenvalue and its Ritz
#: vector, enough to rank and place the swap moves of a fit, which are then
#: kept only when they lower the inertia. The work of the steps grows with
#: their square (each is reorthogonalized against the earlier ones).
ROUGH_STEPS = 4
#: A Ritz pair is taken once its residual is at most this times its value.
LANCZOS_RTOL = 1e-6
#: The same for the annealing's split temperatures and axes (of every active
#: center, at every temperature with spares left). The eigenvalue's error is
#: of the order of the residual squared over the spectral gap: about 1e-4 of
#: a split temperature, far below the cooling's 10-20% steps. Measured on
#: the 2-core EPYC VM (2026-12-05), against 1e-6, default fits: 3000 x 300
#: and 2000 x 1000 blobs 1.3-1.4x faster at the same inertia (3 seeds);
#: standard-library docstrings as TF-IDF (k = 50) inertia within 0.04% either
#: way; 20000 x 384 and 20000 x 768 unit rows (metric="cosine", k = 20 and
#: 200) 2.1x and 1.2x faster at the same objective.
SPLIT_RTOL = 1e-2
#: Most float64 entries of the Lanczos bases held at once (256 MiB).
BASIS_BUDGET = 1 << 25

# ---------------------------------------------------------- rows' passes

#: Most rows, and most float64 entries, of the sub-blocks the moments convert
#: X into (the entries bound wide rows): larger blocks, fewer BLAS calls,
#: more memory.
MOMENT_ROWS = 1 << 16
MOMENT_ENTRIES = 1 << 22
#: Pruned hard passes from this many centers on (fewer: every distance is
#: cheap, and most rows fail their bound anyway).
PRUNE_MIN_CLUSTERS = 16
#: Centers whose shift is above this many times the shift of the
#: ``k / MOVERS_SHARE``-th farthest-moved are movers (at most that many) in
#: a pruned pass: its bounds ignore them and every row's distances to them
#: are formed instead.
MOVER_RATIO = 4.0
#: A soft pass is pruned when the last one left at most this share of the
#: weight soft (not one-hot): hotter, most rows are gathered anyway and
#: the unpruned pass forms their distances with less bookkeeping.
PRUNE_SOFT_SHARE = 0.5
MOVERS_SHARE = 16
#: A pruned hard pass that formed more than this share of the n k
#: row-center distances did not pay (on data without clusters, bounds fail
#: for nearly every row, and the pruned pass costs up to 1.4x an unpruned
#: one): the next passes are unpruned, 1, 2, 4, ... up to
#: ``PRUNE_HARD_WAIT_MAX`` of them after each pruned pass that fails again,
#: the last of them a first pruned pass that forms the bounds anew.
PRUNE_HARD_GIVE_UP = 0.8
PRUNE_HARD_WAIT_MAX = 8

# --------------------------------------------------------------- seeding

#: k-means||: expected candidates drawn per round, per center (l = 2k).
OVERSAMPLING = 2.0
#: k-means||: oversampling rounds (Bahmani et al. find 5 enough).
ROUNDS = 5
#: ``init="k-means++"`` on rows in memory or on a GPU, with more rows than
#: ``max(SEED_ROWS_MIN, SEED_ROWS_PER_CENTER * k)``: greedy k-means++ on a
#: seeded sample of that many rows (drawn in proportion to the weights),
#: then ``SEED_ROUNDS`` k-means|| rounds from those centers over every row
#: (``SEED_OVERSAMPLING * k`` expected candidates a round, each round's
#: distances to its new candidates only) and greedy weighted k-means++ on
#: all the candidates. Greedy k-means++ on every row costs ``2 + log k``
#: distance evaluations a row and seed: on 200000 x 64 rows of 2000 modes at
#: k = 1024 it was two thirds of a hard fit, about 25 unpruned passes' time.
#: There greedy k-means++ on a sample alone ended 1.5% (32 rows a center)
#: and 0.4% (64) above it, k-means|| alone 3.9% (2 rounds of k candidates)
#: and 0.25% (3 rounds); at k = 256, one round after the sample ended 0.13%
#: above it, two rounds 0.08% below (``bench/seeding.py``).
SEED_ROWS_PER_CENTER = 10
SEED_ROWS_MIN = 10_000
SEED_ROUNDS = 2
SEED_OVERSAMPLING = 1.0
#: Most row-distance terms (rows x trials x features x seeds) one kernel call
#: of k-means++ computes: Ctrl-C is handled between calls, at the cost of a
#: call's overhead each.
SEEDING_CALL_WORK = 1 << 27

# -------------------------------------------------------- backends, dask

#: Multiply-adds of one pass (n * d * k) from which "auto" sends host data
#: to a GPU: a few milliseconds of a 2-core CPU, about what copying such a
#: matrix to the device and starting the kernels costs. Not yet tuned on a GPU.
AUTO_MIN_WORK = 1 << 26
#: Partials combined by one task of a dask pass's reduction tree (as
#: ``split_every`` in dask's reductions): few levels, each task still small.
FAN_IN = 8
