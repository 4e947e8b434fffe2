"""Names that moved between the numpy versions we support."""

import numpy as np

try:
    AxisError = np.exceptions.AxisError
except AttributeError:  # numpy < 1.25
    AxisError = np.AxisError

__all__ = ["AxisError"]
