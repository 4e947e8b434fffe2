"""The throughput suite of reducemean: ``python -m reducemean.bench --help``.

Modules: :mod:`.cli` (the command line), :mod:`.cases` (what is reduced), :mod:`.peers` (numpy, torch,
onnxruntime and openvino adapters), :mod:`.ceiling` (the machine's read
bandwidth), :mod:`.timing`, :mod:`.report`, :mod:`.sweep` (against
numpy.mean on every dtype), :mod:`.coldstart` (first-call time),
:mod:`.scaling` (1 thread to all) and :mod:`.threshold` (where parallel
kernels start paying).  Nothing here is imported by ``reducemean``
itself.
"""
