"""Flags and axes shared by the operator front-ends: every bad type and value is refused."""

import numpy as np
import pytest

import reducemean
from reducemean.specs import onednn, onnx, openvino

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("bad", [2, -1, 1.0, "1", None, [1], np.float32(1)])
@pytest.mark.parametrize("name", ["keepdims", "noop_with_empty_axes"])
def test_onnx_flags_must_be_0_1_or_bool(name, bad):
    exc = ValueError if isinstance(bad, int) else TypeError
    with pytest.raises(exc, match=name):
        reducemean.reduce_mean(X, axes=[0], **{name: bad})
    with pytest.raises(exc, match=name):
        onnx.reduce_mean(X, axes=[0], opset=18, **{name: bad})


@pytest.mark.parametrize("good", [0, 1, True, False, np.int64(1), np.bool_(False)])
def test_onnx_flags_accept_ints_and_bools(good):
    got = reducemean.reduce_mean(X, axes=[1], keepdims=good)
    want_shape = (2, 1, 4) if good else (2, 4)
    assert got.shape == want_shape
    assert np.array_equal(got.reshape(2, 4), X.sum(axis=1) / 3)


@pytest.mark.parametrize("bad", [1, 0, "true", None, 1.0])
def test_openvino_and_onednn_keep_dims_is_a_boolean(bad):
    with pytest.raises(TypeError, match="keep_dims"):
        openvino.reduce_mean(X, np.array([0]), keep_dims=bad)
    with pytest.raises(TypeError, match="keep_dims"):
        onednn.reduce_mean(X, axes=[0], keep_dims=bad)


@pytest.mark.parametrize("bad", ["x", [1], None, 2.5])
def test_mean_keepdims_of_other_types_behaves_as_numpy(bad):
    try:
        want = np.mean(X, axis=1, keepdims=bad)
    except Exception as e:  # numpy's own verdict decides
        with pytest.raises(type(e)):
            reducemean.mean(X, axis=1, keepdims=bad)
        return
    got = reducemean.mean(X, axis=1, keepdims=bad)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    assert np.array_equal(got, want)


@pytest.mark.parametrize("axes", [[2**70], [-(2**70)], [2**63], np.array([2**40])])
def test_axes_beyond_any_rank_name_the_value_and_range(axes):
    with pytest.raises(ValueError, match=r"out of range \[-3, 2\]"):
        reducemean.reduce_mean(X, axes=axes)


# ---------------------------------------------------------------- views: no copy


_FRONT_ENDS = {
    "reduce_mean": lambda v, ax: reducemean.reduce_mean(v, axes=list(ax), keepdims=0),
    "onnx-11": lambda v, ax: onnx.reduce_mean(v, axes=list(ax), keepdims=0, opset=11),
    "openvino": lambda v, ax: openvino.reduce_mean(v, np.array(ax, np.int64)),
    "onednn": lambda v, ax: onednn.reduce_mean(v, axes_input=np.array(ax, np.int32)),
}


@pytest.mark.parametrize("kind", ["transposed", "stepped", "negative_steps", "fortran", "readonly",
                                  "unaligned", "broadcast_col", "permuted_3d"])
@pytest.mark.parametrize("front", sorted(_FRONT_ENDS))
def test_front_ends_reduce_views_without_a_copy(front, kind):
    # as reducemean.mean (test_mean_views.test_big_views_no_copy): the
    # operators share its kernels, and must not copy a view on their way to them
    from test_mean_views import _exact_big, _logical, _make_test_view, _peak_traced
    from exact import ulp_distance

    ints = np.random.default_rng(7).integers(-1000, 1001, size=2**23).astype(np.int64)
    v = _make_test_view(kind, ints.astype(np.float32))
    nbytes = v.size * v.itemsize  # 32 MiB
    for ax in ((0,), tuple(range(1, v.ndim)), tuple(range(v.ndim))):
        got, peak = _peak_traced(lambda: _FRONT_ENDS[front](v, ax))  # noqa: B023
        assert peak < nbytes / 4, f"{front} {kind} axes {ax}: {peak / 2**20:.1f} MiB traced (a copy?)"
        assert got.dtype == np.float32
        exact = _exact_big(_logical(kind, ints), ax)
        assert np.shape(got) == exact.shape
        worst = max(ulp_distance(g, e, np.float32) for g, e in zip(np.ravel(got), exact.ravel()))
        assert worst <= 1, (front, kind, ax, worst)


def test_front_ends_from_many_threads_each_get_their_own_means():
    # as reducemean.mean's threaded tests: the operators' memoised plans and
    # kernels are shared by every thread, the results must not be
    from threads import run_threads

    rng = np.random.default_rng(11)
    arrays = [rng.integers(-2**62, 2**62, (64, 96), dtype=np.int64) for _ in range(4)]
    # the exact means over axis 0 truncated toward zero, from Python ints
    want = [[_trunc_div(sum(int(v) for v in a[:, j]), 64) for j in range(96)] for a in arrays]
    calls = [lambda a: reducemean.reduce_mean(a, axes=[0], keepdims=0),
             lambda a: onnx.reduce_mean(a, axes=[0], keepdims=0, opset=13),
             lambda a: openvino.reduce_mean(a, np.array([0]))]
    wrong = []

    def work(k):
        for i in range(60):
            got = calls[i % 3](arrays[k])
            if got.dtype != np.int64 or got.tolist() != want[k]:
                wrong.append((k, i % 3))

    assert run_threads(work, [(k,) for k in range(4)]) == []
    assert wrong == []


def _trunc_div(total, n):
    """``total / n`` truncated toward zero, in Python ints."""
    q = abs(total) // n
    return q if total >= 0 else -q
