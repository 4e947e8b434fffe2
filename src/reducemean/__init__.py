"""reducemean: the arithmetic mean over any set of axes, on Numba-JIT CPU kernels.

* :func:`mean` - a drop-in for ``numpy.mean`` (numpy's rules, more exact).
* :func:`reduce_mean` - the ReduceMean operator, ONNX opset 18 rules.
* :mod:`reducemean.specs` - ONNX (opsets 1, 11, 13, 18), OpenVINO ReduceMean-1
  and oneDNN Graph front-ends, each enforcing its own spec.

Nothing is compiled at import; each kernel is compiled (or loaded from
Numba's on-disk cache) the first time a dtype and loop shape meet.
"""

from .numpy_api import mean
from .operator_api import reduce_mean
from . import specs

__version__ = "0.1.0"
__all__ = ["mean", "reduce_mean", "specs", "__version__"]
