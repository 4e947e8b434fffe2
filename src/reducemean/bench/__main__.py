"""``python -m reducemean.bench``: see :mod:`reducemean.bench.cli`."""

import sys

from .cli import main

sys.exit(main())
