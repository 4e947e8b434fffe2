"""The implementations compared: reducemean, numpy and the optional peers.

Each adapter turns (array, axes) into a zero-argument callable that does one
reduction and nothing else, so only that call is timed:

* ``reducemean`` - ``reducemean.mean`` (the numpy drop-in);
* ``numpy`` - ``numpy.mean``;
* ``torch`` - ``torch.mean`` on ``torch.from_numpy`` (no copy; bfloat16 by
  viewing the bits as ``torch.bfloat16``; integers with ``dtype=float64``,
  which is what ``numpy.mean`` computes, since ``torch.mean`` refuses
  integer tensors otherwise);
* ``onnxruntime`` - a one-node ReduceMean model (opset 18) built with
  ``onnx.helper``, run by an ``InferenceSession``: only ``run`` is timed;
* ``openvino`` - a one-node ReduceMean model built from the opset ops and
  compiled for the CPU: only ``infer`` is timed.

The optional ones are imported when first asked for; a missing package makes
the adapter unavailable with a note instead of failing the run.  A dtype a
peer cannot take raises :class:`Unsupported` and is shown as '-'.

onnxruntime and openvino take contiguous inputs only: for a view they are
given a contiguous copy made before timing, and the report marks those
figures (they read less memory than the view).
"""

from __future__ import annotations

import numpy as np

import reducemean

#: Report order.
ORDER = ("reducemean", "numpy", "torch", "onnxruntime", "openvino")


class Unsupported(Exception):
    """This peer cannot reduce this dtype (or layout)."""


class Prepared:
    """A ready-to-time call and how to read its result back as numpy."""

    def __init__(self, call, fetch=None, copied=False):
        self.call = call
        self._fetch = fetch or call
        self.copied = copied  #: the peer got a contiguous copy of a view

    def result(self):
        return np.asarray(self._fetch())


def _all_axes(x, axes):
    return tuple(range(x.ndim)) if axes is None else tuple(axes)


class ReduceMean:
    name = "reducemean"

    def load(self, threads):
        return None

    def prepare(self, x, axes):
        def call():
            return reducemean.mean(x, axis=axes)

        return Prepared(call)


class Numpy:
    name = "numpy"

    def load(self, threads):
        return None

    def prepare(self, x, axes):
        def call():
            return np.mean(x, axis=axes)

        return Prepared(call)


class Torch:
    name = "torch"

    def load(self, threads):
        import torch

        torch.set_num_threads(threads)
        self.torch = torch
        return None

    def prepare(self, x, axes):
        torch = self.torch
        try:
            if x.dtype.name == "bfloat16":
                t = torch.from_numpy(x.view(np.uint16)).view(torch.bfloat16)
            else:
                t = torch.from_numpy(x)
        except (TypeError, RuntimeError, ValueError) as e:
            raise Unsupported(str(e).splitlines()[0]) from None
        kw = {"dtype": torch.float64} if x.dtype.kind in "iu" else {}
        if axes is None:
            def call():
                return torch.mean(t, **kw)
        else:
            dims = tuple(axes)

            def call():
                return torch.mean(t, dim=dims, **kw)
        try:
            call()  # a dtype torch refuses is refused here, before any timing
        except (TypeError, RuntimeError) as e:
            raise Unsupported(str(e).splitlines()[0]) from None

        def fetch():
            r = call()
            if r.dtype == torch.bfloat16:  # numpy cannot take it: hand over the bits
                return r.view(torch.int16).numpy().view(x.dtype)
            return r.numpy()

        return Prepared(call, fetch)


def _contiguous(x):
    if x.flags.c_contiguous:
        return x, False
    return np.ascontiguousarray(x), True


class OnnxRuntime:
    name = "onnxruntime"

    def load(self, threads):
        import onnx  # noqa: F401  (the model is built with onnx.helper)
        import onnxruntime

        self.ort = onnxruntime
        self.threads = threads
        return None

    def _model(self, dtype, shape, axes):
        from onnx import TensorProto, helper

        elem = {
            "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
            "float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16,
            "int32": TensorProto.INT32, "int64": TensorProto.INT64,
        }.get(dtype.name)
        if elem is None:
            raise Unsupported(f"no ONNX element type for {dtype.name}")
        x = helper.make_tensor_value_info("x", elem, list(shape))
        y = helper.make_tensor_value_info("y", elem, None)
        axes_t = helper.make_tensor("axes", TensorProto.INT64, [len(axes)], list(axes))
        node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0)
        graph = helper.make_graph([node], "reduce_mean", [x], [y], initializer=[axes_t])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 9  # opset 18 needs IR 8+; 9 loads in older runtimes too
        return model.SerializeToString()

    def prepare(self, x, axes):
        ort = self.ort
        xc, copied = _contiguous(x)
        axes = _all_axes(x, axes)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.log_severity_level = 3  # the refusal is reported as '-', not as a log line
        try:
            sess = ort.InferenceSession(self._model(x.dtype, x.shape, axes), opts,
                                        providers=["CPUExecutionProvider"])
        except Exception as e:  # ORT raises its own exception types for missing kernels
            raise Unsupported(str(e).splitlines()[0]) from None
        if x.dtype.name == "bfloat16":
            from onnx import TensorProto

            feed = {"x": ort.OrtValue.ortvalue_from_numpy_with_onnx_type(
                xc.view(np.uint16), TensorProto.BFLOAT16)}
        else:
            feed = {"x": xc}

        def call():
            return sess.run(None, feed)

        def fetch():
            return call()[0]

        return Prepared(call, fetch, copied)


class OpenVino:
    name = "openvino"

    def load(self, threads):
        try:
            import openvino as ov
            from openvino import opset13 as ops

            ov.Core
        except (ImportError, AttributeError):  # releases before 2024: under openvino.runtime
            import openvino.runtime as ov
            from openvino.runtime import opset13 as ops
        self.ov = ov
        self.ops = ops
        self.core = ov.Core()
        # The CPU plugin may otherwise run float32 models in bfloat16 on CPUs that
        # have it: faster, but not the same answer as everyone else's.
        self.config = {
            "INFERENCE_NUM_THREADS": threads,
            "INFERENCE_PRECISION_HINT": "f32",
            "PERFORMANCE_HINT": "LATENCY",
        }
        return None

    def prepare(self, x, axes):
        ov, ops = self.ov, self.ops
        types = {
            "float32": ov.Type.f32, "float64": ov.Type.f64, "float16": ov.Type.f16,
            "bfloat16": ov.Type.bf16, "int32": ov.Type.i32, "int64": ov.Type.i64,
        }
        et = types.get(x.dtype.name)
        if et is None:
            raise Unsupported(f"no OpenVINO element type for {x.dtype.name}")
        xc, copied = _contiguous(x)
        axes = _all_axes(x, axes)
        try:
            param = ops.parameter(list(x.shape), et)
            node = ops.reduce_mean(param, ops.constant(np.array(axes, np.int64)), keep_dims=False)
            compiled = self.core.compile_model(ov.Model([node], [param]), "CPU", self.config)
            req = compiled.create_infer_request()
            if x.dtype.name == "bfloat16":
                tensor = ov.Tensor(xc.view(np.uint16), list(x.shape), ov.Type.bf16)
            else:
                tensor = ov.Tensor(xc, shared_memory=True)
            req.set_input_tensor(tensor)
        except Exception as e:  # OpenVINO raises RuntimeError subclasses of its own
            raise Unsupported(str(e).splitlines()[0]) from None

        def call():
            return req.infer(share_outputs=True)

        def fetch():
            call()
            out = req.get_output_tensor(0)
            data = np.array(out.data)
            if x.dtype.name == "bfloat16":  # numpy has no bfloat16: the bits come as float16
                data = data.view(np.uint16).view(x.dtype)
            return data

        call._keep = (xc, tensor, compiled)  # the request reads memory these own
        return Prepared(call, fetch, copied)


_ADAPTERS = {"reducemean": ReduceMean, "numpy": Numpy, "torch": Torch,
             "onnxruntime": OnnxRuntime, "openvino": OpenVino}
_PIP = {"torch": "torch", "onnxruntime": "onnxruntime onnx", "openvino": "openvino"}


def load(threads, names=ORDER):
    """The usable adapters, and a note for each optional peer that is missing.

    Returns ({name: adapter}, {name: note}).
    """
    usable, missing = {}, {}
    for name in names:
        adapter = _ADAPTERS[name]()
        try:
            adapter.load(threads)
        except ImportError as e:
            missing[name] = f"not installed ({e.name or e}); pip install {_PIP.get(name, name)}"
            continue
        except Exception as e:  # a broken install should not stop the others
            missing[name] = f"failed to load: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            continue
        usable[name] = adapter
    return usable, missing


def reference(x, axes):
    """The mean in float64 for checking results (numpy, float64 accumulator)."""
    return np.mean(x, axis=axes, dtype=np.float64)


#: Largest relative error tolerated, by result dtype: a couple of ulps of the
#: result (float64: far looser, since the float64 reference has its own error).
_TOL = {"float16": 2.0**-9, "bfloat16": 2.0**-6, "float32": 2.0**-21, "float64": 1e-12}


def error(result, ref):
    """(largest error, tolerance, ok) of ``result`` against the float64 ``ref``.

    Integer results are the truncated mean (ONNX and OpenVINO rules), so they
    are checked by absolute error below one; float results by relative error.
    """
    result = np.asarray(result)
    ref = np.asarray(ref, dtype=np.float64)
    if result.shape != ref.shape:
        return float("inf"), 0.0, False
    r = result.astype(np.float64)
    if result.dtype.kind in "iu":
        err = float(np.max(np.abs(r - ref), initial=0.0))
        return err, 1.0, err < 1.0
    diff = np.abs(r - ref) / np.maximum(np.abs(ref), np.finfo(np.float64).tiny)
    err = float(np.max(diff, initial=0.0))
    tol = _TOL.get(result.dtype.name, 1e-12)
    return err, tol, err <= tol
