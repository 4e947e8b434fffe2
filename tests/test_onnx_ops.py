"""``reducemean.onnx_ops.ReduceMean`` inside ``onnx.reference.ReferenceEvaluator``.

References, never the package's own output:

* the evaluator's own ReduceMean (run without ``new_ops``): same dtype and
  shape, values within a float tolerance (it sums in the input's dtype, so
  float16 and bfloat16 references are only a few ulps good);
* exact means (``exact.py``: Fractions and Python ints): floats within 1 ulp,
  integers the exact mean truncated toward zero;
* ONNX's own node test cases whose graph holds a ReduceMean node (the
  ReduceMean cases, and the expanded LayerNormalization, RMSNormalization,
  MeanVarianceNormalization, ... cases), against their stored outputs.

A spy on :func:`reducemean.specs.onnx.reduce_mean` proves each ReduceMean
node really ran on reducemean, at the model's opset.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import exact  # noqa: E402
import reducemean.specs.onnx  # noqa: E402
from reducemean.onnx_ops import ReduceMean  # noqa: E402

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

OPSETS = [1, 11, 13, 18]
BASE = ["float32", "float64", "float16", "int32", "int64", "uint32", "uint64"]
SHAPE = (3, 4, 5)


def _dtype(name):
    return BF16 if name == "bfloat16" else np.dtype(name)


def _types(opset):
    return BASE + (["bfloat16"] if opset >= 13 else [])


def _elem_type(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _data(dtype, shape=SHAPE, seed=0):
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return rng.integers(-1000, 1000, shape).astype(dtype)
    if dtype.kind == "u":
        return rng.integers(0, 2000, shape).astype(dtype)
    return rng.uniform(-4, 4, shape).astype(dtype)


def _model(opset, dtype, axes=None, keepdims=None, noop=None, rank=None):
    """A one-node model: axes as an attribute below 18, as input ``A`` from 18."""
    attrs = {}
    if keepdims is not None:
        attrs["keepdims"] = keepdims
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    inputs = ["X"]
    graph_inputs = [helper.make_tensor_value_info("X", _elem_type(dtype), None)]
    if axes is not None:
        if opset >= 18:
            inputs.append("A")
            graph_inputs.append(helper.make_tensor_value_info("A", TensorProto.INT64, [len(axes)]))
        else:
            attrs["axes"] = list(axes)
    node = helper.make_node("ReduceMean", inputs, ["Y"], **attrs)
    graph = helper.make_graph(
        [node], "reduce_mean", graph_inputs,
        [helper.make_tensor_value_info("Y", _elem_type(dtype), None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _feeds(opset, data, axes):
    feeds = {"X": data}
    if axes is not None and opset >= 18:
        feeds["A"] = np.array(axes, dtype=np.int64)
    return feeds


def _run(model, feeds, new_ops=True):
    sess = ReferenceEvaluator(model, new_ops=[ReduceMean] if new_ops else None)
    return sess.run(None, feeds)


@pytest.fixture
def spy(monkeypatch):
    """Records the opset of every call the op makes into reducemean."""
    calls = []
    real = reducemean.specs.onnx.reduce_mean

    def recording(*args, **kwargs):
        calls.append(kwargs.get("opset"))
        return real(*args, **kwargs)

    monkeypatch.setattr(reducemean.specs.onnx, "reduce_mean", recording)
    return calls


def _tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype == BF16:
        return dict(rtol=4e-2, atol=4e-2)
    if dtype == np.float16:
        return dict(rtol=5e-3, atol=5e-3)
    if dtype == np.float32:
        return dict(rtol=1e-5, atol=1e-5)
    return dict(rtol=1e-12, atol=1e-12)


def _check_exact(got, data, axes):
    """``got`` against the exact mean of ``data`` over the normalised ``axes``."""
    ex = exact.exact_mean(data, axes)
    g = np.asarray(got).reshape(ex.shape)
    for idx in np.ndindex(*ex.shape):
        if data.dtype.kind in "iu":
            assert int(g[idx]) == int(ex[idx]), (idx, g[idx], ex[idx])  # int() truncates
        else:
            d = exact.ulp_distance(g[idx], ex[idx], data.dtype)
            assert d <= 1.0, (idx, float(g[idx]), float(ex[idx]), d)


def _compare_with_evaluator(got, ref):
    assert got.dtype == ref.dtype
    assert got.shape == ref.shape
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, ref)
    else:
        np.testing.assert_allclose(
            got.astype(np.float64), ref.astype(np.float64), **_tolerance(got.dtype)
        )


def _axes_cases(opset):
    cases = [None, [1], [0, 2], [2, 1, 0]]
    if opset >= 11:
        cases += [[-1], [-3, 1]]
    return cases


LONE_CASES = [
    (opset, name, axes, keepdims)
    for opset in OPSETS
    for name in _types(opset)
    for axes in _axes_cases(opset)
    for keepdims in (None, 0, 1)
]


@pytest.mark.parametrize(
    "opset,name,axes,keepdims",
    LONE_CASES,
    ids=[f"opset{o}-{n}-axes{a}-keepdims{k}" for o, n, a, k in LONE_CASES],
)
def test_lone_node(spy, opset, name, axes, keepdims):
    dtype = _dtype(name)
    data = _data(dtype)
    model = _model(opset, dtype, axes, keepdims)
    feeds = _feeds(opset, data, axes)
    (got,) = _run(model, feeds)
    (ref,) = _run(model, feeds, new_ops=False)
    assert spy == [opset]
    _compare_with_evaluator(got, ref)
    norm = tuple(range(data.ndim)) if axes is None else tuple(sorted(a % data.ndim for a in axes))
    _check_exact(got, data, norm)


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("name", ["float32", "float16", "int64", "bfloat16"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_empty_axes_input_reduces_everything(spy, opset, name, keepdims):
    dtype = _dtype(name)
    data = _data(dtype)
    model = _model(opset, dtype, axes=[], keepdims=keepdims)
    feeds = _feeds(opset, data, [])
    (got,) = _run(model, feeds)
    (ref,) = _run(model, feeds, new_ops=False)
    assert spy == [opset]
    _compare_with_evaluator(got, ref)
    assert got.shape == ((1, 1, 1) if keepdims else ())
    _check_exact(got, data, (0, 1, 2))


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "int32", "uint64", "bfloat16"])
@pytest.mark.parametrize("axes", [None, []], ids=["absent", "empty"])
def test_noop_with_empty_axes_is_identity(spy, name, axes):
    dtype = _dtype(name)
    data = _data(dtype)
    model = _model(18, dtype, axes=axes, noop=1)
    feeds = _feeds(18, data, axes)
    (got,) = _run(model, feeds)
    (ref,) = _run(model, feeds, new_ops=False)
    assert spy == [18]
    assert got.dtype == ref.dtype == dtype
    assert got.shape == ref.shape == data.shape
    np.testing.assert_array_equal(got.astype(np.float64), data.astype(np.float64))
    assert not np.shares_memory(got, data)


@pytest.mark.parametrize("keepdims", [0, 1])
def test_noop_with_axes_given_still_reduces(spy, keepdims):
    data = _data(np.float32)
    model = _model(18, np.float32, axes=[-2], keepdims=keepdims, noop=1)
    feeds = _feeds(18, data, [-2])
    (got,) = _run(model, feeds)
    (ref,) = _run(model, feeds, new_ops=False)
    _compare_with_evaluator(got, ref)
    _check_exact(got, data, (1,))
    assert spy == [18]


@pytest.mark.parametrize(
    "opset,version,axes_attr",
    [(5, 1, True), (10, 1, True), (12, 11, True), (17, 13, True), (19, 18, False), (21, 18, False)],
)
def test_opsets_between_versions_run_the_version_in_force(spy, opset, version, axes_attr):
    """Opset k runs the newest ReduceMean version not above k."""
    data = _data(np.float32)
    axes = [0, 2]
    model = _model(opset, np.float32, axes=axes, keepdims=0)
    assert any(a.name == "axes" for a in model.graph.node[0].attribute) == axes_attr
    feeds = _feeds(opset, data, axes)
    (got,) = _run(model, feeds)
    (ref,) = _run(model, feeds, new_ops=False)
    _compare_with_evaluator(got, ref)
    assert spy == [opset]
    negative = _model(opset, np.float32, axes=[-1], keepdims=0)
    if version < 11:
        with pytest.raises(ValueError, match="negative"):
            _run(negative, _feeds(opset, data, [-1]))
    else:
        (got,) = _run(negative, _feeds(opset, data, [-1]))
        _check_exact(got, data, (2,))


def test_negative_axes_refused_at_opset_1(spy):
    data = _data(np.float32)
    model = _model(1, np.float32, axes=[-1])
    with pytest.raises(ValueError, match="negative"):
        _run(model, {"X": data})
    assert spy == [1]


@pytest.mark.parametrize(
    "opset,name", [(18, "int8"), (18, "uint16"), (13, "int16"), (11, "bfloat16"), (1, "bfloat16")]
)
def test_types_outside_the_version_are_refused(opset, name, spy):
    dtype = _dtype(name)
    model = _model(opset, dtype, axes=[0])
    with pytest.raises(TypeError) as info:
        _run(model, _feeds(opset, _data(dtype), [0]))
    assert spy == [opset]
    # the reference evaluator re-raises our refusal, which names the type, as the cause
    assert isinstance(info.value.__cause__, TypeError)
    assert f"input type {name} is not in T" in str(info.value.__cause__)


@pytest.mark.parametrize("opset", [18, 11])
def test_axis_out_of_range_is_refused(opset):
    model = _model(opset, np.float32, axes=[3])
    with pytest.raises(ValueError, match="out of range"):
        _run(model, _feeds(opset, _data(np.float32), [3]))


def test_attribute_of_another_version_is_refused():
    node = helper.make_node("ReduceMean", ["X"], ["Y"], axes=[0], noop_with_empty_axes=0)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ValueError, match="noop_with_empty_axes"):
        ReferenceEvaluator(model, new_ops=[ReduceMean])
    node18 = helper.make_node("ReduceMean", ["X"], ["Y"], axes=[0])
    graph18 = helper.make_graph(
        [node18], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model18 = helper.make_model(graph18, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ValueError, match="axes"):
        ReferenceEvaluator(model18, new_ops=[ReduceMean])


@pytest.mark.parametrize("opset", OPSETS)
def test_rank0_input(spy, opset):
    data = np.array(2.5, dtype=np.float32)
    model = _model(opset, np.float32)
    (got,) = _run(model, {"X": data})
    (ref,) = _run(model, {"X": data}, new_ops=False)
    _compare_with_evaluator(got, ref)
    assert got.shape == () and got == np.float32(2.5)
    assert spy == [opset]


@pytest.mark.parametrize("name,fill", [("float32", np.nan), ("float16", np.nan), ("int32", 0)])
def test_empty_reduction_warns(spy, name, fill):
    dtype = np.dtype(name)
    data = np.zeros((0, 3), dtype)
    model = _model(18, dtype, axes=[0], keepdims=0)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        (got,) = _run(model, _feeds(18, data, [0]))
    assert got.dtype == dtype and got.shape == (3,)
    np.testing.assert_array_equal(got, np.full(3, fill, dtype))
    assert spy == [18]


def test_integers_are_exact_beyond_64_bit_sums(spy):
    """The evaluator's int64 accumulator would wrap here; the op must not."""
    big = 2**62
    data = np.array([[big, big, big, -7], [big - 1, -big, 3, big]], dtype=np.int64)
    model = _model(18, np.int64, axes=[1], keepdims=0)
    (got,) = _run(model, _feeds(18, data, [1]))
    want = []
    for row in data.tolist():
        s = sum(row)
        q = abs(s) // len(row)
        want.append(q if s >= 0 else -q)
    assert got.dtype == np.int64
    assert got.tolist() == want
    assert spy == [18]


def test_float32_accuracy_beats_the_evaluator(spy):
    """A mean numpy's float32 accumulator gets wrong; ReduceMean must be 1 ulp good."""
    data = np.ones((2 * 10**6 + 3, 2), np.float32)
    data[::3] = np.float32(1 + 2**-20)
    model = _model(18, np.float32, axes=[0], keepdims=0)
    (got,) = _run(model, _feeds(18, data, [0]))
    n = data.shape[0]
    k = len(range(0, n, 3))
    from fractions import Fraction

    exact_mean = (Fraction(n - k) + k * Fraction(1 + 2**-20)) / n
    for v in got:
        assert exact.ulp_distance(v, exact_mean, np.float32) <= 1.0
    assert spy == [18]


@pytest.mark.parametrize("opset", [13, 18])
def test_graph_matmul_reducemean_sub_reducemean(spy, opset):
    """MatMul -> ReduceMean (rows) -> Sub -> ReduceMean (columns)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    w = rng.standard_normal((5, 7)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["X", "W"], ["P"])]
    inits = [onnx.numpy_helper.from_array(w, "W")]
    if opset >= 18:
        inits += [
            onnx.numpy_helper.from_array(np.array([1], np.int64), "ax1"),
            onnx.numpy_helper.from_array(np.array([-2], np.int64), "ax0"),
        ]
        nodes += [
            helper.make_node("ReduceMean", ["P", "ax1"], ["M"], keepdims=1),
            helper.make_node("Sub", ["P", "M"], ["D"]),
            helper.make_node("ReduceMean", ["D", "ax0"], ["Y"], keepdims=0),
        ]
    else:
        nodes += [
            helper.make_node("ReduceMean", ["P"], ["M"], axes=[1], keepdims=1),
            helper.make_node("Sub", ["P", "M"], ["D"]),
            helper.make_node("ReduceMean", ["D"], ["Y"], axes=[-2], keepdims=0),
        ]
    graph = helper.make_graph(
        nodes, "centred", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [6, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [7])], initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    (got,) = _run(model, {"X": x})
    (ref,) = _run(model, {"X": x}, new_ops=False)
    assert spy == [opset, opset]
    assert got.dtype == np.float32 and got.shape == (7,)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    # the same pipeline in float64 numpy, as a second reference
    p = x.astype(np.float64) @ w.astype(np.float64)
    want = (p - p.mean(axis=1, keepdims=True)).mean(axis=0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_reduce_mean_inside_a_subgraph(spy):
    x = _data(np.float32)
    then_graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["X"], ["Y1"], axes=[1], keepdims=0)], "then", [],
        [helper.make_tensor_value_info("Y1", TensorProto.FLOAT, None)],
    )
    else_graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["X"], ["Y2"], axes=[2], keepdims=0)], "else", [],
        [helper.make_tensor_value_info("Y2", TensorProto.FLOAT, None)],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["C"], ["Y"], then_branch=then_graph, else_branch=else_graph)],
        "branch",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("C", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    for cond, axis in ((True, 1), (False, 2)):
        feeds = {"X": x, "C": np.array(cond)}
        (got,) = _run(model, feeds)
        (ref,) = _run(model, feeds, new_ops=False)
        _compare_with_evaluator(got, ref)
        _check_exact(got, x, (axis,))
    assert spy == [13, 13]


def test_reduce_mean_inside_a_local_function(spy):
    """The documented way: inline the model's local functions, then evaluate."""
    fn = helper.make_function(
        "local", "RowMean", ["X"], ["Y"],
        [helper.make_node("ReduceMean", ["X"], ["Y"], axes=[-1], keepdims=0)],
        [helper.make_opsetid("", 13)],
    )
    graph = helper.make_graph(
        [helper.make_node("RowMean", ["X"], ["Y"], domain="local")], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("local", 1)],
        functions=[fn],
    )
    x = _data(np.float32)
    import onnx.inliner

    (got,) = _run(onnx.inliner.inline_local_functions(model), {"X": x})
    (ref,) = _run(model, {"X": x}, new_ops=False)
    _compare_with_evaluator(got, ref)
    _check_exact(got, x, (2,))
    assert spy == [13]


# ``collect_testcases`` fills one module-level list, once per process, for
# whichever op the first caller asked for; collecting in a child process
# keeps this module independent of other test modules' calls.
_COLLECT = """
import pickle, sys, warnings
warnings.simplefilter("ignore")
from onnx.backend.test.case.node import collect_testcases
out = []
for c in collect_testcases(None):
    if any(n.op_type == "ReduceMean" for n in c.model.graph.node):
        out.append((c.name, c.model.SerializeToString(), c.data_sets, c.rtol, c.atol))
with open(sys.argv[1], "wb") as f:
    pickle.dump(out, f)
"""


def _collect_graphs_with_reduce_mean():
    """ONNX's node test cases whose graph holds a ReduceMean node, by name."""
    import pickle
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = f"{tmp}/cases.pkl"
        subprocess.run([sys.executable, "-c", _COLLECT, path], check=True)
        with open(path, "rb") as f:
            rows = pickle.load(f)
    cases = []
    for name, blob, data_sets, rtol, atol in sorted(rows, key=lambda r: r[0]):
        model = onnx.ModelProto()
        model.ParseFromString(blob)
        cases.append((name, model, data_sets, rtol, atol))
    return cases


def _count_reduce_mean(model):
    return sum(n.op_type == "ReduceMean" for n in model.graph.node)


def _opset(model):
    return next(i.version for i in model.opset_import if i.domain in ("", "ai.onnx"))


CASES = _collect_graphs_with_reduce_mean()
CASE_IDS = [c[0] for c in CASES]


def test_onnx_cases_were_found():
    names = set(CASE_IDS)
    for stem in ("do_not_keepdims", "keepdims", "default_axes_keepdims", "negative_axes_keepdims"):
        for kind in ("example", "random"):
            assert f"test_reduce_mean_{stem}_{kind}" in names
    # expanded functions put ReduceMean-13 (axes attribute) and -18 nodes in graphs
    assert {_opset(c[1]) for c in CASES} >= {13, 17, 18}


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_onnx_case(spy, case):
    """ONNX's ReduceMean cases and the expanded function cases (LayerNormalization,
    MeanVarianceNormalization, RMSNormalization, ...) against their stored outputs."""
    name, model, data_sets, rtol, atol = case
    sess = ReferenceEvaluator(model, new_ops=[ReduceMean])
    for inputs, outputs in data_sets:
        feeds = dict(zip([i.name for i in model.graph.input], inputs))
        got = sess.run(None, feeds)
        assert len(got) == len(outputs)
        for g, e in zip(got, outputs):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=max(rtol, 1e-5), atol=max(atol, 1e-6))
    assert spy == [_opset(model)] * (_count_reduce_mean(model) * len(data_sets))


def test_eval_classmethod_uses_the_newest_opset(spy):
    x = _data(np.float64)
    got = ReduceMean.eval(x, np.array([0, -1], np.int64), keepdims=0)
    assert got.shape == (4,) and got.dtype == np.float64
    _check_exact(got, x, (0, 2))
    assert spy == [onnx.defs.onnx_opset_version()]


def test_importing_reducemean_does_not_import_onnx():
    code = (
        "import sys, reducemean, reducemean.specs.onnx\n"
        "assert 'onnx' not in sys.modules, 'onnx imported'\n"
        "import reducemean.onnx_ops\n"
        "assert 'onnx' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
