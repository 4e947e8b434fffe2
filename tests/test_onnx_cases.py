"""ONNX's own ReduceMean node test cases, run through ``reducemean``.

The onnx wheel no longer ships the ``test_reduce_mean_*`` data files, so the
cases are regenerated with ``onnx.backend.test.case.node.collect_testcases``:
each carries the node (attributes and input names), the input arrays and the
expected outputs ONNX computed with numpy.

Tolerance.  ONNX's expected values are ``np.mean`` of float32 data, i.e. a
float32 sum followed by one division, so they may themselves be a few float32
ulps away from the exact mean.  The package promises 1 ulp of the *exact*
mean.  Each float result is therefore checked twice:

* against the exact mean of the case's inputs (``exact.py``): <= 1 ulp;
* against ONNX's stored output with ``rtol=1e-6`` (about 8 float32 ulps) plus
  an absolute slack equal to numpy's float32 summation error bound,
  ``n * eps32 * mean(|x|)``, which covers ONNX's own rounding when a mean
  cancels to near zero.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

import exact  # noqa: E402
import reducemean  # noqa: E402
import reducemean.specs.onnx  # noqa: E402


def _collect():
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # other operators' generators warn
        cases = collect_testcases("ReduceMean")
    return sorted(cases, key=lambda c: c.name)


CASES = _collect()
CASE_IDS = [c.name for c in CASES]


def _opset(model):
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    raise AssertionError("no default-domain opset")


def _node_call(case):
    """(data, axes or None, attribute dict, opset, expected outputs)."""
    model = case.model
    (node,) = model.graph.node
    assert node.op_type == "ReduceMean"
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert len(case.data_sets) >= 1
    inputs, outputs = case.data_sets[0]
    feeds = dict(zip([i for i in node.input], inputs))
    data = feeds[node.input[0]]
    axes = feeds.get(node.input[1]) if len(node.input) > 1 and node.input[1] else None
    if "axes" in attrs:  # opset < 18 models carry axes as an attribute
        assert axes is None
        axes = list(attrs.pop("axes"))
    return data, axes, attrs, _opset(model), list(outputs)


def _norm(axes, nd):
    if axes is None or len(np.asarray(axes).reshape(-1)) == 0:
        return tuple(range(nd))
    return tuple(sorted(int(a) % nd for a in np.asarray(axes).reshape(-1)))


def _compare(got, expected, data, axes, keepdims):
    got = np.asarray(got)
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    ax = _norm(axes, data.ndim)
    if expected.dtype.kind in "iu":
        np.testing.assert_array_equal(got, expected)
        return
    # 1) the contract: within 1 ulp of the exact mean
    ex = exact.exact_mean(data, ax)
    g = got.reshape(ex.shape)
    for idx in np.ndindex(*ex.shape):
        d = exact.ulp_distance(g[idx], ex[idx], got.dtype)
        assert d <= 1.0, (idx, float(g[idx]), float(ex[idx]), d)
    # 2) ONNX's stored values, allowing for their own float32 rounding
    n = math.prod(data.shape[a] for a in ax)
    eps = float(np.finfo(expected.dtype).eps)
    absdata = np.abs(data.astype(np.float64))
    mean_abs = absdata.mean(axis=ax, keepdims=bool(keepdims)).reshape(expected.shape)
    atol = n * eps * mean_abs
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    allowed = atol + 1e-6 * np.abs(expected.astype(np.float64))
    assert np.all(diff <= allowed), (got, expected, diff, allowed)


def test_cases_were_found():
    names = set(CASE_IDS)
    # the four example families of the ONNX page, example and random data each
    for stem in ("do_not_keepdims", "keepdims", "default_axes_keepdims",
                 "negative_axes_keepdims"):
        assert f"test_reduce_mean_{stem}_example" in names
        assert f"test_reduce_mean_{stem}_random" in names


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_onnx_case_reduce_mean(case):
    data, axes, attrs, opset, outputs = _node_call(case)
    if opset < 18:
        pytest.skip(f"reducemean.reduce_mean follows opset 18; model is opset {opset}")
    got = reducemean.reduce_mean(data, axes=axes, **attrs)
    _compare(got, outputs[0], data, axes, attrs.get("keepdims", 1))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_onnx_case_specs_onnx_at_model_opset(case):
    data, axes, attrs, opset, outputs = _node_call(case)
    got = reducemean.specs.onnx.reduce_mean(data, axes=axes, opset=opset, **attrs)
    _compare(got, outputs[0], data, axes, attrs.get("keepdims", 1))


@pytest.mark.parametrize("opset", [1, 11, 13])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_onnx_case_as_attribute_at_older_opsets(case, opset):
    """The same node written for an older opset: axes becomes an attribute.

    An empty axes input means "all axes", which older opsets express by
    leaving the attribute out.  Negative axes exist from opset 11 on.
    """
    data, axes, attrs, model_opset, outputs = _node_call(case)
    if attrs.get("noop_with_empty_axes"):
        pytest.skip("noop_with_empty_axes has no older-opset form")
    attrs.pop("noop_with_empty_axes", None)
    axes_attr = None if axes is None or np.asarray(axes).size == 0 else [
        int(a) for a in np.asarray(axes).reshape(-1)]
    if opset < 11 and axes_attr is not None and any(a < 0 for a in axes_attr):
        with pytest.raises(ValueError):
            reducemean.specs.onnx.reduce_mean(data, axes=axes_attr, opset=opset, **attrs)
        return
    got = reducemean.specs.onnx.reduce_mean(data, axes=axes_attr, opset=opset, **attrs)
    _compare(got, outputs[0], data, axes, attrs.get("keepdims", 1))
