"""The plan is plain Python: these tests need no kernels."""

import numpy as np
import pytest

from reducemean.numpy_compat import AxisError
from reducemean.plan import NARROW_KEPT_ACROSS_16, make_plan, normalize_axis, plan_for


def _plan(a, axes, keepdims=False, pairs=False, lanes=False):
    return make_plan(a.shape, a.strides, a.itemsize, normalize_axis(axes, a.ndim), keepdims, pairs,
                     lanes=lanes)


@pytest.mark.parametrize(
    "shape, axes, pattern, family",
    [
        ((64,), None, "whole", "inner"),
        ((8, 16), None, "whole", "inner"),
        ((8, 16), 1, "rows", "inner"),
        ((8, 16), 0, "columns", "outer"),
        ((4, 8, 16), (1,), "krk", "outer"),
        ((4, 8, 16), (0, 2), "rkr", "inner"),
        ((4, 8, 16, 32), (0, 2), "general", "outer"),
        ((8, 16), (), "identity", "outer"),
        ((4096, 4), 1, "rows", "short"),  # short runs: a kernel across rows
        ((64, 32, 4), (0, 2), "rkr", "outer"),  # short runs, several dims: the column loop
    ],
)
def test_pattern_and_family(shape, axes, pattern, family):
    p = _plan(np.empty(shape, np.float32), axes)
    assert (p.pattern, p.family) == (pattern, family)


def test_neighbouring_reduced_axes_merge_into_one_span():
    p = _plan(np.empty((32, 256, 56, 56), np.float32), (2, 3))
    assert p.kept == ((32 * 256, 56 * 56, 1),)
    assert p.reduced == ((56 * 56, 1),)
    assert p.count == 56 * 56 and p.nout == 32 * 256


def test_transposed_view_is_walked_in_memory_order():
    a = np.empty((64, 32), np.float32)
    p = _plan(a.T, 1)  # reduces the stride-32 axis: a column reduction in memory
    assert p.pattern == "columns"
    assert p.reduced == ((64, 32),)
    assert p.kept == ((32, 1, 1),)


def test_fortran_order_flattens_to_one_run():
    a = np.asfortranarray(np.empty((6, 7, 8)))
    p = _plan(a, None)
    assert p.reduced == ((6 * 7 * 8, 1),)


def test_negative_strides_keep_signs_and_base_points_at_first_element():
    x = np.arange(24.0).reshape(4, 6)
    a = x[::-1, ::-2]  # columns 5, 3, 1 of rows 3 to 0
    p = _plan(a, None)
    # the first element of the view sits at the highest address it reads;
    # the lowest is x[0, 1]
    assert p.base == (4 - 1) * 6 + (3 - 1) * 2
    assert p.span == 1 + 3 * 6 + 2 * 2
    assert a.ctypes.data - p.base * a.itemsize == x[0, 1:].ctypes.data


def test_broadcast_zero_stride_reads_one_element_per_row():
    a = np.broadcast_to(np.arange(5.0)[:, None], (5, 1000))
    p = _plan(a, 1)
    assert p.reduced == ((1000, 0),)
    assert p.span == 5


def test_length_one_axes_are_dropped_and_keepdims_shapes():
    a = np.empty((1, 5, 1, 3))
    p = _plan(a, (0, 3), keepdims=True)
    assert p.out_shape == (1, 5, 1, 1)
    assert p.kept == ((5, 3, 1),)
    assert _plan(a, (0, 3)).out_shape == (5, 1)


def test_complex_pairs_add_a_kept_part_dimension():
    a = np.empty((3, 4), np.complex64)
    p = _plan(a, 1, pairs=True)
    assert p.nout == 3 * 2
    assert p.kept[-1] == (2, 1, 1)


@pytest.mark.parametrize(
    "shape, axes, view, family",
    [
        ((3, 5), 1, None, "parts"),  # complex rows: each run read once for both parts
        ((3, 5), None, None, "parts"),  # the whole array: one run
        ((2, 3, 5), (1, 2), None, "parts"),
        ((3, 10), 1, (slice(None), slice(None, None, 2)), "parts"),  # strided values
        ((2, 3, 5), (0, 2), None, "parts"),  # several reduced dims
        ((3, 5), 0, None, "outer"),  # columns: the parts join the kept columns
        ((2, 3, 5), 1, None, "outer"),
    ],
)
def test_complex_parts_dimension_alone_takes_the_parts_family(shape, axes, view, family):
    a = np.empty(shape, np.complex128)
    if view is not None:
        a = a[view]
    p = _plan(a, axes, pairs=True)
    assert p.family == family
    assert (p.kept[-1] == (2, 1, 1)) == (family == "parts")


@pytest.mark.parametrize(
    "dtype, shape, view, family",
    [
        (np.complex64, (64, 16), None, "outer"),  # many short rows: the parts a kept dim
        (np.complex64, (1000, 2), None, "outer"),
        (np.complex64, (200, 8), (slice(None, None, 2),), "outer"),  # rows apart
        (np.complex64, (64, 17), None, "parts"),  # longer rows
        (np.complex64, (63, 4), None, "parts"),  # too few rows
        (np.complex64, (100, 16), (slice(None), slice(None, None, 2)), "parts"),  # strided
        (np.complex128, (1000, 4), None, "parts"),  # compensated columns: slower
    ],
)
def test_complex64_short_rows_go_as_their_float32_storage(dtype, shape, view, family):
    a = np.empty(shape, dtype)
    if view is not None:
        a = a[view]
    p = _plan(a, 1, pairs=True)
    assert p.family == family
    if family == "outer":  # the parts outermost, the rows the columns
        assert p.kept[0] == (2, 1, 1) and p.kept[1][0] == a.shape[0]


@pytest.mark.parametrize(
    "view, axes, run_step",
    [
        ((slice(None), slice(None, None, 2)), 1, 2),  # rows of every second value
        ((slice(None), slice(None, None, 2)), None, 2),  # dims that cannot merge
        ((slice(None), slice(None, None, -2)), 1, 2),  # read backwards: forwards
        ((slice(None), slice(None)), 1, 1),  # contiguous rows
        ((slice(None), slice(None)), None, 1),
        ((slice(None), slice(None, None, -1)), 1, 1),  # contiguous, backwards: forwards
        ((slice(None), slice(None, None, 2)), 0, 2),  # columns of every second value
        ((slice(None), slice(None, None, -2)), 0, 0),  # ... read backwards
        ((slice(None), slice(None, None, 3)), 0, 0),
        ((slice(None), slice(None)), 0, 0),  # contiguous columns
        ((slice(None), slice(None, None, 3)), 1, 0),
        ((slice(None), slice(0, 24, 2)), 1, 2),  # short runs, but strided: plain rows
        ((slice(None), slice(0, 12)), 1, 1),  # short runs, rows apart: plain rows
        ((slice(None), slice(12, 0, -1)), 1, 1),  # ... read backwards: forwards
    ],
)
def test_runs_with_one_step_are_marked(view, axes, run_step):
    # (numerics.run_token: the kernels compile only the loops a plan needs)
    p = _plan(np.empty((4, 512), np.float32)[view], axes)
    assert p.run_step == run_step
    assert p.family == ("outer" if axes == 0 else "inner")


@pytest.mark.parametrize(
    "view, family",
    [
        ((slice(None), slice(None)), "short"),  # contiguous rows one after another
        ((slice(None, None, 2), slice(None)), "inner"),  # every second row
        ((slice(None), slice(0, 4)), "inner"),  # part rows
        ((slice(None), slice(None, None, 2)), "inner"),  # strided values
        ((slice(None, None, -1), slice(None)), "inner"),  # rows in reverse
        ((slice(None), slice(None, None, -1)), "short"),  # values in reverse: read forwards
    ],
)
def test_only_contiguous_short_rows_take_the_short_family(view, family):
    p = _plan(np.empty((64, 8), np.float32)[view], 1)
    assert p.family == family
    if family == "short":
        assert p.run_step == 1  # unit-stride runs: the kernels compile no strided loop


@pytest.mark.parametrize("dtype, shape, view, lanes, family", [
    (np.float32, (64, 16), np.s_[:], True, "short"),  # a vector step of rows
    (np.float32, (63, 16), np.s_[:], True, "inner"),  # fewer: the row loop
    (np.int32, (4096, 16), np.s_[:], True, "short"),
    (np.uint16, (4096, 16), np.s_[:], True, "short"),  # float16 and bfloat16 storage
    (np.uint16, (4096, 16), np.s_[:], False, "inner"),  # float16 without F16C
    (np.int8, (4096, 16), np.s_[:], False, "inner"),  # other integers
    (np.float64, (4096, 16), np.s_[:], True, "short"),  # float64 too (plan.SHORT_F64_ROWS)
    (np.int64, (4096, 16), np.s_[:], False, "inner"),  # other eight-byte values
    (np.complex64, (4096, 16), np.s_[:], False, "outer"),  # float32 pairs (plan.PAIRS_SHORT)
    (np.float32, (4096, 17), np.s_[:], True, "short"),  # rows of 17 to 32 too
    (np.int32, (4096, 32), np.s_[:], True, "short"),
    (np.float32, (4096, 33), np.s_[:], True, "inner"),  # longer: the row loop
    (np.float64, (4096, 32), np.s_[:], True, "short"),
    (np.float64, (4096, 33), np.s_[:], True, "inner"),
    (np.float64, (63, 24), np.s_[:], True, "inner"),
    (np.float32, (4096, 32), np.s_[:, :16], True, "inner"),  # rows apart
    (np.float32, (4096, 16), np.s_[::2], True, "inner"),
    (np.float32, (64, 64, 16), np.s_[:], True, "inner"),  # over two dims: runs of 1024
])
def test_rows_of_16_to_32_are_short_plans_for_vector_lane_types(dtype, shape, view, lanes,
                                                                family):
    # plan.SHORT_VEC_ROWS: contiguous rows of 16 to 32 values one after
    # another, from a vector step of rows, for float32, 16-bit and int32
    # storage, and float64's (plan.SHORT_F64_ROWS).
    a = np.empty(shape, dtype)[view]
    p = _plan(a, (-1,) if a.ndim == 2 else (1, 2), pairs=a.dtype.kind == "c", lanes=lanes)
    assert p.family == family


@pytest.mark.parametrize("shape, view, axes, family", [
    ((10, 10, 10, 10), np.s_[:], (1, 3), "inner"),  # 10 columns, runs of 10: rows of runs
    ((100, 16, 4, 8), np.s_[:], (1, 3), "inner"),
    ((64, 24, 8, 3), np.s_[:], (1, 3), "inner"),  # runs of 3 under 8 columns
    ((64, 24, 12, 3), np.s_[:], (1, 3), "outer"),  # runs of 3 under 12 columns
    ((64, 24, 16, 8), np.s_[:], (1, 3), "inner"),  # runs of 8 under 16 columns
    ((4, 10, 25, 10), np.s_[:], (1, 3), "outer"),  # 25 columns: the column loop
    ((64, 4, 8, 10), np.s_[:], (1, 3), "outer"),  # 4 runs an output
    ((2, 8, 2, 2), np.s_[:], (1, 3), "inner"),  # 4 outputs of 16 values
    ((64, 2, 4, 2), np.s_[:], (1, 3), "outer"),  # 256 outputs of 4 values
    ((10, 10, 10, 20), np.s_[..., ::2], (1, 3), "outer"),  # runs of every second value
    ((10, 10, 10, 10), np.s_[:, :, ::-1], (1, 3), "inner"),  # columns backwards
    ((16, 10, 10), (2, 0, 1), (0, 1), "inner"),  # transposed: (m, w, k).T-like runs
])
def test_short_runs_over_several_reduced_dims_under_narrow_columns_are_rows(
        shape, view, axes, family):
    # Runs under SHORT_RUN values, contiguous, over two reduced dims, with a
    # kept dim between as the column loop's columns: rows of runs (the inner
    # family) while the columns are few (RUNS_AS_ROWS_COLUMNS, or
    # RUNS_AS_ROWS_NARROW for runs under 8 values) and the runs many, or the
    # outputs few; else the column loop.
    x = np.empty(shape, np.float32)
    x = x.transpose(view) if isinstance(view, tuple) and len(view) == x.ndim else x[view]
    p = _plan(x, axes)
    assert p.family == family
    assert p.block is None
    assert len(p.reduced) == 2


@pytest.mark.parametrize("shape, view, axes, lanes, family", [
    ((8, 16, 64, 128), np.s_[..., :8], (2, 3), False, "inner"),  # 64 runs an output
    ((256, 16, 16), np.s_[..., :3], (1, 2), False, "inner"),  # 16 runs
    ((256, 15, 16), np.s_[..., :3], (1, 2), False, "outer"),  # 15 runs: the column loop
    ((256, 15, 16), np.s_[..., :3], (1, 2), True, "inner"),  # in lanes: from 8 runs
    ((256, 7, 16), np.s_[..., :3], (1, 2), True, "outer"),
    ((256, 4, 16), np.s_[..., :5], (1, 2), True, "inner"),  # or 4 runs of 5 values
    ((256, 4, 16), np.s_[..., :4], (1, 2), True, "outer"),
    ((256, 3, 16), np.s_[..., :12], (1, 2), True, "outer"),
    ((256, 31, 16), np.s_[..., :2], (1, 2), True, "outer"),  # runs of two: from 32 runs
    ((256, 32, 16), np.s_[..., :2], (1, 2), False, "inner"),
    ((300, 64, 64), np.s_[:, ::2, :8], (1, 2), False, "inner"),  # runs of every second row
    ((300, 64, 64), np.s_[:, :, :16:2], (1, 2), False, "outer"),  # runs of every second value
])
def test_short_runs_under_outer_kept_dims_are_rows_from_enough_runs(
        shape, view, axes, lanes, family):
    # KRR: every kept dim outside the reduced ones, so the column loop's
    # columns would be the outputs, a value from each a run's width apart:
    # rows of runs from RUNS_KRR_ROWS runs an output, RUNS_KRR_ROWS_LANES
    # (or RUNS_KRR_ROWS_LANES_WIDE of RUNS_KRR_WIDE values) for the dtypes
    # that sum them in vector lanes, and RUNS_KRR_ROWS_TWO for runs of two
    p = _plan(np.empty(shape, np.float32)[view], axes, lanes=lanes)
    assert p.family == family
    assert len(p.reduced) == 2 and len(p.kept) == 1 and p.block is None
    assert abs(p.kept[0][1]) > max(abs(s) for _, s in p.reduced)


@pytest.mark.parametrize("dtype, shape, w, lanes, family", [
    (np.float32, (65536, 2, 16), 15, True, "inner"),  # 8 MiB: from 2 runs
    (np.float32, (16384, 2, 16), 15, True, "outer"),  # 2 MiB
    (np.float32, (65536, 2, 16), 8, True, "outer"),  # 64 bytes an output
    (np.float32, (65536, 3, 16), 4, True, "outer"),  # runs of 4
    (np.float64, (65536, 2, 16), 5, True, "inner"),
    (np.int64, (65536, 4, 16), 5, False, "inner"),  # 32 MiB: from 4 runs
    (np.int64, (65536, 3, 16), 15, False, "outer"),
    (np.int64, (16384, 4, 16), 5, False, "outer"),  # 8 MiB
])
def test_short_runs_past_the_caches_are_rows_from_fewer_runs(dtype, shape, w, lanes, family):
    # KRR runs of RUNS_KRR_WIDE values or more, more than RUNS_KRR_OUT_BYTES
    # an output, in an input of RUNS_KRR_SPAN bytes (RUNS_KRR_SPAN_OTHER
    # without lanes): rows from 2 runs (RUNS_KRR_RUNS_OTHER)
    p = _plan(np.empty(shape, dtype)[..., :w], (1, 2), lanes=lanes)
    assert p.family == family
    assert len(p.reduced) == 2 and len(p.kept) == 1 and p.block is None


@pytest.mark.parametrize("shape, view, axes", [
    ((2, 3, 4), np.s_[:, :, :0], (0, 2)),  # empty runs
    ((0, 19, 7), np.s_[:, :, ::2], (0, 2)),  # no runs
    ((3, 0, 5, 4), np.s_[..., :2], (1, 3)),
])
def test_empty_short_runs_are_planned(shape, view, axes):
    # the runs-as-rows test divides by the run's width: an empty view has none
    p = _plan(np.zeros(shape, np.float32)[view], axes)
    assert p.count == 0


def test_short_runs_that_a_block_takes_keep_it():
    # (m, n, w) over (0, 2): the kept dim and the runs tile one contiguous
    # block, read as columns (plan._block); runs of runs instead had
    # summed each output's m runs apart
    p = _plan(np.empty((100, 8, 10), np.float32), (0, 2))
    assert p.family == "outer" and p.block is not None
    # cropped runs summed as their own columns (plan._runs_block)
    p = _plan(np.empty((4, 512, 16), np.float32)[..., :3], (1, 2))
    assert p.family == "outer" and p.block is not None


def test_strided_complex_columns_put_the_part_dimension_outermost():
    # [:, ::3] over axis 0: the part cannot merge with the strided columns;
    # innermost it would make the column blocks two outputs wide
    p = _plan(np.empty((6, 15), np.complex128)[:, ::3], 0, pairs=True)
    assert p.family == "outer"
    assert p.kept == ((2, 1, 1), (5, 6, 2))
    assert p.run_step == 0
    # contiguous complex columns merge the part into the columns as before
    assert _plan(np.empty((6, 10), np.complex128), 0, pairs=True).kept == ((20, 1, 1),)


@pytest.mark.parametrize("shape, view, axes, kept", [
    ((6, 10), np.s_[:, ::2], 0, ((10, 4, 1),)),
    ((6, 11), np.s_[:, 1::2], 0, ((10, 4, 1),)),
    ((3, 6, 10), np.s_[..., ::2], 1, ((3, 120, 10), (10, 4, 1))),
    ((6, 10), np.s_[:, ::2], (), ((60, 4, 1),)),  # rows merge: nothing reduced
])
def test_every_second_complex_column_is_one_kept_dim_of_both_parts(shape, view, axes, kept):
    # storage columns 0, 1, 4, 5, ...: 2n of them, written one after another,
    # in groups of two four apart; run_step 4 sends them to the column
    # loop's superset (kernels.outer_block)
    p = _plan(np.empty(shape, np.complex64)[view], axes, pairs=True)
    assert p.family == "outer"
    assert p.kept == kept
    assert (p.run_step, p.group) == (4, 2)
    assert p.params[-1] == 2  # the kernels' copy of the group
    # for reads without the pair loop (exact, scaled): the part outermost
    assert p.fallback.kept[0] == (2, 1, 1) and p.fallback.run_step == 0
    assert p.fallback.fallback is None and p.fallback.params[-1] == 1


@pytest.mark.parametrize("dtype, view, axes, kept, group", [
    (np.float32, np.s_[:, :, :7], 0, ((144 * 7, 22, 1),), 7),  # a crop of the last axis
    (np.int64, np.s_[:, :, 3:9], 0, ((144 * 6, 22, 1),), 6),
    (np.uint8, np.s_[:, :, :6], 0, ((144 * 6, 22, 1),), 6),  # 22 <= 4 * 6
    # 44 > 4 * 7: too far apart (and the narrow dim outermost: few rows, in cache)
    (np.float64, np.s_[:, ::2, :7], 0, ((7, 1, 1), (72, 44, 7)), None),
    (np.float16, np.s_[:, :, :7], 0, ((144 * 7, 22, 1),), 7),  # 16-bit too
    (np.float32, np.s_[:, :, ::2], 0, ((144 * 11, 2, 1),), None),  # every second column
    (np.float32, np.s_[:, :, :1], 0, ((144, 22, 1),), None),  # single columns
    (np.float32, np.s_[:, :, :7], 1, ((18, 3168, 7), (7, 1, 1)), None),  # between, too far apart
    (np.float32, np.s_[::-1, :, :7], 0, ((144 * 7, 22, 1),), 7),  # rows backwards: read forwards
    # groups backwards: read forwards (Plan.flipped), and grouped
    (np.float32, np.s_[:, ::-1, :7], 0, ((144 * 7, 22, 1),), 7),
])
def test_narrow_column_groups_are_one_kept_dim(dtype, view, axes, kept, group):
    # Narrow contiguous columns at many offsets of the next kept dim, their
    # outputs one after another: one kept dim of groups (run_step 4), at
    # most GROUP_SPAN times their width and GROUP_COLUMNS values apart.
    x = np.empty((18, 144, 22), dtype)[view]
    p = _plan(x, axes)
    assert p.family == "outer"
    assert p.kept == kept
    if group is None:
        assert p.group == 1 and p.run_step != 4
        return
    assert (p.run_step, p.group, p.params[-1]) == (4, group, group)
    # the groups' two dims apart (the narrow one outermost under 18 rows,
    # but for 16-bit values: see the narrow kept dims' tests below)
    assert sorted(p.fallback.kept[-2:]) == [(group, 1, 1), (144, 22, group)]
    assert p.fallback.group == 1 and p.fallback.run_step == 0


@pytest.mark.parametrize("shape, axes, kept, group", [
    ((1000, 2, 3), 1, ((3000, 6, 1),), 3),  # (n, m, w) over the middle: groups m * w apart
    ((1000, 3, 16), 1, ((16000, 48, 1),), 16),
    ((1000, 2, 2, 3), (1, 2), ((3000, 12, 1),), 3),  # two reduced dims between, merged
    ((1000, 5, 3), 1, ((3, 1, 1), (1000, 15, 3)), None),  # 15 > 4 * 3: too far apart
])
def test_column_groups_with_reduced_dims_between(shape, axes, kept, group):
    # The reduced dims lie between the groups' two kept dims: each row of
    # the column loop starts inside the groups' span, so its superset reads
    # the other rows' values too, m times the values kept (as S / w does).
    p = _plan(np.empty(shape, np.float32), axes)
    assert p.kept == kept
    if group is None:
        assert p.group == 1 and p.run_step != 4
        return
    assert (p.run_step, p.group, p.params[-1]) == (4, group, group)
    assert p.fallback.group == 1 and len(p.fallback.kept) == 2


@pytest.mark.parametrize("shape, axes, kept", [
    ((1000, 7, 3), 1, ((3, 1, 1), (1000, 21, 3))),
    ((8, 1000, 9, 5), 2, ((5, 1, 1), (8000, 45, 5))),
    ((1000, 4, 4, 3), (1, 2), ((3, 1, 1), (1000, 48, 3))),
    ((1000, 65, 3), 1, ((1000, 195, 3), (3, 1, 1))),  # rows enough for blocks of 3
    ((63, 7, 3), 1, ((63, 21, 3), (3, 1, 1))),  # too few columns across
    ((1000, 7, 8), 1, ((1000, 56, 8), (8, 1, 1))),  # wide enough
])
def test_narrow_kept_dims_under_few_rows_go_outermost(shape, axes, kept):
    # The next kept dim then makes the blocks of columns, their stride
    # apart: a unit each of a few rows of the narrow dim's columns had cost
    # more to call and store than to sum.
    assert _plan(np.empty(shape, np.float32), axes).kept == kept


@pytest.mark.parametrize("dtype, shape, view, kept", [
    # a step of the last two axes: blocks of 3 every-second columns at 495 offsets
    (np.float32, (2, 15, 99, 5), np.s_[:, :, ::3, ::2], ((3, 2, 1), (495, 15, 3))),
    (np.float32, (8, 495, 64), np.s_[..., :3], ((3, 1, 1), (495, 64, 3))),  # a crop, in cache
    (np.float32, (65, 495, 64), np.s_[..., :3], ((495, 64, 3), (3, 1, 1))),  # rows enough
    (np.float16, (8, 495, 64), np.s_[..., :3], ((495, 64, 3), (3, 1, 1))),  # 16-bit: 1024 across
    (np.float16, (4, 495, 64), np.s_[..., :3], ((3, 1, 1), (495, 64, 3))),  # ... past 4 rows
    (np.float16, (8, 1024, 64), np.s_[..., :3], ((3, 1, 1), (1024, 64, 3))),
    # 98 MiB, beyond NARROW_KEPT_CACHED: moved only while the passes read
    # at most NARROW_KEPT_PASS bytes per offset (3 * 8 * 16 values)
    (np.float32, (8, 200000, 16), np.s_[..., :3], ((200000, 16, 3), (3, 1, 1))),  # 1536 bytes
    (np.uint8, (8, 200000, 16), np.s_[..., :3], ((3, 1, 1), (200000, 16, 3))),  # 384 bytes
    # over more rows than NARROW_KEPT_ROWS: strided narrow dims only
    (np.float64, (300, 495, 5), np.s_[..., ::2], ((3, 2, 1), (495, 5, 3))),
    (np.float64, (300, 495, 16), np.s_[..., :3], ((495, 16, 3), (3, 1, 1))),
])
def test_narrow_kept_dims_right_under_the_next_go_outermost_while_cheap(dtype, shape, view, kept):
    # Without a reduced dim between them, each of the narrow dim's units
    # walks the whole span once it is outermost (see plan.NARROW_KEPT_PASS).
    x = np.empty(shape, dtype)[view]  # (never touched: no memory used)
    assert _plan(x, 0).kept == kept


@pytest.mark.parametrize("shape, kept", [
    ((2, 15, 99, 5), ((3, 4, 2), (2, 1, 1), (495, 30, 6))),  # both parts, then the columns
    ((33, 15, 99, 5), ((495, 30, 6), (6, 4, 1))),  # past NARROW_KEPT_ROWS_PAIRS: groups
])
def test_narrow_strided_complex_columns_go_outermost_with_their_parts(shape, kept):
    x = np.empty(shape, np.complex64)[:, :, ::3, ::2]
    assert _plan(x, 0, pairs=True).kept == kept


def test_narrow_16bit_kept_dims_go_outermost_over_more_columns():
    # the column loop reads 16-bit blocks under 256 KiB a row at a time
    x = np.empty((NARROW_KEPT_ACROSS_16, 7, 3), np.float16)
    assert _plan(x, 1).kept == ((3, 1, 1), (NARROW_KEPT_ACROSS_16, 21, 3))
    assert _plan(x[1:], 1).kept == ((NARROW_KEPT_ACROSS_16 - 1, 21, 3), (3, 1, 1))


@pytest.mark.parametrize("shape, axes, kept, permute", [
    # x.T for a C-ordered x of ``shape``, over x's ``axes``: its kept dims
    # are in the reverse of their memory order
    ((5000, 64, 3), 0, ((192, 1, 1),), ((64, 3), (1, 0))),
    ((5000, 64, 300), 0, ((19200, 1, 1),), ((64, 300), (1, 0))),
    ((5000, 2, 16), 1, ((80000, 32, 1),), ((5000, 16), (1, 0))),  # then grouped
    ((20, 100, 7, 30), 2, ((2000, 210, 30), (30, 1, 1)), ((20, 100, 30), (2, 1, 0))),
    ((5000, 64, 3), 2, ((320000, 3, 1),), ((5000, 64), (1, 0))),  # short rows
])
def test_kept_dims_out_of_memory_order_are_planned_in_it(shape, axes, kept, permute):
    # A column plan whose kept dims merge, or group, only in their memory
    # order writes them so, for the caller to transpose (Plan.permute).
    x = np.empty(shape, np.float32)
    p = _plan(x.T, (x.ndim - 1 - axes,))
    assert (p.kept, p.permute) == (kept, permute)
    mem, order = permute
    assert tuple(mem[k] for k in order) == p.out_shape
    q = _plan(x, (axes,))  # in order already: never permuted
    assert q.permute is None


def test_columns_read_backwards_are_read_forwards():
    # from FLIP_MIN values and FLIP_ROWS rows; the means are written
    # backwards, and reversed into the result (Plan.flipped)
    x = np.empty((64, 64), np.float32)
    p = _plan(x[:, ::-1], (0,))
    assert p.flipped == (0,) and p.kept == ((64, 1, 1),) and p.permute == ((64,), (0,))
    assert p.params[0] == 0  # the first value read is the lowest address
    assert not _plan(x[:16, ::-1], (0,)).flipped  # 1024 values
    assert not _plan(np.empty((2, 4096), np.float32)[:, ::-1], (0,)).flipped  # two rows
    assert _plan(np.empty((4, 4096), np.float32)[:, ::-1], (0,)).flipped == (0,)
    assert not _plan(x[::-1], (1,)).flipped  # a reduced dim backwards: read forwards anyway
    q = _plan(np.empty((8, 100, 64), np.float32)[::-1, :, ::-1], (1,))
    assert q.flipped == (0, 1) and all(s > 0 for _, s, _ in q.kept)
    c = _plan(np.empty((64, 64), np.complex64)[:, ::-1], (0,), pairs=True)
    assert c.flipped == (0,) and c.kept == ((128, 1, 1),)  # both parts, one block


def test_kept_dims_out_of_order_that_gain_nothing_keep_it_and_complex_permute():
    # no fewer kept dims and no groups in memory order (300 > 4 * 3): the
    # plan as it was.  Complex values are permuted as the others are.
    x = np.empty((5000, 100, 3), np.float32).T
    p = _plan(x, (1,))
    assert p.permute is None and p.kept == ((5000, 300, 1), (3, 1, 5000))
    small = np.empty((4, 4, 3), np.float32).T  # under PERMUTE_MIN values: as it is
    assert _plan(small, (2,)).permute is None
    assert _plan(np.empty((8, 8, 3), np.float32).T, (2,)).permute is not None
    c = np.empty((5000, 64, 3), np.complex64).T  # complex values: their parts stay innermost
    p = _plan(c, (2,), pairs=True)
    assert p.kept == ((384, 1, 1),) and p.permute == ((64, 3), (1, 0))


@pytest.mark.parametrize("view, axes, run_step", [
    (np.s_[:, :], 1, 1),  # contiguous complex rows
    (np.s_[:, :], None, 1),  # a whole array: one run
    (np.s_[:, ::2], 1, 2),  # every second value, one run a row
    (np.s_[:, :10:2], None, 0),  # ... over two reduced dims: strided
    (np.s_[:, ::3], 1, 0),  # strided
    (np.s_[:, ::-1], 1, 1),  # backwards: read forwards, contiguous
])
def test_complex_runs_mark_the_loops_their_kernels_need(view, axes, run_step):
    # the parts kernels compile only their token's loops (kernels._parts_partial)
    p = _plan(np.empty((6, 12), np.complex128)[view], axes, pairs=True)
    assert p.family == "parts"
    assert p.run_step == run_step


@pytest.mark.parametrize("view, axes, reduced, start", [
    (np.s_[:, ::-1], 1, ((10,), (1,)), 0),  # rows: each one forwards
    (np.s_[::-1, ::-1], None, ((60,), (1,)), 0),  # the whole array: one run
    (np.s_[::-1], 0, ((6,), (10,)), 0),  # columns: rows from the last
    (np.s_[:, 8:2:-3], 1, ((2,), (3,)), 0),
    (np.s_[::-1, ::-1], 1, ((10,), (1,)), 50),  # the kept dim stays backwards
])
def test_reduced_dims_read_backwards_are_read_forwards(view, axes, reduced, start):
    # the same values, so the same mean; then they merge like forward dims.
    # Kept dims keep their order (the result's layout follows them).
    x = np.empty((6, 10), np.float64)
    p = _plan(x[view], axes)
    assert tuple(zip(*p.reduced)) == reduced
    assert all(s > 0 for _, s in p.reduced)
    assert p.params[0] == start  # offset of the first value read, from the lowest address


def test_strides_that_are_not_whole_elements_have_no_plan():
    # only as_strided makes such views (3-byte steps over 2-byte items); the caller copies
    assert make_plan((10,), (3,), 2, (0,), False) is None


def test_plans_are_memoised_and_frozen():
    a = np.empty((8, 9), np.float32)
    p1 = plan_for(a.shape, a.strides, 4, (1,), False)
    p2 = plan_for(a.shape, a.strides, 4, (1,), False)
    assert p1 is p2
    with pytest.raises(AttributeError):
        p1.count = 3  # frozen dataclass
    with pytest.raises(ValueError):
        p1.params[0] = 1  # read-only packed form


@pytest.mark.parametrize(
    "axis, ndim, expected",
    [(None, 3, (0, 1, 2)), (-1, 3, (2,)), ((2, 0), 3, (0, 2)), (np.int64(1), 2, (1,)), ((), 2, ())],
)
def test_normalize_axis(axis, ndim, expected):
    assert normalize_axis(axis, ndim) == expected


@pytest.mark.parametrize(
    "axis, ndim, exc",
    [(3, 3, AxisError), (-4, 3, AxisError), ((0, 0), 2, ValueError), ((1, -1), 2, ValueError),
     (1.0, 2, TypeError), ("0", 2, TypeError), (((0,),), 2, TypeError)],
)
def test_normalize_axis_errors_match_numpy(axis, ndim, exc):
    with pytest.raises(exc):
        normalize_axis(axis, ndim)
    with pytest.raises(exc):
        np.add.reduce(np.empty((2,) * ndim), axis=axis)


@pytest.mark.parametrize("width, stride, grouped", [
    (40, 48, True), (12, 48, True), (16, 60, False), (50, 190, False), (60, 120, False)])
def test_column_groups_span_at_most_group_columns(width, stride, grouped):
    # wider groups, or further apart, have columns enough to vectorise across
    x = np.empty((18, 10, stride), np.float32)[:, :, :width]
    assert (_plan(x, 0).group > 1) == grouped
