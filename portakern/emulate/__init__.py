"""GPU stand-ins: run the CUDA and Metal renderings on the CPU, through portakern's own
launchers, so that CI executes them without a GPU or a Mac (docs/emulation.md).

* :mod:`portakern.emulate.cupy` stands in for CuPy (``pk.CUDA``): its arrays and
  kernels, with the devices, streams and memory in :mod:`portakern.emulate.cupy_device`;
* :mod:`portakern.emulate.mlx` stands in for ``mx.fast.metal_kernel`` (``pk.Metal``):
  compiling and launching, with the source MLX writes in :mod:`portakern.emulate.mlx_source`;
* :mod:`portakern.emulate.build` compiles a rendering against the device-API headers
  in ``include/`` and the threaded runtime that schedules blocks, barriers and
  shared memory as a GPU does.

Nothing here is imported by ``import portakern``.
"""
