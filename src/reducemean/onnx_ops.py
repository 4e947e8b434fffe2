"""ReduceMean for ONNX's reference evaluator, computed by reducemean's kernels.

Usage::

    from onnx.reference import ReferenceEvaluator
    from reducemean.onnx_ops import ReduceMean

    sess = ReferenceEvaluator(model, new_ops=[ReduceMean])
    sess.run(None, {"X": x})

Every ``ReduceMean`` node of the default domain in ``model``, including
those in subgraphs (``If``, ``Loop``, ``Scan``), then runs on
:func:`reducemean.specs.onnx.reduce_mean`.  The evaluator builds a model's
local functions without ``new_ops``; to run their ReduceMean nodes here
too, inline them first::

    model = onnx.inliner.inline_local_functions(model)

Rules:

* The evaluator matches ``new_ops`` by class name and domain only, and hands
  one class every version of the operator, so :class:`ReduceMean` reads the
  model's opset for the node's domain when it is built and applies the
  ReduceMean version that opset selects: 1 (opsets 1-10), 11 (11-12),
  13 (13-17) or 18 (18 and later).
* Below version 18, ``axes`` is an attribute; from 18 it is the optional
  second input (a 1-D int64 tensor), and ``noop_with_empty_axes`` exists.
  A node carrying an attribute or an input its version does not define is
  refused with ``ValueError`` when the evaluator is built.
* Types, axis ranges and flags follow that version's spec (see
  :mod:`reducemean.specs.onnx`): ``TypeError`` for a type outside the
  version's T, ``ValueError`` for negative axes before version 11, axes out
  of range or repeated.  The evaluator re-raises a ``TypeError`` wrapped in
  its own ``TypeError``.
* Results have the input's dtype: floats within 1 ulp of the exact mean,
  integers the exact mean truncated toward zero.

Importing this module imports ``onnx`` (the ``onnx`` extra); importing
:mod:`reducemean` does not.
"""

from __future__ import annotations

import numpy as np

try:
    import onnx
    from onnx.reference.op_run import OpRun
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "reducemean.onnx_ops needs onnx: install the 'onnx' extra "
        "(pip install 'reducemean[onnx]')"
    ) from exc

from .specs import onnx as _spec

__all__ = ["ReduceMean"]


class ReduceMean(OpRun):
    """The ONNX ReduceMean node (opsets 1, 11, 13 and 18) on reducemean's kernels.

    ``opset`` is the model's opset for the node's domain and ``version`` the
    ReduceMean version it selects; both are set when the evaluator builds
    the node.
    """

    op_domain = ""

    def __init__(self, onnx_node, run_params, schema=None):
        opsets = run_params.get("opsets") or {}
        opset = opsets.get(onnx_node.domain)
        if opset is None:
            opset = onnx.defs.onnx_opset_version()
        self.opset = int(opset)
        self.version = _spec.version_for(self.opset)
        if schema is None:
            # The schema in force at this opset supplies the defaults the
            # evaluator fills in (axes only below 18, noop_with_empty_axes from 18).
            schema = onnx.defs.get_schema("ReduceMean", self.opset, "")
        where = f"ReduceMean-{self.version} (opset {self.opset})"
        extra = sorted({a.name for a in onnx_node.attribute} - set(schema.attributes))
        if extra:
            raise ValueError(
                f"{where} has no attribute {', '.join(extra)}; "
                f"its attributes are {', '.join(sorted(schema.attributes))}"
            )
        if len(onnx_node.input) > len(schema.inputs):
            raise ValueError(
                f"{where} takes at most {len(schema.inputs)} input(s), "
                f"the node has {len(onnx_node.input)}"
            )
        super().__init__(onnx_node, run_params, schema=schema)

    def _run(self, data, axes=None, keepdims=None, noop_with_empty_axes=None):
        # ``axes`` arrives positionally (version 18's input) or as a keyword
        # (the attribute of versions 1 to 13); the schema check in __init__
        # guarantees it never arrives both ways.
        res = _spec.reduce_mean(
            data,
            axes,
            keepdims=1 if keepdims is None else keepdims,
            noop_with_empty_axes=0 if noop_with_empty_axes is None else noop_with_empty_axes,
            opset=self.opset,
        )
        return (np.asarray(res),)
