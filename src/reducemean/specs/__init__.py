"""Front-ends that enforce one operator specification each.

* :mod:`reducemean.specs.onnx` - ONNX ReduceMean, opsets 1, 11, 13 and 18.
* :mod:`reducemean.specs.openvino` - OpenVINO ReduceMean-1.
* :mod:`reducemean.specs.onednn` - oneDNN Graph ReduceMean.

Each translates its spec's names, defaults and rules, raising ``ValueError``
or ``TypeError`` with a message quoting the broken rule, then calls the core.
"""

from . import onednn, onnx, openvino

__all__ = ["onnx", "openvino", "onednn"]
