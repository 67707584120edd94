"""ML: the GrCUDA paper's machine-learning ensemble. A categorical Naive Bayes and a Ridge
classifier score the same partitioned rows of word counts, each ends in a softmax, and the
ensemble label is the argmax of the sum. The Ridge branch normalises the columns with
statistics over all partitions (a chain of combines on one device, then a finalize that every
partition reads); the Naive Bayes branch has no cross-partition step: an imbalanced DAG.
The input rows stay on the devices between runs (the paper initialises them once)."""

import numpy as np

from .common import (BLOCK, fmt_bytes, Workload, cdiv, chunked_sum, grid_1d, load_kernels, np_hash,
                     np_uniform, partitions, sample_indices, sample_partitioned,
                     stats_geometry)

NAME, TITLE = "ml", "ML"
#: (rows, features)
SIZES = {"tiny": (2048, 64), "small": (1 << 16, 1024), "medium": (1 << 18, 1024),
         "large": (1 << 20, 1024),
         # the GrCUDA paper's range: 1.0M to 1.8M rows of 1024 features
         "paper-min": (1_000_000, 1024), "paper-mid": (1_400_000, 1024),
         "paper-max": (1_800_000, 1024)}
PARTITIONS = 16
CLASSES = 16
SAMPLE_LIMIT = 1 << 16  # rows whose label is checked
#: model parameters: (seed, scale, offset) of ml_init_param: offset + scale * u
NB_LOGP, NB_PRIOR = (10, -4.0, 0.0), (11, -1.0, 0.0)
RR_COEF, RR_ICPT = (12, 1.0 / 16, -1.0 / 32), (13, 1.0, -0.5)


def describe(size):
    """The size in words."""
    rows, f = size
    return "%d rows x %d int32 features, %d classes (%s of input)" % (
        rows, f, CLASSES, fmt_bytes(4 * rows * f))


def device_bytes(size):
    """Device memory over all GPUs: input, normalised input, two score matrices."""
    rows, f = size
    return 8 * rows * f + 8 * rows * CLASSES + 16 * rows


def sample_total(size):
    """Number of output elements: one label per row."""
    return size[0]


def extra_args(size):
    """Arguments of the other versions besides --n (rows)."""
    return ["--f", str(size[1])]


def n_of(size):
    """The --n argument of the other versions."""
    return size[0]


class Polygpu(Workload):
    """ML through polygpu: 13 kernels per partition plus the cross-partition chain."""

    def __init__(self, rt, size, nparts):
        self.rt, (self.rows, self.f) = rt, size
        self.ks = load_kernels(rt, "ml")
        self.parts = partitions(self.rows, nparts)

    def _param(self, shape, spec):
        seed, scale, offset = spec
        a = self.rt.array("float32", shape)
        n = int(np.prod(shape))
        self.ks.ml_init_param(grid_1d(n), BLOCK)(a, n, seed, scale, offset)
        return a

    def setup(self):
        rt, ks, f, c = self.rt, self.ks, self.f, CLASSES
        self.logp = self._param((c, f), NB_LOGP)
        self.prior = self._param(c, NB_PRIOR)
        self.coef = self._param((c, f), RR_COEF)
        self.icpt = self._param(c, RR_ICPT)
        self.x = [rt.array("int32", (r, f)) for _, r in self.parts]
        for (row0, r), x in zip(self.parts, self.x):
            ks.ml_init_x(grid_1d(r * f), BLOCK)(x, row0, r, f)
        self.psum = [rt.array("float64", f) for _ in self.parts]
        self.psumsq = [rt.array("float64", f) for _ in self.parts]
        self.tsum, self.tsumsq = rt.array("float64", f), rt.array("float64", f)
        self.mean, self.istd = rt.array("float32", f), rt.array("float32", f)
        self.z = [rt.array("float32", (r, f)) for _, r in self.parts]
        self.r1 = [rt.array("float32", (r, c)) for _, r in self.parts]
        self.r2 = [rt.array("float32", (r, c)) for _, r in self.parts]
        self.amax = [rt.array("float32", r) for _, r in self.parts]
        self.lse = [rt.array("float32", r) for _, r in self.parts]
        self.label = [rt.array("int32", r) for _, r in self.parts]

    def run(self):
        ks, f, c, n, B = self.ks, self.f, CLASSES, self.rows, BLOCK
        P = range(len(self.parts))
        rows = [r for _, r in self.parts]
        # Ridge: column statistics per partition, combined on one device, then normalise.
        for i in P:
            grid, chunk = stats_geometry(rows[i], f)
            ks.ml_zero_stats(grid_1d(f), B)(self.psum[i], self.psumsq[i], f)
            ks.ml_rr_stats(grid, B)(self.psum[i], self.psumsq[i], self.x[i], rows[i], f, chunk)
        for i in P:
            ks.ml_rr_combine(grid_1d(f), B)(
                self.tsum, self.tsumsq, self.psum[i], self.psumsq[i], f, int(i == 0))
        ks.ml_rr_finalize(grid_1d(f), B)(self.mean, self.istd, self.tsum, self.tsumsq, n, f)
        for i in P:
            r = rows[i]
            ks.ml_rr_normalize(grid_1d(r * f), B)(
                self.z[i], self.x[i], self.mean, self.istd, r, f)
            ks.ml_rr_project(grid_1d(r * c), B)(
                self.r2[i], self.z[i], self.coef, self.icpt, r, f, c)
        # Naive Bayes: independent per partition.
        for i in P:
            r = rows[i]
            ks.ml_nb_scores(grid_1d(r * c), B)(
                self.r1[i], self.x[i], self.logp, self.prior, r, f, c)
            ks.ml_nb_rowmax(grid_1d(r), B)(self.amax[i], self.r1[i], r, c)
            ks.ml_nb_logsumexp(grid_1d(r), B)(self.lse[i], self.r1[i], self.amax[i], r, c)
            ks.ml_nb_exp(grid_1d(r * c), B)(self.r1[i], self.lse[i], r, c)
        # Both softmaxes, then the ensemble.
        for i in P:
            r = rows[i]
            ks.ml_softmax(grid_1d(r), B)(self.r2[i], r, c)
            ks.ml_softmax(grid_1d(r), B)(self.r1[i], r, c)
            ks.ml_argmax(grid_1d(r), B)(self.label[i], self.r1[i], self.r2[i], r, c)
        self.fetch(self.label)

    def sample(self):
        return sample_partitioned(self.label, self.parts, self.rows, SAMPLE_LIMIT)


def _param(shape, spec):
    seed, scale, offset = spec
    n = int(np.prod(shape))
    u = np_uniform(np.arange(n, dtype=np.int64), seed)
    return (np.float32(offset) + np.float32(scale) * u).reshape(shape)


def _x_rows(rows, f):
    """Word counts of the given global rows, as int64 (rows x f)."""
    idx = (np.asarray(rows, dtype=np.int64)[:, None] * f + np.arange(f, dtype=np.int64)[None, :])
    return (np_hash(idx, 4) % np.uint32(10)).astype(np.int64)


def _softmax(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def reference(size):
    """Column statistics over every row, then the labels of the sampled rows (float64 with the
    devices' float32 rounding of mean, 1/std and z)."""
    rows, f = size

    def part(r0, r1):
        x = _x_rows(np.arange(r0, r1), f)
        return np.stack([x.sum(axis=0), (x * x).sum(axis=0)]).astype(np.float64)

    total, total_sq = chunked_sum(part, rows, max(1, (1 << 20) // f))
    m = total / rows
    var = np.maximum(total_sq / rows - m * m, 1e-12)
    mean, istd = m.astype(np.float32), (1.0 / np.sqrt(var)).astype(np.float32)
    sel = sample_indices(rows, SAMPLE_LIMIT)
    labels = np.empty(sel.size, dtype=np.int64)
    logp, prior = _param((CLASSES, f), NB_LOGP), _param(CLASSES, NB_PRIOR)
    coef, icpt = _param((CLASSES, f), RR_COEF), _param(CLASSES, RR_ICPT)
    for s0 in range(0, sel.size, 4096):
        rsel = sel[s0:s0 + 4096]
        x = _x_rows(rsel, f)
        z = ((x.astype(np.float32) - mean) * istd).astype(np.float64)
        ridge = _softmax(icpt.astype(np.float64) + z @ coef.T.astype(np.float64))
        nb = prior.astype(np.float64) + x.astype(np.float64) @ logp.T.astype(np.float64)
        nb = np.exp(nb - (nb.max(axis=1, keepdims=True) + np.log(np.exp(
            nb - nb.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True))))
        labels[s0:s0 + rsel.size] = np.argmax(_softmax(nb) + ridge, axis=1)
    return {"label": labels, "mean": mean, "istd": istd}


def check(sample, ref, size):
    """``(ok, message)``: at most 0.2% of the sampled labels differ (float32 accumulation on the
    devices may flip near-ties)."""
    want = ref["label"]
    if sample.shape != want.shape:
        return False, "got %d labels, expected %d" % (sample.size, want.size)
    diff = int(np.count_nonzero(sample.astype(np.int64) != want))
    limit = max(1, cdiv(2 * want.size, 1000))
    return diff <= limit, "%d labels checked, %d differ (limit %d)" % (want.size, diff, limit)
