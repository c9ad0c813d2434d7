"""The numbers under hack_scan: correlation within ask, the shuffled-reward floor, ANDs, and fits within ask.

Rows of one ask are compared only with each other: every column is centred within its ask, so x . y over all
rows is the pooled within-ask covariance. 0/1 columns stay sparse (scipy.sparse, column-compressed: the scan
reads them by column and multiplies by their transpose, so it never converts them); their within-ask sums of
squares come from per-ask counts, never a dense copy. Vector dots go through features.vector_dot (no BLAS).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from whileai_train.gates.defaults import AND_PARENTS, AND_REDUNDANT, DISCRETE_VALUES, SHUFFLES, TIE_TOLERANCE
from whileai_train.gates.features import FeatureTable, vector_dot
from whileai_train.rows.text import GOLDEN

__all__ = ["Scan", "ands", "binary_ss", "center_dense", "distinct_per_ask", "explained", "priority",
           "same_column", "shuffled", "similar"]

_EPS = 1e-12


def center_dense(dense: np.ndarray, inv: np.ndarray, n_groups: int) -> np.ndarray:
    """Each column minus its ask mean over present values; a missing value centres to 0 (carries no contrast)."""
    out = np.empty_like(dense)
    for j in range(dense.shape[1]):
        x = dense[:, j]
        present = np.isfinite(x)
        values = np.where(present, x, 0.0)
        counts = np.bincount(inv, weights=present, minlength=n_groups)
        means = np.bincount(inv, weights=values, minlength=n_groups) / np.maximum(counts, 1.0)
        out[:, j] = np.where(present, x - means[inv], 0.0)
    return out


def binary_ss(binary: sp.csc_matrix, inv: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Within-ask sum of squares of 0/1 columns: sum(x) - sum over asks of count^2 / size.

    Column by column from the CSC arrays (a bincount of the column's asks): no sparse product, no conversion.
    The sum over asks runs in ask order (a cumulative sum), the order a sparse product adds them in.
    """
    n_columns = binary.shape[1]
    if n_columns == 0:
        return np.zeros(0)
    inverse_sizes = 1.0 / sizes
    indptr, indices, data = binary.indptr, binary.indices, binary.data
    between = np.zeros(n_columns)
    for c in range(n_columns):
        start, end = indptr[c], indptr[c + 1]
        if start == end:
            continue
        counts = np.bincount(inv[indices[start:end]], weights=data[start:end], minlength=len(sizes))
        between[c] = np.cumsum(counts * counts * inverse_sizes)[-1]
    return np.asarray(binary.sum(axis=0)).ravel() - between


def shuffled(values: np.ndarray, inv: np.ndarray, order: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`values` permuted within each ask (rows of an ask swap values among themselves only).

    Sorting ask + U(0,1) lists the rows ask by ask in random order; `order` lists them ask by ask in their own
    order; the two blocks of each ask have the same size, so pairing them up permutes within asks. The keys are
    sorted in `order` (already sorted by ask, so a stable sort only has each ask's block to put in order).
    """
    keys = inv + rng.random(len(inv))
    perm = order[np.argsort(keys[order], kind="stable")]
    out = np.empty_like(values)
    out[order] = values[perm]
    return out


class Scan:
    """The centred matrices of one scan and the products every statistic needs."""

    def __init__(self, table: FeatureTable, inv: np.ndarray, n_groups: int, yc: np.ndarray) -> None:
        self.inv, self.n_groups = inv, n_groups
        self.sizes = np.bincount(inv, minlength=n_groups).astype(np.float64)
        n = len(inv)
        self.groups = sp.csr_matrix((np.ones(n), (np.arange(n), inv)), shape=(n, n_groups))
        self.table_dense = table.dense
        self.dense = center_dense(table.dense, inv, n_groups)
        self.binary = table.binary
        # products with many vectors go row by row (one pass over y); column reads use the CSC above
        self._by_row = [table.binary.tocsr() if table.binary_rows is None else table.binary_rows]
        self.names = list(table.dense_names) + list(table.binary_names)
        self.n_dense = len(table.dense_names)
        ss = np.concatenate([(self.dense ** 2).sum(axis=0), binary_ss(table.binary, inv, self.sizes)])
        self.ss = np.where(ss > 1e-9, ss, 0.0)
        self.yc = yc
        self.ss_y = vector_dot(yc, yc)
        self.order = np.argsort(inv, kind="stable")

    def dots(self, y: np.ndarray) -> np.ndarray:
        """x . y for every feature column (centring x is not needed when y sums to 0 within each ask).

        `y` is one vector (-> one value per feature) or n x m (-> features x m)."""
        # einsum's own loop, not BLAS: a threaded BLAS wakes its thread pool for these thin products and its threads
        # then spin on the cores the scan needs (bench/gates.py); einsum gives the same bits on every machine, so
        # tied features rank the same everywhere, without limiting BLAS for the whole process
        dense = np.einsum("ij,i->j", self.dense, y) if y.ndim == 1 else np.einsum("ij,ik->jk", self.dense, y)
        out = np.concatenate([dense, *(np.asarray(block.T @ y) for block in self._by_row)])
        return out.ravel() if y.ndim == 1 else out

    def rho(self, y: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = self.dots(y) / np.sqrt(self.ss * self.ss_y)
        return np.where(self.ss > 0, out, 0.0)

    def add_binary(self, columns: sp.csc_matrix, names: list[str]) -> None:
        self.binary = sp.hstack([self.binary, columns], format="csc")  # CSC blocks: a concatenation
        self._by_row.append(columns.tocsr())
        self.names += names
        ss = binary_ss(columns, self.inv, self.sizes)
        self.ss = np.concatenate([self.ss, np.where(ss > 1e-9, ss, 0.0)])

    def column(self, j: int) -> np.ndarray:
        """Feature j centred within ask (for alias checks and least squares)."""
        if j < self.n_dense:
            return self.dense[:, j]
        x = self.binary[:, j - self.n_dense].toarray().ravel()
        means = np.bincount(self.inv, weights=x, minlength=self.n_groups) / self.sizes
        return x - means[self.inv]

    def raw(self, j: int) -> np.ndarray:
        """Feature j as read (not centred); NaN where missing."""
        if j < self.n_dense:
            return self.table_dense[:, j]
        return self.binary[:, j - self.n_dense].toarray().ravel()

    def floor(self, y: np.ndarray, rng: np.random.Generator, mask: np.ndarray | None = None,
              cells: np.ndarray | None = None) -> float:
        """Largest |x . yshuffled| / sqrt(ss_x ss_y) over features (in `mask`) and SHUFFLES shuffles.

        `y` is shuffled within ask, or within `cells` (finer groups) when given."""
        usable = self.ss > 0 if mask is None else (self.ss > 0) & mask
        groups = self.inv if cells is None else cells
        order = self.order if cells is None else np.argsort(cells, kind="stable")
        if not usable.any() or self.ss_y <= _EPS:
            return 0.0
        scale = np.sqrt(self.ss[usable] * self.ss_y)[:, None]
        best = 0.0
        for start in range(0, SHUFFLES, 10):  # ten shuffles per sparse product (one pass over the matrix)
            batch = np.column_stack([shuffled(y, groups, order, rng)
                                     for _ in range(min(10, SHUFFLES - start))])
            best = max(best, float(np.max(np.abs(self.dots(batch)[usable] / scale))))
        return best


def ands(scan: Scan, rho: np.ndarray) -> tuple[sp.csc_matrix, list[str], list[tuple[int, int]]]:
    """ANDs of the strongest 0/1 features whose |rho| beats both parents' (the interactions nobody listed)."""
    first = scan.n_dense
    strength = np.abs(rho[first:])
    strength[scan.ss[first:] <= 0] = 0.0
    parents = [first + j for j in np.argsort(-strength, kind="stable")[:AND_PARENTS] if strength[j] > 0]
    if len(parents) < 2:
        return sp.csc_matrix((len(scan.inv), 0)), [], []
    block = scan.binary[:, [p - first for p in parents]].toarray()
    column_counts = block.sum(axis=0)
    found: list[tuple[int, int]] = []
    for a in range(len(parents) - 1):
        both = block[:, a + 1:] * block[:, a:a + 1]  # AND of parent a with every later parent
        counts = both.sum(axis=0)
        per_ask = np.asarray(scan.groups.T @ both)
        ss = counts - (per_ask * per_ask / scan.sizes[:, None]).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.einsum("i,ij->j", scan.yc, both) / np.sqrt(ss * scan.ss_y)  # no BLAS: see Scan.dots
        for offset in range(len(counts)):
            b = a + 1 + offset
            if counts[offset] in (0, column_counts[a], column_counts[b]) or ss[offset] <= 1e-9:
                continue  # empty, or the same column as a parent: cannot beat it
            if abs(value[offset]) > max(abs(rho[parents[a]]), abs(rho[parents[b]])) + TIE_TOLERANCE:
                found.append((a, b))
    if not found:
        return sp.csc_matrix((len(scan.inv), 0)), [], []
    # an AND that is (almost) a feature we already have, e.g. two adjacent words = their pair, adds a name, not a
    # finding: keep only ANDs unlike every one of the strongest existing features
    existing = [scan.column(j) for j in np.argsort(-np.abs(np.where(scan.ss > 0, rho, 0.0)), kind="stable")[:AND_PARENTS]]
    novel = []
    for a, b in found:
        column = block[:, a] * block[:, b]
        centred = column - (np.bincount(scan.inv, weights=column, minlength=scan.n_groups) / scan.sizes)[scan.inv]
        if not any(similar(centred, other, AND_REDUNDANT) for other in existing):
            novel.append((a, b))
    found = novel
    if not found:
        return sp.csc_matrix((len(scan.inv), 0)), [], []
    matrix = sp.csc_matrix(np.column_stack([block[:, a] * block[:, b] for a, b in found]))
    names = [f"{scan.names[parents[a]]} & {scan.names[parents[b]]}" for a, b in found]
    return matrix, names, [(parents[a], parents[b]) for a, b in found]


def distinct_per_ask(trajectory: np.ndarray, inv: np.ndarray, n_groups: int) -> float:
    order = np.lexsort((trajectory, inv))
    g, t = inv[order], trajectory[order]
    new = np.ones(len(g), dtype=bool)
    new[1:] = (g[1:] != g[:-1]) | (t[1:] != t[:-1])
    return float(np.median(np.bincount(g[new], minlength=n_groups)))


def explained(scan: Scan, columns: list[int]) -> tuple[float, np.ndarray, np.ndarray]:
    """How much of the within-ask reward `columns` explain: R^2, the residual, and the cells it is centred in.

    Discrete columns (indicators, counts, graded markers: at most DISCRETE_VALUES distinct values) split each ask
    into cells of rollouts that look the same on them, and the reward is centred within cell, so a tool that is
    right for one ask and wrong for another is fitted per ask, not by one global slope. Continuous columns
    (length, logprob) are then fitted by least squares within cell (a fixed-effects regression).
    """
    cells = scan.inv.astype(np.uint64)
    continuous = []
    for j in columns:
        values = scan.raw(j)
        distinct = np.unique(values[np.isfinite(values)])
        if len(distinct) <= DISCRETE_VALUES:
            code = np.searchsorted(distinct, np.where(np.isfinite(values), values, distinct[0] if len(distinct)
                                                      else 0.0)).astype(np.uint64) + np.isnan(values) * np.uint64(1 << 20)
            cells = cells * GOLDEN + code  # mix (wraps; a collision merges two cells)
        else:
            continuous.append(j)
    _, cell = np.unique(cells, return_inverse=True)
    cell = cell.ravel()
    n_cells = int(cell.max()) + 1 if len(cell) else 0
    sizes = np.bincount(cell, minlength=n_cells)
    residual = scan.yc - (np.bincount(cell, weights=scan.yc, minlength=n_cells) / sizes)[cell]
    if continuous:
        design = np.column_stack([scan.raw(j) for j in continuous])
        design = np.where(np.isfinite(design), design, 0.0)
        design = design - (np.stack([np.bincount(cell, weights=design[:, k], minlength=n_cells)
                                     for k in range(design.shape[1])], axis=1) / sizes[:, None])[cell]
        coef, *_ = np.linalg.lstsq(design, residual, rcond=None)
        residual = residual - np.einsum("ij,j->i", design, coef)  # no BLAS: see Scan.dots
    if scan.ss_y <= _EPS:
        return 0.0, residual, cell
    return max(0.0, 1.0 - vector_dot(residual, residual) / scan.ss_y), residual, cell


def priority(name: str) -> tuple[int, int]:
    """Which of several same-column features names the group: hand tier, then pairs, words, ANDs; longer first."""
    if " & " in name:
        rank = 3
    elif name.startswith("word:"):
        rank = 2
    elif name.startswith("pair:"):
        rank = 1
    else:
        rank = 0
    return rank, -len(name)


def similar(a: np.ndarray, b: np.ndarray, level: float) -> bool:
    """|corr| of two centred columns is at least `level`."""
    norm = math.sqrt(vector_dot(a, a) * vector_dot(b, b))
    return norm > 0 and abs(vector_dot(a, b)) / norm >= level


def same_column(a: np.ndarray, b: np.ndarray) -> bool:
    """The two centred columns are one up to scale and sign (|corr| = 1): the same explanation twice."""
    return similar(a, b, 1.0 - 1e-9)
