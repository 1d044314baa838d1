"""A stand-in for ``mlx.core.fast.metal_kernel`` that runs Metal kernels on the CPU.

MLX on Linux imports, and its ``metal_kernel`` raises "No Metal back-end" when
called. Installed in its place (see :func:`installed`), this module lets
``pk.Metal()`` run unchanged without a Mac: the kernel source MLX would compile
is compiled by clang in C++-for-OpenCL mode against ``include/metal_stdlib`` (an
executable stand-in for Apple's header: Metal's address spaces, barriers,
atomics and math) and run by the threaded runtime of :mod:`.build`, one OS
thread per Metal thread, threadgroups one at a time.

What is reproduced from MLX (``mlx/backend/common/metal_kernel.cpp`` and
``mlx/backend/metal/custom_kernel.cpp``, MLX 0.32), written here from MLX's
source and not shared with portakern's own marshalling, which it checks:

* the source MLX compiles: its ``utils.h`` (the parts kernels can name), the
  ``header``, then the signature it writes: inputs in order as ``const
  device T*``, or ``const constant T*`` under 8 elements, or ``const constant
  T&`` when 0-d, each followed by ``<name>_shape`` / ``_strides`` / ``_ndim``
  buffers when the body names them; outputs as ``device T*`` (``device
  atomic<T>*`` with ``atomic_outputs``); the thread attributes the body names,
  in MLX's order; the kernel name ``custom_kernel_<name>[_<template>]`` then
  ``_<type>[s|c]`` per input and ``_<type>`` per output;
* the launch: ``grid`` is in threads, the threadgroup is ``min(threadgroup,
  grid)`` per axis, and ``dispatchThreads`` makes the last threadgroup of an
  axis smaller where the grid is not a multiple: threads past the grid do not
  exist, and ``threads_per_threadgroup`` is the size of the thread's own
  threadgroup (``dispatch_threads_per_threadgroup`` the nominal one), as Apple
  documents; a threadgroup of more than 1024 threads is refused as MLX refuses
  it;
* memory: inputs are MLX's own buffers (a kernel that writes through a cast
  ``const`` pointer changes the input array, as on the GPU), copied first only
  when ``ensure_row_contiguous`` asks and the array is not row-contiguous;
  outputs start uninitialised (filled with 0xAB bytes here, so a missed write
  shows) unless ``init_value`` is given; threadgroup memory starts as 0xFF
  bytes in every threadgroup;
* errors: a source that does not compile raises ``RuntimeError("[metal::Device]
  Unable to build metal library from source\\n<clang's log>")``; a barrier
  that not every thread of a threadgroup reaches raises ``RuntimeError``.

SIMD-group functions (``simd_sum`` ...) are not provided (the runtime has no
SIMD-group barrier); the SIMD-group attributes are, for 32-wide SIMD-groups.
Launches run synchronously, one at a time, when the kernel is called.
"""

from __future__ import annotations

import contextlib
import ctypes
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..subprocesses import fork_safe_lock
from .build import INCLUDE, BuildError, EmulatedLibrary, Unit, build, compiler_for
from .mlx_source import (
    ATTRIBUTES,
    TYPE_STRINGS,
    UTILS,
    Input,
    buffer_params,
    dtype_name,
    kernel_name,
    shape_buffers,
    template_bindings,
    write_signature,
)

__all__ = [
    "ATTRIBUTES",
    "CustomKernel",
    "Input",
    "UTILS",
    "available",
    "installed",
    "kernel_name",
    "metal_kernel",
    "write_signature",
]

#: ``maxTotalThreadsPerThreadgroup`` of a pipeline on Apple GPUs.
MAX_THREADS_PER_THREADGROUP = 1024
#: Threads per SIMD-group (``threads_per_simdgroup``, ``thread_execution_width``).
SIMD_WIDTH = 32
#: Byte value outputs start with (MLX leaves them uninitialised).
OUTPUT_POISON = 0xAB

#: The value of each attribute in the thunk, from the runtime's ids (see _THUNK_HEAD).
#: Per thread: pk_local (position in its threadgroup), pk_group, pk_nominal (the
#: dispatched threadgroup size), pk_actual (its own threadgroup's size: smaller at the
#: far edge of a grid the threadgroup does not divide), pk_count (threads in it) and
#: pk_index, the thread's dense index in it, linearised over pk_actual (x fastest).
_ATTRIBUTE_VALUES = {
    "dispatch_quadgroups_per_threadgroup": "(pk_nominal_count + 3) / 4",
    "dispatch_simdgroups_per_threadgroup": f"(pk_nominal_count + {SIMD_WIDTH - 1}) / {SIMD_WIDTH}",
    "dispatch_threads_per_threadgroup": "pk_nominal",
    "grid_origin": "(uint3)(0u, 0u, 0u)",
    "grid_size": "pk_grid",
    "quadgroup_index_in_threadgroup": "pk_index / 4",
    "quadgroups_per_threadgroup": "(pk_count + 3) / 4",
    "simdgroup_index_in_threadgroup": f"pk_index / {SIMD_WIDTH}",
    "simdgroups_per_threadgroup": f"(pk_count + {SIMD_WIDTH - 1}) / {SIMD_WIDTH}",
    "thread_execution_width": f"{SIMD_WIDTH}u",
    "thread_index_in_quadgroup": "pk_index % 4",
    "thread_index_in_simdgroup": f"pk_index % {SIMD_WIDTH}",
    "thread_index_in_threadgroup": "pk_index",
    "thread_position_in_grid": "pk_group * pk_nominal + pk_local",
    "thread_position_in_threadgroup": "pk_local",
    "threadgroup_position_in_grid": "pk_group",
    "threadgroups_per_grid": "pk_groups",
    "threads_per_grid": "pk_grid",
    "threads_per_simdgroup": f"{SIMD_WIDTH}u",
    "threads_per_threadgroup": "pk_actual",
}

# The runtime calls pk_emu_body(args, ids): ids[0..2] thread position in threadgroup,
# [3..5] threadgroup position, [6..8] nominal threadgroup size, [9..11] threadgroups per
# grid, [12] threads that exist in this threadgroup. The last argv entry is the grid in
# threads (three uints).
_THUNK_HEAD = """
// ---- portakern Metal stand-in: the launch thunk ----
extern "C" __attribute__((visibility("hidden"))) float __gnu_h2f_ieee(ushort h) {
  uint s = ((uint)h & 0x8000u) << 16, e = ((uint)h >> 10) & 0x1fu, m = (uint)h & 0x3ffu;
  if (e == 0u) {
    float v = (float)m * 0x1p-24f;
    return s ? -v : v;
  }
  if (e == 31u) return as_type<float>(s | 0x7f800000u | (m << 13));
  return as_type<float>(s | ((e + 112u) << 23) | (m << 13));
}
extern "C" __attribute__((visibility("hidden"))) ushort __gnu_f2h_ieee(float f) {
  uint x = as_type<uint>(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (ushort)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return (ushort)(sign | 0x7c00u);
  if (ax < 0x38800000u) {
    if (ax <= 0x33000000u) return (ushort)sign;
    uint e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
    uint r = m >> shift, rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (r & 1u))) r += 1u;
    return (ushort)(sign | r);
  }
  uint r = ax - 0x38000000u, h = r >> 13, rem = r & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) h += 1u;
  return (ushort)(sign | h);
}
extern "C" void pk_emu_body(void** pk_args, const uint* pk_ids) {
  const uint* pk_g = (const uint*)pk_args[{grid_arg}];
  const uint3 pk_grid = (uint3)(pk_g[0], pk_g[1], pk_g[2]);
  const uint3 pk_local = (uint3)(pk_ids[0], pk_ids[1], pk_ids[2]);
  const uint3 pk_group = (uint3)(pk_ids[3], pk_ids[4], pk_ids[5]);
  const uint3 pk_nominal = (uint3)(pk_ids[6], pk_ids[7], pk_ids[8]);
  const uint3 pk_groups = (uint3)(pk_ids[9], pk_ids[10], pk_ids[11]);
  const uint3 pk_left = pk_grid - pk_group * pk_nominal;
  const uint3 pk_actual = (uint3)(pk_left.x < pk_nominal.x ? pk_left.x : pk_nominal.x,
                                  pk_left.y < pk_nominal.y ? pk_left.y : pk_nominal.y,
                                  pk_left.z < pk_nominal.z ? pk_left.z : pk_nominal.z);
  const uint pk_count = pk_ids[12];
  const uint pk_nominal_count = pk_nominal.x * pk_nominal.y * pk_nominal.z;
  const uint pk_index = pk_local.x + pk_actual.x * (pk_local.y + pk_actual.y * pk_local.z);
  (void)pk_groups; (void)pk_count; (void)pk_nominal_count; (void)pk_index;
"""

_LOCK = fork_safe_lock()



# -- compiling for the CPU ----------------------------------------------------------------------

# Attributes of kernels and their arguments that clang does not know; [[kernel]] becomes
# OpenCL's __kernel (threadgroup variables are legal only there).
_KNOWN_ATTRIBUTES = frozenset(
    [a for a, _ in ATTRIBUTES]
    + ["kernel", "buffer", "threadgroup", "texture", "sampler", "host_name",
       "max_total_threads_per_threadgroup", "function_constant", "stage_in", "visible"])
_ATTRIBUTE_GROUP = re.compile(r"\[\[([^\[\]]*)\]\]")
_ATTRIBUTE_ITEM = re.compile(r"^\s*(?:metal::)?([A-Za-z_]\w*)\s*(\(.*\))?\s*$", re.DOTALL)


def _lower_attributes(text: str) -> str:
    """Blank out Metal attributes (keeping every line and column); [[kernel]] -> __kernel."""

    def replace(match: re.Match[str]) -> str:
        names = []
        for item in match.group(1).split(","):
            m = _ATTRIBUTE_ITEM.match(item)
            if m is None or m.group(1) not in _KNOWN_ATTRIBUTES:
                # Not a list of known attributes (or a comma inside parentheses):
                # leave it to clang.
                return match.group(0)
            names.append(m.group(1))
        group = match.group(0)
        keep = "__kernel" if "kernel" in names else ""
        return keep + "".join(c if c in "\r\n" else " " for c in group[len(keep):])

    return _ATTRIBUTE_GROUP.sub(replace, text)


def _find_clang() -> tuple[str | None, str]:
    for name in ["clang", *(f"clang-{v}" for v in range(25, 13, -1))]:
        path = shutil.which(name)
        if path is None:
            continue
        try:
            done = subprocess.run([path, "--version"], capture_output=True, text=True,
                                  timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        m = re.search(r"clang version (\d+)", done.stdout)
        if m and int(m.group(1)) >= 14:
            return path, ""
    return None, ("the Metal stand-in needs clang >= 14 (C++ for OpenCL 2021); "
                  "apt-get install clang")


_CLANG: list[tuple[str | None, str]] = []


def _clang() -> tuple[str | None, str]:
    if not _CLANG:
        _CLANG.append(_find_clang())
    return _CLANG[0]


def available() -> tuple[bool, str]:
    """Whether the stand-in can run kernels here: ``(True, "")`` or ``(False, why)``."""
    if not sys.platform.startswith("linux"):
        return False, "the Metal stand-in runs on Linux only (ELF shared-memory sections)"
    clang, why = _clang()
    if clang is None:
        return False, why
    if compiler_for("g++") is None and compiler_for("c++") is None:
        return False, "the Metal stand-in needs g++ for its runtime (apt-get install g++)"
    if shutil.which("objcopy") is None:
        return False, "the Metal stand-in needs objcopy (apt-get install binutils)"
    return True, ""


def _flags() -> tuple[str, ...]:
    machine = platform.machine() or "x86_64"
    return ("-x", "clcpp", "-cl-std=clc++2021", "-cl-no-stdinc",
            # Metal has half and no double: unsuffixed literals are float, `double` is
            # an error.
            "-Xclang", "-cl-ext=+cl_khr_fp16,-cl_khr_fp64,-__opencl_c_fp64",
            f"--target={machine}-unknown-linux-gnu", "-O1", "-w", "-fno-color-diagnostics",
            "-isystem", str(INCLUDE))


def _clean_log(log: str) -> str:
    # The unit is compiled in a temporary folder; name it as Apple's compiler does.
    return re.sub(r"[^\s:]*portakern-emu-[^/\s]*/", "", log)


# -- the kernel ---------------------------------------------------------------------------------

def _mx() -> Any:
    import mlx.core as mx

    return mx


def _grid3(value: Any, what: str) -> tuple[int, int, int]:
    dims = tuple(int(v) for v in value)
    if len(dims) != 3:
        raise TypeError(f"[metal_kernel] `{what}` must be a tuple of 3 ints, got {value!r}")
    return dims  # type: ignore[return-value]


class CustomKernel:
    """What :func:`metal_kernel` returns: call it as MLX's kernel object is called."""

    def __init__(self, name: str, input_names: Sequence[str], output_names: Sequence[str],
                 source: str, header: str, ensure_row_contiguous: bool,
                 atomic_outputs: bool) -> None:
        self.name = name
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.source = source
        self.header = header
        self.ensure_row_contiguous = ensure_row_contiguous
        self.atomic_outputs = atomic_outputs
        self._libraries: dict[str, EmulatedLibrary] = {}

    def __call__(self, *, inputs: Sequence[Any], output_shapes: Sequence[Sequence[int]],
                 output_dtypes: Sequence[Any], grid: Sequence[int],
                 threadgroup: Sequence[int], template: Sequence[tuple[str, Any]] | None = None,
                 init_value: float | None = None, verbose: bool = False,
                 stream: Any = None) -> list:
        mx = _mx()
        for actual, expected, what in ((len(inputs), len(self.input_names), "inputs"),
                                       (len(output_shapes), len(self.output_names),
                                        "output_shapes"),
                                       (len(output_dtypes), len(self.output_names),
                                        "output_dtypes")):
            if actual != expected:
                raise ValueError(f"[metal_kernel] Expected `{what}` to have size {expected} "
                                 f"but got size {actual}.")
        _check_stream(mx, stream)
        grid3, group3 = _grid3(grid, "grid"), _grid3(threadgroup, "threadgroup")
        arrays = [a if isinstance(a, mx.array) else mx.array(a) for a in inputs]
        specs = [Input(TYPE_STRINGS[dtype_name(a.dtype)], a.ndim, a.size) for a in arrays]
        output_types = [TYPE_STRINGS[dtype_name(dt)] for dt in output_dtypes]
        template = list(template or ())
        func = kernel_name(self.name, specs, output_types, template)
        body = write_signature(func, self.header, self.source, self.input_names, specs,
                               self.output_names, output_types, template,
                               self.atomic_outputs)
        if verbose:
            print(f"Generated source code for `{self.name}`:\n```\n{body}\n```")
        shape_infos = shape_buffers(self.input_names, self.source)
        params = buffer_params(specs, shape_infos, output_types, self.atomic_outputs)
        compiled = body
        if template:
            # C++ for OpenCL has no kernel templates: bind the template parameters at
            # the same place instead (types as typedefs, values as enumerators).
            compiled = write_signature(func, self.header + template_bindings(template),
                                       self.source, self.input_names, specs,
                                       self.output_names, output_types, (),
                                       self.atomic_outputs)
        library = self._library(func, compiled, params)

        # Memory: MLX's buffers for the inputs, fresh ones for the outputs.
        keep: list[Any] = []
        argv: list[Any] = []
        realigned: list[tuple[np.ndarray, np.ndarray]] = []
        for a, (shape, strides, ndim) in zip(arrays, shape_infos, strict=True):
            host = _input_buffer(a, self.ensure_row_contiguous)
            if host.ctypes.data % 16 and host.size:
                # MLX's CPU allocator aligns to 8 bytes, Metal's buffers to a page: a
                # float4 view of a buffer (portakern's vector arrays) needs 16. Run on an
                # aligned copy, and copy back what the kernel wrote through a cast.
                aligned = np.empty_like(host)
                np.copyto(aligned, host)
                realigned.append((host, aligned))
                host = aligned
            keep.append(host)
            argv.append(ctypes.c_void_p(_address(host, keep)))
            if a.ndim > 0:
                extra = []
                if shape:
                    extra.append(np.array(host.shape, np.int32))
                if strides:
                    extra.append(np.array([s // host.itemsize for s in host.strides], np.int64))
                if ndim:
                    extra.append(np.array([host.ndim], np.int32))
                for buf in extra:
                    keep.append(buf)
                    argv.append(ctypes.c_void_p(_address(buf, keep)))
        outputs = []
        for shape, dtype in zip(output_shapes, output_dtypes, strict=True):
            out = _output_buffer(tuple(int(s) for s in shape), dtype, init_value)
            outputs.append(out)
            argv.append(ctypes.c_void_p(_address(out, keep)))

        # MLX's checks and dispatch: the requested threadgroup against the pipeline's
        # limit, then dispatchThreads(grid, min(threadgroup, grid)).
        total = group3[0] * group3[1] * group3[2]
        if total > MAX_THREADS_PER_THREADGROUP:
            raise ValueError(f"Thread group size ({total}) is greater than  the maximum "
                             f"allowed threads per threadgroup "
                             f"({MAX_THREADS_PER_THREADGROUP}).")
        dims = tuple(min(t, g) for t, g in zip(group3, grid3, strict=True))
        if 0 not in grid3 and 0 not in dims:
            groups = tuple(-(-g // t) for g, t in zip(grid3, dims, strict=True))
            uniform = all(g % t == 0 for g, t in zip(grid3, dims, strict=True))
            argv.append((ctypes.c_uint * 3)(*grid3))
            with _LOCK:
                library.launch(groups, dims, argv, func,  # type: ignore[arg-type]
                               limit=None if uniform else grid3)
        for original, aligned in realigned:
            if original.flags.writeable:
                np.copyto(original, aligned)
        return [mx.array(out, dtype=dt) for out, dt in zip(outputs, output_dtypes, strict=True)]

    def _library(self, func: str, body: str, params: list[str]) -> Any:
        hit = self._libraries.get(body)
        if hit is not None:
            return hit
        clang, why = _clang()
        if clang is None:
            raise RuntimeError(f"[metal_kernel stand-in] {why}")
        attributes = [a for a, _ in ATTRIBUTES if a in self.source]
        text = _lower_attributes(UTILS + body) + _thunk(func, params, attributes)
        unit = Unit(text, "program_source", clang, _flags(), rename_bss=True)
        try:
            library = build((unit,))
        except BuildError as exc:
            if "compiling program_source" in str(exc):
                raise RuntimeError("[metal::Device] Unable to build metal library from "
                                   "source\n" + _clean_log(exc.log)) from None
            raise RuntimeError(f"[metal_kernel stand-in] {exc}") from None
        except OSError as exc:  # the shared object did not load (an undefined symbol)
            raise RuntimeError("[metal::Device] Unable to build metal library from "
                               f"source\n{exc}") from None
        self._libraries[body] = library
        return library


def _thunk(call: str, params: Sequence[str], attributes: Sequence[str]) -> str:
    """``pk_emu_body``: unpack the argv into the kernel's parameters and attributes."""
    values = []
    for index, decl in enumerate(params):
        address = f"(uintptr_t)*(const uintptr_t*)pk_args[{index}]"
        if decl.endswith("&"):
            values.append(f"*({decl[:-1]}*){address}")
        else:
            values.append(f"({decl}){address}")
    values += [_ATTRIBUTE_VALUES[a] for a in attributes]
    head = _THUNK_HEAD.replace("{grid_arg}", str(len(params)))
    return head + f"  {call}(\n    " + ",\n    ".join(values) + ");\n}\n"


def _check_stream(mx: Any, stream: Any) -> None:
    if stream is None:
        return
    device = getattr(stream, "device", stream)
    kind = getattr(device, "type", device)
    if kind != mx.gpu:
        raise ValueError("[metal_kernel] Only supports the GPU.")


def _input_buffer(a: Any, ensure_row_contiguous: bool) -> np.ndarray:
    if dtype_name(a.dtype) == "bfloat16":
        raise RuntimeError(f"[metal_kernel stand-in] inputs of dtype {a.dtype} are not "
                           f"supported")
    host = np.asarray(a)  # MLX's own memory (evaluates a lazy array)
    if ensure_row_contiguous and not host.flags.c_contiguous:
        host = np.ascontiguousarray(host)  # MLX copies such an input, too
    return host


def _output_buffer(shape: tuple[int, ...], dtype: Any, init_value: float | None) -> np.ndarray:
    name = dtype_name(dtype)
    if name == "bfloat16":
        raise RuntimeError(f"[metal_kernel stand-in] outputs of dtype {dtype} are not "
                           f"supported")
    dt = np.dtype(np.bool_ if name == "bool" else name)
    if init_value is None:
        out = np.empty(shape, dt)
        out.view(np.uint8).reshape(-1)[:] = OUTPUT_POISON
    else:
        out = np.full(shape, np.float32(init_value)).astype(dt)
    return out


def _address(a: np.ndarray, keep: list) -> int:
    if a.size == 0:
        # A buffer of no elements: any valid address (the kernel must not touch it).
        pad = np.zeros(16, np.uint8)
        keep.append(pad)
        return int(pad.ctypes.data)
    return int(a.ctypes.data)


def metal_kernel(name: str, input_names: Sequence[str], output_names: Sequence[str],
                 source: str, header: str = "", ensure_row_contiguous: bool = True,
                 atomic_outputs: bool = False, compile_options: Any = None) -> CustomKernel:
    """Stands in for ``mx.fast.metal_kernel`` (same arguments); see the module docstring."""
    if not output_names:
        raise ValueError("[metal_kernel] Must specify at least one output.")
    return CustomKernel(name, input_names, output_names, source, header,
                        ensure_row_contiguous, atomic_outputs)


# -- installing it --------------------------------------------------------------------------------

@contextlib.contextmanager
def installed() -> Iterator[Any]:
    """Run ``pk.Metal()`` on the stand-in for the duration.

    Sets ``mlx.core.fast.metal_kernel`` to :func:`metal_kernel` and makes
    :meth:`portakern.Metal.available` true (forgetting any remembered answer before
    and after); yields ``mlx.core``.
    """
    from ..backends import base
    from ..backends.metal import Metal

    mx = _mx()
    saved_kernel = mx.fast.metal_kernel
    saved_available = Metal.__dict__["available"]
    mx.fast.metal_kernel = metal_kernel
    claim = classmethod(lambda cls: base.Availability(True))
    Metal.available = claim  # type: ignore[method-assign]
    _forget(Metal)
    try:
        yield mx
    finally:
        mx.fast.metal_kernel = saved_kernel
        Metal.available = saved_available  # type: ignore[method-assign]
        _forget(Metal)


def _forget(cls: type) -> None:
    from ..backends.base import forget_availability

    forget_availability(cls)
