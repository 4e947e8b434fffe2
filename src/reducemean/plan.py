"""The reduction plan: shape and axis logic in plain Python, memoised.

A :class:`Plan` says how to walk an array's memory to reduce it over a set of
axes, without copying it:

1. length-1 dimensions are dropped (they change nothing);
2. reduced dimensions with a negative stride are read forwards, and the
   remaining dimensions are ordered by decreasing absolute stride, so the
   innermost loop runs over the smallest stride whatever the view's axis
   order (a transposed or Fortran array is walked in memory order);
3. neighbours that are both kept or both reduced are merged wherever their
   strides allow, so a contiguous block becomes one long span;
4. what is left names a pattern (``whole``, ``rows`` = KR, ``columns`` = RK,
   ``krk``, ``rkr``, ``general``) and a loop *family*: ``inner`` when the
   innermost dimension is reduced, ``outer`` when it is kept (``short`` and
   ``parts`` are special cases of these: very short rows, and complex values
   whose real/imaginary part dimension is the only innermost kept one).

Strides are counted in storage elements (complex values are pairs of floats:
the pair is one more kept dimension of extent 2).  Output strides describe a
C-ordered result over the kept axes in their original order, so ``keepdims``
never changes the memory written.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from math import prod

import numpy as np

from .numpy_compat import AxisError

__all__ = ["Plan", "normalize_axis", "plan_for", "make_plan"]

#: Reduced runs shorter than this are summed by the column loop (see make_plan).
SHORT_RUN = 16
#: Contiguous rows of SHORT_RUN to this many values, one after another, are
#: short plans too (kernels.short_serial_16 to _32) for the dtypes whose
#: short rows sum in vector lanes (``lanes``) of at most four bytes
#: (float32, float16 and bfloat16, int32), from SHORT_VEC_ROWS_MIN rows:
#: four rows' sums a vector (numerics.short_sums), where the row loop
#: summed two rows a call, each ending in its own lane merges, bound and
#: division.  Two threads, old and new alternating, rows of 17 to 32 from
#: memory: float32 (2**21, n) 1.13x (32) to 2.2x (24), float16 and
#: bfloat16 2.6-2.8x, int32 1.2x; held in cache (8192, n) float32 rows of
#: 24 2.3x, of 32 0.96x.  Longer rows measured mixed: rows of 40 and 48
#: 1.1-1.9x from memory (int32 48 0.93x), in cache 0.91-1.16x, float32
#: rows of 64 0.79x in cache.
SHORT_VEC_ROWS = 32
#: Rows from which rows of SHORT_RUN values or more are short plans: a
#: vector step's (numerics.SHORT_VEC_STEP).  Fewer would take
#: short_serial's loop of any length, a chain of adds a row.
SHORT_VEC_ROWS_MIN = 64
#: float64 rows of SHORT_RUN to this many values, from SHORT_VEC_ROWS_MIN
#: rows, are short plans too: four rows' compensated sums a vector
#: (numerics.short_sums_f64, SHORT_F64_RUNS), where the row loop's pairs
#: took 1.9-3x the time in cache (one thread) and about the same from
#: memory from rows of 24.
SHORT_F64_ROWS = 32
#: Contiguous columns narrower than this, over spans of at least FOLD_MIN
#: values, are folded from wider rows (see reducemean.fold): the fold costs
#: a few kernel calls, about 10 us, and measured slower up to 4096 values
#: and faster from 8192 (float32, float64, int32).
FOLD_WIDTH = 8
FOLD_MIN = 1 << 13
#: Columns from FOLD_WIDTH to under FOLD_WIDE fold too, from FOLD_MIN_WIDE
#: values: their column blocks are fast enough that the fold's fixed cost
#: paid off only from 32768 to 131072 values (float64, float32, int64,
#: int32, float16, uint8; widths 8 and 12), and then 1.3-3x, from memory
#: 1.6-6x.  Wider ones gained nothing (16-bit types and uint8 included, at
#: widths 16 to 32).
FOLD_WIDE = 16
FOLD_MIN_WIDE = 1 << 17
#: Plans of kept dims out of memory order are made in it (see make_plan)
#: from this many values read.  Through numpy_api's memo, permuted and
#: not alternating, (k, m, w).T over its first axis (float32, float64,
#: int32, uint8): 1.08-1.19x faster permuted at 192 values ((8, 8, 3)),
#: 1.3-3.1x at 768 to 1536; at 32 to 105 values 0.75-1.52x, about the
#: same (2.6-4.6 us either way).
PERMUTE_MIN = 128
#: Plans whose columns are read backwards are made reading them forwards
#: (see make_plan) from FLIP_MIN values read and FLIP_ROWS values an
#: output.  Old and new alternating through numpy_api's memo, (m,
#: n)[:, ::-1] over axis 0: (64, 64) float32 1.48x, uint8 1.03x, float64
#: 1.83x, float16 3.55x; from (8, 4096) 1.57-4.3x, (1000, 1000) 2.9-8.4x
#: (int64 too), (4096, 4096) 1.15-10.9x.  Below 4096 values uint8 and
#: float32 lost (0.79-0.92x at 256 to 2048, the reversal's copy and its
#: steps about 1 us), float64 from 1024 and float16 from 512 gained.  Two
#: rows: (2, 100000) float32 0.60x, uint8 0.96x (float64 2.1x, float16
#: 3.0x), four 1.09-4.7x.
FLIP_MIN = 4096
FLIP_ROWS = 4
#: Groups of contiguous columns at most GROUP_SPAN times their
#: width and GROUP_COLUMNS values apart are one kept dim of groups, summed
#: as the contiguous columns they span (see make_plan).  Against column
#: blocks of each group, held in cache (float32, float64, int32, int64):
#: groups of 2 to 12 values up to 4x their width apart 1.1-10x faster, of 16
#: to 40 values up to 48 apart 1.0-2x; 50 values 190 apart 0.56-0.79x, 60
#: values 120 apart 0.87-1.1x, 16 values 60 apart 0.88-1.6x.
GROUP_SPAN = 4
GROUP_COLUMNS = 48
#: An innermost kept dim narrower than NARROW_KEPT under reduced dims of at
#: most NARROW_KEPT_ROWS values an output, over a next kept dim of at least
#: NARROW_KEPT_ACROSS, is moved outermost (see make_plan).  Old and new
#: code alternating, (n, m, w) over axis 1: m = 7, w = 3, 1000 to 4.8M
#: rows, float32, float64, float16, int32, uint8, 2.2-6.6x faster; (10000,
#: 4, 4, 3) and (10000, 8, 8, 3) over (1, 2) 2.9-4.6x.  With hundreds of
#: rows an output the blocks had enough to do: (1000, 300, 5) over axis 1
#: ran 0.65-0.73x, (100, 1000, 7) 0.46x.  16-bit values, which the column
#: loop reads one row at a time in blocks under 256 KiB, need
#: NARROW_KEPT_ACROSS_16: float16 (2000, 24, 3) 2.5x faster, (200, 40, 5)
#: 0.4x.
NARROW_KEPT = 8
NARROW_KEPT_ACROSS = 64
#: complex64 rows of at most this many contiguous values, NARROW_KEPT_ACROSS
#: rows or more, go as the float32 (n, k, 2) they are stored as: the two
#: parts a narrow kept dim, outermost (the column loop, see _short_pairs).
PAIRS_SHORT = 16
NARROW_KEPT_ACROSS_16 = 1024
NARROW_KEPT_ROWS = 64
#: The same for a narrow innermost kept dim right under the next (a crop
#: or step of the last axis, reduced over the first, (n, m, 64)[..., :3] or
#: (n, m, 10)[..., ::4] over axis 0), while each of its w units, which
#: now walks the whole span, stays cheap: a span of at most
#: NARROW_KEPT_CACHED bytes, or at most NARROW_KEPT_PASS bytes read by the
#: w passes per offset of the next kept dim (w * rows * its stride).  Old
#: and new alternating, held in cache (float32, float64, int32, uint8):
#: 1.4-4x faster at 2 to 18 rows, 1.02-2.2x at 64; every second value,
#: (n, 15, 99, 5)[:, :, ::3, ::2], 5-14x at 2 rows.  From memory,
#: (4, 500000, 5)[..., ::2] 3.6-16x, uint8 and float16 (8, 200000, 16)[...,
#: :3] 2.5-2.7x; but float64 there 0.71x and (16, 100000, 10)[..., ::4]
#: 0.48x, int32 0.85x and 0.74x: three passes over memory cost more than
#: the blocks' calls (w * rows * stride of 1536 to 3840 bytes).  A strided
#: narrow dim (every second or third value) moves under more rows too:
#: its blocks are strided as well, and (300, 495, 5)[:, :, ::2]
#: over axis 0 ran 1.8-3.6x faster moved (float32, float64, int64, uint8),
#: (2000, 70, 8)[:, :, 1::3] 1.3-1.9x; crops under 300 to 3000 rows
#: 0.84-1.0x (float32, int64), and keep the NARROW_KEPT_ROWS limit.
NARROW_KEPT_CACHED = 8 << 20
NARROW_KEPT_PASS = 1024
#: 16-bit values right under the next kept dim need NARROW_KEPT_ACROSS_16
#: only past NARROW_KEPT_ROWS_16 rows.  Old and new alternating, 2 to 12
#: rows over 495 to 900 offsets: bfloat16 and int16 2.3-5.4x faster
#: moved; float16, whose strided columns are converted one value at a
#: time, 2.2-2.9x at 2 rows and 1.4-1.8x at 4, but 0.75-1.5x from 8 and
#: 0.40-0.64x at 64 ((n, 15, 99, 5)[:, :, ::3, ::2], (n, 495, 64)[...,
#: :3], (n, 900, 8)[..., 1::3] over axis 0; the plan sees only the size).
NARROW_KEPT_ROWS_16 = 4
#: Strided complex columns, narrow, right under the next kept dim go
#: outermost with both parts under at most NARROW_KEPT_ROWS_PAIRS rows.
#: Old and new alternating, (n, 15, 99, 5)[:, :, ::3, ::2] over axis 0:
#: complex64 and complex128 4.9-5.2x faster at 2 rows, 1.5-1.6x at 18, but
#: 0.70-0.95x at 64; (30, 200, 7)[..., 1::2] 1.3-1.7x.
NARROW_KEPT_ROWS_PAIRS = 32
#: Reduced dims inside a contiguous block of at most BLOCK_VALUES values
#: that holds every kept dim are summed as the block's columns, then
#: merged (see make_plan): always when the plan sums columns, from
#: BLOCK_MIN_RUNS values read when it sums runs, which must then be
#: shorter than BLOCK_RUN.  Through numpy_api's memo, against the plain
#: plan, (n, m, w) over (0, 2) with w under 16 (columns): 1.1-3.2x faster
#: from 256 values ((64, 2, 2); float32, float64, int32, uint8).  Runs,
#: against the plain plan through the full path (when numpy_api's memo
#: took neither), float32, float64, int32: runs of 16 to 32 values lost up
#: to 2x in cache below 65536 values (float64, int32) and gained 1.4-5x
#: from 131072, runs of 64 gained 1.2-2x there, of 128 lost (float64
#: 0.6-0.7x), of 1000 lost 0.82-0.99x; through the memo, runs of 16 to 32
#: still lost at 4096 to 16384 values (float64 0.65-0.81x, int32
#: 0.58-1.0x, float32 0.86-2x).
BLOCK_VALUES = 4096
#: ... and from BLOCK_ROWS of the block's rows: with fewer, each column's
#: merge costs about as much as its sum (int32 (4, 15, 13, 10) over (0, 3):
#: 4.5 us plain, 15.6 us by the block's columns).
BLOCK_ROWS = 64
BLOCK_MIN_RUNS = 1 << 17
BLOCK_RUN = 64
#: Runs shorter than SHORT_RUN that the column loop sums with a kept dim as
#: its columns are summed as columns themselves (see make_plan), from
#: RUNS_ROWS runs and RUNS_VALUES values an output; with more than
#: RUNS_FEW outputs only runs of RUNS_WIDE values or more, from
#: RUNS_ROWS_MANY runs, or runs whose columns group (their plan's superset
#: loop) from RUNS_ROWS_GROUPED runs.  Old and new alternating through
#: numpy_api's memo, (k, m, 16)[..., :w] over (1, 2), k outputs of m runs
#: (float32, float64, int32, and where named float16, bfloat16, uint8,
#: bool, int64):
#:   - up to 64 outputs, from 256 values: w = 12, 1.05-1.5x faster at 32
#:     runs (five types; float16 up to 3x), 1.5-12x from 64 runs; w = 5 and
#:     7 1.5-2x from 64 runs; w = 3 1.2-5.7x from 128 runs (float16 0.94x
#:     at 16 outputs).  Below 256 values: w = 3 at 32 and 64 runs 0.76-1.1x,
#:     w = 5 at 32 runs 0.64-1.56x, w = 12 at 16 runs 1.0-1.17x;
#:   - 256 to 1024 outputs: w = 8 and 12 1.2-11.7x from 256 runs, all
#:     eight types; at 128 runs uint8 and bool 0.84-1.07x at 1024 outputs;
#:     w = 4 and 5 uint8 and bool 0.66-0.79x, int64 0.59-1.9x; w = 3
#:     float64 0.54-0.68x at 1024 outputs even at 512 runs; 200 outputs of
#:     64 runs, w = 4 and 7, 0.74-0.97x;
#:   - grouped, (m, k, 10).transpose(1, 0, 2)[..., :5]: 1.04-8.7x from 64
#:     runs at 4 to 1024 outputs; at 52 runs 1.2-5.3x at 64 outputs, but
#:     uint8 and int64 0.91x at 1024 (float64, float16 2.1-2.3x);
#:   - from memory, (4, 2**20, 16)[..., :3] 2.2-4.1x, (64, 2**16,
#:     16)[..., :12] 13-16x (float32, float64, int32, float16).
#: At 8 runs an output they lost (0.3-0.8x).  Only while the runs' columns
#: hold at most RUNS_STATES states (1 MiB), a state per column, besides
#: the outputs' own: the block's plan keeps them all.
RUNS_ROWS = 32
RUNS_VALUES = 256
RUNS_FEW = 64
RUNS_WIDE = 8
RUNS_ROWS_MANY = 256
RUNS_ROWS_GROUPED = 64
RUNS_STATES = 1 << 16
#: Values read from which runs of SHORT_RUN values or more go as columns
#: (see _runs_as_columns).  Random views (2-4 dims, seven dtypes, crops,
#: steps, transposes) whose plan it changed, two threads, old and new
#: alternating: from 2^18 values 60 views, 0.17-1.04x the time (geometric
#: mean 0.40) and int64 (64, 300, 48) 1.13-1.5x; below it, where only
#: cropped or grouped runs reach (a contiguous block past BLOCK_VALUES,
#: from BLOCK_ROWS rows, is 2^18 values already), 1.18x, 1.37x and 1.41x
#: for 6 to 20 outputs, 0.77-0.94x for the rest.
RUNS_BLOCK_MIN = 1 << 18
#: Short runs a few values apart along the reduced dim right above them
#: ((k, a, m, s)[..., :w] over (1, 2, 3): m runs s apart) are summed as
#: groups of columns instead (the column loop's superset), each run at
#: each place along that dim a column of its own: up to RUNS_FEW outputs,
#: from RUNS_GROUP_ROWS rows of groups (a here).  A block of the run's
#: columns alone has rows over two reduced dims, each row's offset found
#: by division.  Against it, old and new alternating through the memo
#: (float32, float64, int32, uint8, float16; 4 and 64 outputs): 1.0-3.8x
#: faster at 12 rows, 1.1-12x at 16 and 32; at 8 rows 0.66-0.99x for 8
#: groups of 5 (int32, uint8) and groups of 12 values 40 apart (16-bit);
#: at 512 outputs 0.12-0.96x up to 32 rows.
RUNS_GROUP_ROWS = 12
#: Contiguous runs shorter than SHORT_RUN over several reduced dims, with
#: the kept dim the column loop would take as its columns lying between
#: them ((k, m, n, w) over (1, 3): n columns, a value every w), are summed
#: as rows of runs instead (the inner family: eight vector lanes carried
#: from run to run), where no block takes them (see _block, _runs_block):
#: runs of RUNS_AS_ROWS_WIDE values or more under at most
#: RUNS_AS_ROWS_COLUMNS columns, or of 3 or more under at most
#: RUNS_AS_ROWS_NARROW, from RUNS_AS_ROWS_RUNS runs an output; or at most
#: RUNS_FEW_AS_ROWS outputs of RUNS_AS_ROWS_VALUES values in
#: RUNS_FEW_AS_ROWS_RUNS runs or more.  Each pass of the column loop found
#: its eight rows' offsets by division and then summed a few columns of
#: gathered values.  Old and new alternating on one thread, in cache
#: (float32, float64, int32, uint8, int64, float16): (10, 10, 10, 10)
#: float64 57 -> 18 us (numpy 51 us), float32 26.5 -> 17.4 us; (k, m, n, w)
#: of 150000 values, m from 24 to 200 rows: n = 4 and 8 1.04-18x (float16
#: w = 3 about even), float64 2.2-18x; n = 12 and 16 at w >= 8 1.06-13x,
#: at w = 3 and 5 float32 0.74-1.26x, so narrower there; up to 16 outputs
#: of 16 values or more, 259 of 276 cases faster by 10% or more (0.72x at
#: worst, 4 against 6.5 us).  Wider columns keep the column loop: from 25
#: columns float32 ran 0.5-1.0x as rows.  300 random views (two seeds)
#: whose plan this changes: 1.54-1.68x faster (geometric mean), numpy
#: faster in none (7 before), 7 slower by more than 10% (0.69x at worst,
#: all under 10 us).
RUNS_AS_ROWS_COLUMNS = 16
RUNS_AS_ROWS_NARROW = 8
RUNS_AS_ROWS_WIDE = 8
RUNS_AS_ROWS_RUNS = 8
RUNS_FEW_AS_ROWS = 16
RUNS_AS_ROWS_VALUES = 16
RUNS_FEW_AS_ROWS_RUNS = 4
#: Short contiguous runs under kept dims that all lie outside them (KRR: a
#: crop of NCHW over (2, 3), (n, m, 16)[..., :w] over (1, 2)) are summed as
#: rows of runs from this many runs an output.  The column loop takes the
#: outputs as its columns, a run's width apart, so every value it adds is
#: gathered from a line of its own: (8, 16, 64, 128)[..., :8] over (2, 3)
#: took 3-4x numpy's time, (65536, 32, 16)[..., :8] over (1, 2) float32
#: 26.8-29.4 ms against numpy's 22.5-23.6 (8.8-9.4 ms as rows).  Both ways
#: in one process, two threads, (n, m, 16)[..., :w] for n 1024, 16384 and
#: 65536, w 3 to 15: at 16 runs int64 and uint8 (and int32, before its runs
#: took vector lanes) took 0.1-0.75x the time from memory (int64 (16384,
#: 16, 16)[..., :12] 9.6 -> 1.7 ms, numpy 4.0), up to 1.33x in cache (uint8
#: with runs of 3, 24 -> 31 us); at 8 runs up to 1.8x (uint8).
RUNS_KRR_ROWS = 16
#: Dtypes that sum such runs in vector lanes emitted in the output loop
#: (kernels.inner_two_short: float64, float32, float16, bfloat16, int32;
#: dispatch.Entry.lanes) are rows from this many runs, or
#: RUNS_KRR_ROWS_LANES_WIDE runs of RUNS_KRR_WIDE values or more.  The same
#: grid: from 8 runs 0.05-1.0x the time, but for runs of 3 in float32
#: (1.08x), bfloat16 (1.14-1.30x) and int32 (1.06x), from 4 runs of 5 or
#: more 0.15-1.11x; 4 runs of 3 took up to 2.7x (bfloat16), 2 runs up to
#: 1.5x.
RUNS_KRR_ROWS_LANES = 8
RUNS_KRR_ROWS_LANES_WIDE = 4
RUNS_KRR_WIDE = 5
#: Runs of two values are rows from this many runs, whatever the dtype: at
#: 8 and 16 runs (n 256, 4096 and 65536) rows took 1.1-2.1x the column
#: loop's time held in cache in float32, float64 and int32 (float16
#: 0.66-1.08x), and 0.4-0.8x from memory but float64 at 8 runs (1.44x).
RUNS_KRR_ROWS_TWO = 32
#: Past the caches the column loop's gathers cost more, so from
#: RUNS_KRR_SPAN bytes of input (RUNS_KRR_SPAN_OTHER for dtypes not in
#: lanes) fewer runs are rows too: runs of RUNS_KRR_WIDE values or more
#: whose outputs hold more than RUNS_KRR_OUT_BYTES bytes each, from 2 runs
#: (RUNS_KRR_RUNS_OTHER for dtypes not in lanes).  Both ways in one
#: process, two threads, (n, m, 16)[..., :w] over (1, 2) of 2 to 64 MiB:
#: lanes dtypes at 2 and 3 runs from 4 MiB 0.18-0.91x the time (float32
#: (524288, 2, 16)[..., :15] 12.8 -> 7.9 ms), up to 1.9x at 2 MiB (float32
#: 3 runs of 7); at 64 bytes an output or fewer up to 1.8x (bfloat16 2
#: runs of 5-12, a store per 20-24 bytes; int32 2 runs of 8 1.05-1.25x).
#: int64, int16 and uint8 from 16 MiB at 4 to 8 runs 0.32-0.99x (int8 8
#: runs of 9 1.04x); int64 at 8 MiB up to 2.5x, at 2 runs up to 2x.
RUNS_KRR_SPAN = 4 << 20
RUNS_KRR_SPAN_OTHER = 16 << 20
RUNS_KRR_OUT_BYTES = 64
RUNS_KRR_RUNS_OTHER = 4

_PATTERNS = {"R": "whole", "KR": "rows", "RK": "columns", "KRK": "krk", "RKR": "rkr", "": "whole"}


@dataclass(frozen=True)
class Plan:
    """How to reduce one (shape, strides, dtype, axes, keepdims) combination."""

    pattern: str
    family: str  #: ``"inner"``, ``"outer"``, ``"short"`` or ``"parts"``: which kernel loop shape
    kept: tuple  #: merged kept dims, outer to inner: (extent, in stride, out stride)
    reduced: tuple  #: merged reduced dims, outer to inner: (extent, in stride >= 0)
    count: int  #: values averaged into each output (0: empty slices)
    nout: int  #: storage elements written (outputs, times 2 for complex)
    out_shape: tuple  #: shape of the result
    span: int  #: storage elements between the lowest and highest address read
    base: int  #: offset of the array's first element from the lowest address
    params: np.ndarray  #: the packed form the kernels read (read-only)
    folded: bool  #: narrow contiguous columns, summed by reducemean.fold
    #: stride of inner runs (1, or 2 either way) or outer columns (2); 4 for
    #: every second complex column (both parts); for complex runs of the
    #: parts family, in complex values: 1 contiguous, 2 every second value
    #: in one run; else 0
    run_step: int
    #: for groups of columns (run_step 4): the same reduction with the
    #: groups' two dims kept apart, for reads whose token has no superset
    #: loop (exact and scaled reads; see reducemean.launch.run)
    fallback: "Plan | None" = None
    #: run_step 4: the innermost kept dim's outputs come in groups of this
    #: many contiguous columns, its stride apart (else 1)
    group: int = 1
    #: ``(shape, axes)`` when the kernels write the kept dims in their order
    #: in memory, a C-ordered buffer of ``shape`` whose ``transpose(axes)``
    #: is the result (see make_plan); else None
    permute: "tuple | None" = None
    #: ``(columns, pairs)`` when the kept dims and the innermost reduced
    #: ones tile one contiguous block (see make_plan): ``columns`` is the
    #: plan of the block's columns over the other reduced dims (every dim
    #: read forwards, from the lowest address), and column ``pairs[0, q]``'s
    #: state merges into output ``pairs[1, q]``, in turn (reducemean.blocks);
    #: else None
    block: "tuple | None" = None
    #: with ``permute``: the buffer's axes written backwards, kept dims read
    #: forwards from their other end (see make_plan): the result is that
    #: buffer with these axes reversed, then transposed
    flipped: tuple = ()
    #: the reduced axes of the input, normalised (reducemean.engine.redo
    #: finds an output's values through them)
    axes: tuple = ()

    @property
    def work(self) -> int:
        """Storage elements read."""
        return self.count * self.nout

    @property
    def weight(self) -> int:
        """:attr:`work`, twice over when the values are not read one after another.

        Runs of every second or third value, and columns of them, cost two
        to four times as much a value as contiguous ones held in cache, so
        two threads start paying at half the work or less
        (launch.PARALLEL_MIN).  Forced serial against forced parallel
        (float32, float64, int32, complex64, complex128; [:, ::2] and [:,
        ::3] rows and columns, [::3] whole): at half the work, parallel
        took 0.60-0.91x the serial time, except complex128 [::3] whole
        arrays at 0.98x; at a quarter, 0.77-1.07x.
        """
        if self.family == "outer":
            strided = self.kept[-1][1] != 1
        else:
            strided = self.run_step != 1
        return 2 * self.work if strided else self.work


def normalize_axis(axis, ndim):
    """numpy's axis rules: a sorted tuple of distinct non-negative axes.

    Raises ``AxisError`` out of range, ``ValueError`` for duplicates and
    ``TypeError`` for anything that is not an integer or a tuple of integers.
    """
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        items = axis
    else:
        items = (axis,)
    out = []
    for ax in items:
        if isinstance(ax, (bool, np.bool_)):
            raise TypeError(f"an integer is required for the axis, got {ax!r}")
        i = operator.index(ax)
        if not -ndim <= i < ndim:
            raise AxisError(i, ndim)
        out.append(i % ndim if ndim else i)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(sorted(out))


def make_plan(shape, strides, itemsize, axes, keepdims, pairs=False, group_columns=True,
              kept_order=None, flip_kept=False, lanes=False):
    """Build the plan for normalised ``axes`` (see :func:`normalize_axis`).

    ``pairs`` treats each element as two storage values (complex as float
    pairs); ``lanes`` says the dtype's short contiguous runs sum in vector
    lanes (see RUNS_KRR_ROWS_LANES).  Returns ``None`` when the stride of an
    axis longer than 1 is not a whole number of elements (fields of packed
    record arrays, ``numpy.lib.stride_tricks`` views); the caller copies.
    ``group_columns=False`` keeps groups of columns as two kept dims (the
    ``fallback`` of a plan that has them).

    The kernels write the result in the order of its kept axes, or, with
    ``kept_order`` (those axes, outermost first), in that order instead,
    for the caller to transpose (``Plan.permute``).  Kept dims in another
    order in memory than in the result (a transposed view) do not merge,
    and the innermost one makes column blocks of its width at every offset
    of the others, each walking every row: (3, 64, 65536) float32 of a
    transposed array over its last axis read 1.5 GB/s, 15x numpy's time.
    So a column plan of PERMUTE_MIN values or more whose kept dims come
    out fewer, or grouped, in their memory order is made in that order.
    With ``flip_kept`` the kept dims read backwards are read forwards too,
    their means written backwards (``Plan.flipped``), as a plan whose
    columns are read backwards is made (see FLIP_MIN).
    """
    ndim = len(shape)
    # (a length-1 axis's stride is never used, and numpy ignores it: a
    # record field of one element has its record's, a copy the same one)
    if any(s % itemsize for s, n in zip(strides, shape) if n > 1):
        return None
    unit = 2 if pairs else 1
    red = set(axes)
    kept_axes = [d for d in range(ndim) if d not in red]

    out_stride = {}
    acc = unit
    for d in reversed(kept_axes if kept_order is None else kept_order):
        out_stride[d] = acc
        acc *= shape[d]
    count = prod(shape[d] for d in axes)
    nout = prod(shape[d] for d in kept_axes) * unit
    if keepdims:
        out_shape = tuple(1 if d in red else shape[d] for d in range(ndim))
    else:
        out_shape = tuple(shape[d] for d in kept_axes)

    el = [s // itemsize * unit for s in strides]
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(shape, el)) + (unit - 1)
    base = sum((n - 1) * -s for n, s in zip(shape, el) if s < 0 and n > 0)

    # A reduced dim read backwards is read forwards instead, from its other
    # end: its values, and so the mean, are the same, and it can then merge
    # with its neighbours (a reversed row becomes one contiguous run).
    # ``start`` is the kernels' offset of the first value they read.
    start = base
    dims = []
    flipped = []  # kept dims read forwards too (flip_kept)
    for d in range(ndim):
        n, s, o = shape[d], el[d], out_stride.get(d)
        if n == 1:
            continue
        if s < 0 and (o is None or flip_kept):
            start += (n - 1) * s
            s = -s
            if o is not None:
                flipped.append(d)
        dims.append((n, s, o))
    if pairs:
        dims.append((2, 1, 1))
    dims.sort(key=lambda t: -abs(t[1]))  # stable: ties keep axis order
    merged = []
    for e, s, o in dims:
        if merged:
            pe, ps, po = merged[-1]
            same_kind = (po is None) == (o is None)
            if same_kind and ps == e * s and (o is None or po == e * o):
                merged[-1] = (pe * e, s, o)
                continue
        merged.append((e, s, o))

    seq = "".join("R" if o is None else "K" for _, _, o in merged)
    pattern = _PATTERNS.get(seq, "general")
    kept = tuple(t for t in merged if t[2] is not None)
    reduced = tuple((e, s) for e, s, o in merged if o is None)
    group = 1  # outputs per group of contiguous columns (see below)
    if seq.endswith("K"):
        family = "outer"
        if not reduced:  # nothing to reduce (axis=() or length-1 axes): one row
            reduced = ((1, 0),)
            pattern = "identity"
        if pairs and seq.endswith("RK") and merged[-1] == (2, 1, 1) and not (
                _short_pairs(kept, reduced, count, seq, itemsize, span)):
            # complex values whose part dimension stands alone (rows, the
            # whole array, ...): runs of values, summed for both parts
            family = "parts"
        elif (pairs and seq.endswith("KKK") and merged[-1] == (2, 1, 1)
              and kept[-2][0] < NARROW_KEPT and kept[-3][0] >= NARROW_KEPT_ACROSS
              and count <= NARROW_KEPT_ROWS_PAIRS
              and _walks_cheaply(kept[-2][0], count, kept[-3][1], span, itemsize // unit)):
            # Strided complex columns, narrow, right under the next kept dim
            # ((n, m, 5)[..., ::2] over axis 0): grouped, each group of both
            # parts was a block of its own at every offset of the next dim
            # (see NARROW_KEPT_ROWS_PAIRS).  The parts and the narrow dim
            # outermost instead: the next kept dim is the columns.
            kept = (kept[-2], kept[-1]) + kept[:-2]
        elif group_columns and len(kept) > 1 and (seq.endswith("KK") or not pairs) and (
                _groups(kept, itemsize, pairs)):
            # Groups of w contiguous columns, S apart, whose outputs follow
            # one another (every second complex column: both parts of each,
            # S = 4; a crop of the last axis, (n, m, 22)[..., :7] over axis
            # 0): one kept dim of m * w outputs at offsets (j // w) * S + j % w,
            # which no stride gives, so only the column loop's superset of
            # the contiguous columns they span walks it (run_step 4, see
            # kernels.outer_block).  Column blocks of w at each of m offsets
            # had nothing to vectorise across.  Reduced dims may lie between
            # the two ((n, m, w) over axis 1: groups of w, m * w apart): each
            # row then starts inside the groups' span, and its superset reads
            # the other rows' values too, m times the values kept, as S / w
            # is.  A block of w columns at each of n offsets, one call and
            # store each, had read (4M, 2, 3) float32 at 0.4 GB/s.
            (e, stride, _), (w, _, o) = kept[-2:]
            kept = kept[:-2] + ((e * w, stride, o),)
            group = w
        elif pairs and seq.endswith("KK") and merged[-1] == (2, 1, 1):
            # other strided complex columns: as the innermost kept dim the
            # part would make blocks two outputs wide, each unit a walk over
            # every row; outermost, each part is one block of columns
            kept = (kept[-1],) + kept[:-1]
        elif _narrow_innermost(kept, count, seq, itemsize, unit, span):
            # A narrow innermost kept dim with few values an output, e.g.
            # (n, 7, 3) over axis 1: as the column dim, a block of 3
            # columns at each of n offsets, each a few rows, cost a unit's
            # call and store per 21 values.  Outermost, the next kept dim
            # is the columns, their stride apart (n of them a block).
            # Right under the next kept dim (no reduced dim between: a crop
            # or step of the last axis), each unit walks the whole span
            # instead of its block's part: only while that is cheap
            # (NARROW_KEPT_CACHED, NARROW_KEPT_PASS).  A strided narrow dim
            # moves under any number of rows: its blocks are strided too
            # (supersets of every second column, see kernels.outer_block;
            # gathers of every third), dearer than plain ones.
            kept = (kept[-1],) + kept[:-1]
    else:
        family = "inner"
        if not reduced:  # a single element
            reduced = ((1, 0),)
        elif kept and reduced[-1][0] < SHORT_RUN:
            # Runs this short cost more to start than to sum, e.g. (16M, 4)
            # over axis 1: contiguous rows, one after another, get a kernel
            # that vectorises across rows; other rows (strided, or apart) stay
            # plain rows, so that kernel compiles no loop for them (first-call
            # time).  More dims accumulate blocks of outputs side by side (the
            # column loop, rows and columns swapped).
            if len(kept) > 1 or len(reduced) > 1:
                family = "outer"
                if (_runs_as_rows(kept, reduced, count, nout, lanes, itemsize // unit,
                                 span * (itemsize // unit)) and _block(merged) is None
                        and _runs_block(merged, count, nout) is None):
                    family = "inner"
            elif _end_to_end(kept, reduced):
                family = "short"
        elif (_end_to_end(kept, reduced) and lanes and unit == 1 and nout >= SHORT_VEC_ROWS_MIN
              and count <= (SHORT_VEC_ROWS if itemsize <= 4 else SHORT_F64_ROWS)):
            family = "short"
    if (not flip_kept and family == "outer" and kept[-1][1] < 0 and count >= FLIP_ROWS
            and count * nout >= FLIP_MIN):
        # Columns read backwards ((m, n)[:, ::-1] over axis 0): the column
        # loop's blocks gathered them a value at a time (float64 2.6-5.5x,
        # float16 6.5-16x the time of the same columns forwards).  Read
        # forwards instead, the kept dims read backwards are written
        # backwards, and reversed into the result after (Plan.flipped).
        return make_plan(shape, strides, itemsize, axes, keepdims, pairs, group_columns,
                         kept_order, True, lanes)
    params = pack(start, count, kept, reduced, nout, group)
    folded = (
        (pattern, family) == ("columns", "outer") and not base  # RK: one kept, one reduced
        and kept[0][1:] == (1, 1) and reduced[0][1] == kept[0][0] < FOLD_WIDE
        and count * kept[0][0] >= (FOLD_MIN if kept[0][0] < FOLD_WIDTH else FOLD_MIN_WIDE)
    )
    run = reduced[-1][1] if family in ("inner", "short") else 0
    run_step = 1 if run == 1 else 2 if abs(run) == 2 else 0
    if family == "parts":  # in complex values: contiguous, or every second in one run
        run = reduced[-1][1]
        run_step = 1 if run == 2 else 2 if run == 4 and len(reduced) == 1 else 0
    if family == "outer" and kept[-1][1] == 2:  # columns of every second value
        run_step = 2
    fallback = None
    if group > 1:
        run_step = 4
        fallback = make_plan(shape, strides, itemsize, axes, keepdims, pairs, False, kept_order,
                             flip_kept, lanes)
    permute = None
    if kept_order is not None or flipped:
        order = kept_axes if kept_order is None else kept_order
        permute = (tuple(shape[d] for d in order), tuple(order.index(d) for d in kept_axes))
        flipped = tuple(order.index(d) for d in flipped)
    block = None
    if family == "outer" or (
            family in ("inner", "parts") and reduced[-1][0] < BLOCK_RUN
            and count * nout >= BLOCK_MIN_RUNS):
        # complex128 (16-byte values) whose columns fold: the float64 fold, a
        # compensated column loop of 48 to 60 lanes, read (n, 2, 3) over
        # (0, 2) at 0.3-0.5x the parts family's speed; complex64 1.5-4x faster
        block = _block(merged, fold=not (pairs and itemsize == 16))
    if block is None and family == "inner" and _runs_as_columns(kept, reduced, count, nout):
        block = _runs_block(merged, count, nout)
        if block is not None and block[0].group == 1 and (
                block[0].kept[-1][0] == reduced[-1][0]):
            # Cropped runs whose columns do not group: a block of each run's
            # columns alone at every kept offset, a few lines a row, each a
            # stride apart.  float64 (256, 256, 64)[..., :32] over (0, 2)
            # took 1.45x the interleaved walk's time (more than numpy's);
            # of 22 random views of that kind, three took 1.12-1.66x, the
            # others 0.40-0.99x.
            block = None
    if block is None and family == "outer" and seq.endswith("R"):
        # Short runs under a kept dim far from them ((k, m, 16)[..., :3]
        # over (1, 2)): the column loop had made the kept dim its columns,
        # a value every 16 a row.  The runs as columns instead: a block of
        # a run's width at every offset of the kept dims, each walking its
        # own rows (see RUNS_ROWS).
        block = _runs_block(merged, count, nout)
    plan = Plan(
        pattern, family, kept, reduced, count, nout, out_shape, span, base, params, folded,
        run_step, fallback, group, permute, block, tuple(flipped), tuple(axes),
    )
    if block is None and kept_order is None and family == "outer" and len(kept) > 1 and (
            count * nout >= PERMUTE_MIN):
        order = sorted(kept_axes, key=lambda d: -abs(el[d]))  # stable: ties keep axis order
        if order != kept_axes:
            other = make_plan(shape, strides, itemsize, axes, keepdims, pairs, group_columns,
                              order, flip_kept, lanes)
            if len(other.kept) < len(kept) or other.group > group:
                return other
    return plan


def _block(merged, fold=True):
    """``Plan.block`` for merged dims ``(extent, stride, out stride or None)``, or None.

    When the innermost dims tile one contiguous block (each stride the size
    of the dims inside it) that holds every kept dim and a reduced dim
    between or after them, and only reduced dims lie outside it, the block
    is read as rows of contiguous columns: (n, m, w) over axes (0, 2) is
    (n, m * w) over axis 0, then each group of w states merged.  The plain
    plan summed m columns w apart, one pass of the reduced rows for every
    few values: (4M, 2, 3) float32 read about 1 GB/s.  Every value of the
    block is read once, so the superset reads nothing the view does not.
    A block of every second value (innermost stride 2, each outer stride
    twice the size inside it) is read as columns two apart, which the
    column loop sums with the values between them, in the same cache
    lines: (n, m, k, w)[..., ::2] over (0, 2) had summed m blocks of w
    columns at every row of two reduced dims, 1.4-27x slower.
    With ``fold`` False, columns the fold would sum keep the plain plan.
    """
    kept = [k for k, (_, _, o) in enumerate(merged) if o is not None]
    if not kept:  # a whole reduction
        return None
    inner, outer = merged[kept[0]:], merged[:kept[0]]
    step = 2 if inner[-1][1] == 2 else 1
    size = 1
    for e, s, _ in reversed(inner):
        if s != step * size:
            return None
        size *= e
    rows = prod(e for e, _, _ in outer)
    if rows < BLOCK_ROWS or size > BLOCK_VALUES or all(o is not None for _, _, o in inner):
        return None
    shape = tuple(e for e, _, _ in outer) + (size,)
    strides = tuple(s for _, s, _ in outer) + (step,)
    columns = make_plan(shape, strides, 1, tuple(range(len(outer))), False)
    if columns.folded and not fold:
        return None
    index = np.indices(tuple(e for e, _, _ in inner)).reshape(len(inner), -1)
    dest = sum(index[d] * o for d, (_, _, o) in enumerate(inner) if o is not None)
    # Merged in the order of each column's place among its output's, so
    # that merges one after another go to different outputs: one output's
    # chain of merges in a row, each waiting on the last, took 4 ns each.
    place = sum(index[d] * s for d, (_, s, o) in enumerate(inner) if o is None)
    return columns, _merge_order(dest, place)


def _merge_order(dest, place):
    """``Plan.block``'s pairs: column ``j`` into output ``dest[j]``, by ``place``, then output.

    Merges one after another so go to different outputs.
    """
    src = np.lexsort((dest, place))
    pairs = np.ascontiguousarray(np.stack([src, dest[src]]), dtype=np.int64)
    pairs.flags.writeable = False
    return pairs


def _runs_block(merged, count, nout):
    """``Plan.block`` for merged dims whose innermost, reduced, is a short run; or None.

    The run becomes a kept dim, so the block's plan ("columns") has a
    state per value of the run at every offset of the kept dims; each
    state merges into its output's, as :func:`_block`'s do.  None where
    that measured slower (see RUNS_ROWS).
    """
    width, stride, _ = merged[-1]
    if count < RUNS_VALUES:  # (empty runs too)
        return None
    rows = count // width
    if rows < (RUNS_ROWS if width < SHORT_RUN else BLOCK_ROWS) or nout * width > RUNS_STATES:
        return None
    dims = list(merged[:-1]) + [(width, stride, 0)]  # (the run's out stride is unused)
    columns = _columns_of(dims)
    if width < SHORT_RUN and nout > RUNS_FEW and (
            rows < RUNS_ROWS_GROUPED if columns.group > 1
            else width < RUNS_WIDE or rows < RUNS_ROWS_MANY):
        return None
    if len(dims) > 1 and dims[-2][2] is None and stride == 1 and nout <= RUNS_FEW:
        # the reduced dim right above the run as the column loop's groups
        # (see RUNS_GROUP_ROWS), where _groups takes them as the plan is made
        e, s, _ = dims[-2]
        if rows // e >= RUNS_GROUP_ROWS and nout * e * width <= RUNS_STATES:
            grouped = _columns_of(dims[:-2] + [(e, s, 0), dims[-1]])
            if grouped.group > 1:
                dims[-2] = (e, s, 0)
                columns = grouped
    kept = [d for d in dims if d[2] is not None]
    index = np.indices(tuple(d[0] for d in kept)).reshape(len(kept), -1)
    dest = np.zeros(index.shape[1], np.int64)
    place = np.zeros(index.shape[1], np.int64)  # among its output's columns
    for k, (e, _, o) in enumerate(kept):
        dest += index[k] * o
        if o == 0:
            place = place * e + index[k]
    return columns, _merge_order(dest, place)


def reduced_outside(kept, reduced):
    """Whether an outer reduced dim lies outside a kept one in memory (its stride is larger).

    Then each outer offset holds a run of every output, and the interleaved
    kernel reads them in memory order (launch._interleaves), or their
    columns are summed (:func:`_runs_as_columns`).  With every kept dim
    outside the reduced ones (a crop of NCHW over (2, 3)), each output's
    values lie together, and the interleaved kernel jumped between outputs
    at every run: float32 (32, 64, 56, 56)[..., :28] over (2, 3) took 7.4
    ms, 4.4x numpy's time.  A whole reduction (no kept dim) is cut into
    pieces of its range instead, each summed a run of runs at a time
    (kernels._inner_partial): float32 (1442, 195) of a wider array took
    1.9x numpy's time interleaved, a run sum and a merge per run.
    """
    if not kept:  # one output: pieces of its range, each summed as runs
        return False
    outer = max(abs(stride) for _, stride in reduced[:-1])
    return outer > min(abs(dim[1]) for dim in kept)


def _runs_as_columns(kept, reduced, count, nout):
    """Whether an inner plan's contiguous runs of SHORT_RUN values or more go as columns.

    Runs under BLOCK_RUN values with a reduced dim outside a kept one
    (:func:`reduced_outside`: the interleaved kernel's walk), from
    RUNS_BLOCK_MIN values read, where no block of
    :func:`_block` holds them ((n, m, w) over (0, 2) with m * w over
    BLOCK_VALUES, NCHW of small images over (0, 2, 3), cropped runs whose
    columns group: see make_plan); :func:`_runs_block` says whether their
    columns are few enough (RUNS_STATES) and their rows many enough
    (BLOCK_ROWS).

    Interleaved, each run was a run sum and a state update: float32 (1024,
    1024, 16) over (0, 2) read 4.4 GB/s.  Old and new alternating in one
    process, two threads, time new / old: runs of 16, (1024, 1024, 16) and
    (256, 4096, 16), float32 0.27-0.32, float64 0.34-0.42, int32 0.40-0.44,
    float16 0.16-0.24, bfloat16 0.20-0.29, uint8 0.20-0.40; runs of 24 to
    63, 128 to 2048 rows of 256 to 1536 outputs, 0.39-0.96 (float32,
    float64, int32, the 16-bit types, uint8), 1.04-1.05 twice (int32 (128,
    1024, 40), float64 (512, 1024, 47)); (128, 1024, 5, 5) over (0, 2, 3)
    0.30-0.57; (512, 1024, 32)[..., :20] over (0, 2) 0.30-0.71; one thread
    0.16-0.73.  Runs of 64 and 96: int32 1.25-1.29, float32 0.97-1.13 (the
    run sums cost less there).  Under BLOCK_ROWS rows, held in cache, (32,
    128, 32) took 1.1-1.7x the time.
    """
    width, stride = reduced[-1]
    return (kept and len(reduced) > 1 and stride == 1 and SHORT_RUN <= width < BLOCK_RUN
            and count * nout >= RUNS_BLOCK_MIN and reduced_outside(kept, reduced))


def _runs_as_rows(kept, reduced, count, nout, lanes, size, nbytes):
    """Whether short runs over several reduced dims are summed as rows.

    See RUNS_AS_ROWS_COLUMNS, and RUNS_KRR_ROWS (RUNS_KRR_ROWS_LANES for
    ``lanes``, RUNS_KRR_SPAN for inputs of ``nbytes`` bytes, values of
    ``size`` bytes) where every kept dim lies outside them.

    Decided on the merged dims alone: the caller also checks that no block takes them.
    """
    width, stride = reduced[-1]
    if len(reduced) < 2 or stride != 1 or count == 0:
        return False
    columns, cstride = min(kept, key=lambda d: abs(d[1]))[:2]  # the column loop's, in memory order
    runs = count // width
    if abs(cstride) > max(abs(s) for _, s in reduced[:-1]):
        # every kept dim outside the reduced ones: each output's values lie together
        if (width >= RUNS_KRR_WIDE and count * size > RUNS_KRR_OUT_BYTES
                and (nbytes >= RUNS_KRR_SPAN and runs >= 2 if lanes else
                     nbytes >= RUNS_KRR_SPAN_OTHER and runs >= RUNS_KRR_RUNS_OTHER)):
            return True
        if width < 3:
            return runs >= RUNS_KRR_ROWS_TWO
        if lanes:
            return runs >= RUNS_KRR_ROWS_LANES or (
                runs >= RUNS_KRR_ROWS_LANES_WIDE and width >= RUNS_KRR_WIDE)
        return runs >= RUNS_KRR_ROWS
    if nout <= RUNS_FEW_AS_ROWS and count >= RUNS_AS_ROWS_VALUES and runs >= RUNS_FEW_AS_ROWS_RUNS:
        return True
    limit = RUNS_AS_ROWS_COLUMNS if width >= RUNS_AS_ROWS_WIDE else RUNS_AS_ROWS_NARROW
    return width >= 3 and columns <= limit and runs >= RUNS_AS_ROWS_RUNS


def _columns_of(dims):
    """The plan of ``dims`` ``(extent, stride, out stride or None)`` over their reduced ones."""
    return make_plan(tuple(d[0] for d in dims), tuple(d[1] for d in dims), 1,
                     tuple(i for i, d in enumerate(dims) if d[2] is None), False)


def _narrow_innermost(kept, count, seq, itemsize, unit, span):
    """Whether the innermost kept dim is narrow enough to go outermost (see make_plan)."""
    return (len(kept) > 1 and kept[-1][0] < NARROW_KEPT
            and kept[-2][0] >= (NARROW_KEPT_ACROSS_16 if itemsize == 2 and (
                seq.endswith("RK") or count > NARROW_KEPT_ROWS_16) else NARROW_KEPT_ACROSS)
            and (count <= NARROW_KEPT_ROWS if seq.endswith("RK") else (
                count <= NARROW_KEPT_ROWS or abs(kept[-1][1]) != 1)
                and _walks_cheaply(kept[-1][0], count, kept[-2][1], span, itemsize // unit)))


def _end_to_end(kept, reduced):
    """Whether a plan's rows are contiguous runs one after another (one kept dim, one reduced)."""
    return (len(kept) == 1 and len(reduced) == 1 and reduced[0][1] == 1
            and kept[0][1:] == (reduced[0][0], 1))


def _short_pairs(kept, reduced, count, seq, itemsize, span):
    """Whether complex64 rows of a few contiguous values skip the parts family.

    The parts family sums each row's run and stores both parts, a call
    and its fixed cost a row: 14-85 ns a row for rows of 2-16 values.
    Planned as the float32 (n, k, 2) their storage is, the two parts are
    a narrow kept dim of the rows (see NARROW_KEPT), each a block of
    columns the rows' stride apart: 0.17-0.9x the time (old and new
    alternating, 128 to 65536 rows of 2-16 values).  Not complex128,
    whose compensated strided columns were slower from 4 values a row.
    """
    return (itemsize == 8 and len(kept) == 2 and len(reduced) == 1
            and reduced[0][1] == 2 and count <= PAIRS_SHORT
            and _narrow_innermost(kept, count, seq, itemsize, 2, span)
            and _walks_cheaply(2, count, kept[0][1], span, itemsize // 2))


def _walks_cheaply(w, rows, stride, span, size):
    """Whether ``w`` units may each walk the whole span of a narrow kept dim's plan.

    ``rows`` values an output, ``stride`` the next kept dim's (storage
    values of ``size`` bytes, ``span`` of them): within NARROW_KEPT_CACHED
    bytes, or at most NARROW_KEPT_PASS bytes read by the passes per offset
    of the next kept dim.
    """
    return (span * size <= NARROW_KEPT_CACHED
            or w * rows * abs(stride) * size <= NARROW_KEPT_PASS)


def _groups(kept, itemsize, pairs):
    """Whether the innermost two kept dims are groups of columns for the superset loop.

    The inner one contiguous (both parts of complex values), the outer one's
    outputs right after it.  Complex: every second column, the pair loop's
    case.  Other types: groups whose superset adds at most GROUP_SPAN times
    the values they hold, and spans at most GROUP_COLUMNS values a group:
    wider groups have columns enough to vectorise across already.  16-bit
    values too: their own step-2 column loop keeps its constant stride
    (numerics.step2_columns), but groups in blocks of their own measured
    1.0-17x slower (float16 and bfloat16, (n, m, 22)[..., :7] over axis 0
    and (n, m, w) over axis 1).
    """
    (e, stride, out), (w, step, o) = kept[-2:]
    if step != 1 or out != w * o:
        return False
    if pairs:
        return (w, o, stride) == (2, 1, 4)
    return 2 <= w < stride <= min(GROUP_SPAN * w, GROUP_COLUMNS)


def pack(base, count, kept, reduced, nout, group=1):
    """The plan as the flat int64 array the kernels read (layout in :mod:`reducemean.kernels`)."""
    p = [base, count, len(kept), len(reduced), nout]
    for t in kept:
        p.extend(t)
    for t in reduced:
        p.extend(t)
    p.append(group)
    arr = np.array(p, dtype=np.int64)
    arr.flags.writeable = False
    return arr


_CACHE: dict = {}
_CACHE_MAX = 4096


def plan_for(shape, strides, itemsize, axes, keepdims, pairs=False, lanes=False):
    """Memoised :func:`make_plan`."""
    key = (shape, strides, itemsize, axes, keepdims, pairs, lanes)
    plan = _CACHE.get(key)
    if plan is None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        plan = _CACHE[key] = make_plan(shape, strides, itemsize, axes, keepdims, pairs,
                                       lanes=lanes)
    return plan
