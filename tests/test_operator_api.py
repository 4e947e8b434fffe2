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
