"""Debug mode: bounds-checked subscripts and the fault record (docs/debugging.md).

A kernel made with ``debug=True`` (or under ``PORTAKERN_DEBUG=1``) is lowered with
every subscript of an array parameter checked (:func:`portakern.lower.subscripts.check_subscripts`),
and so are accesses through pointer views of them, ``*(p + i)``, and private arrays
(:mod:`portakern.lower.debug_views`),
and one hidden last parameter, :data:`~portakern.lower.subscripts.DEBUG_RECORD`: an int64 array
the launcher passes like any other array, laid out as

====================  ==========================================================
``[0]``               fault flag: 0, or 1 once a work-item faulted (its low 32
                      bits are set by a compare-and-swap, so only the first
                      fault is recorded)
``[1]`` .. ``[7]``    argument position (or ``-1 - (16 * k + d)`` for dimension
                      ``d`` of the ``k``-th ``@localmem`` array, ``ND_CODE - (16 * k
                      + d)`` for axis ``d`` of the N-d array argument ``k``), index, extent,
                      source line, and the work-item's global index per ndrange
                      axis (-1: none); ``HELPER_CODE + k`` for a subscript in a
                      helper function into argument ``k``
                      (:mod:`~portakern.lower.debug_helpers`)
``[8]`` .. ``[11]``   the spare slot a faulting access reads or writes instead
                      of memory outside its array (up to 32 bytes)
``[12]`` .. ``[15]``  for a race (:mod:`~portakern.lower.racecheck`): the other
                      access's line, its work-item's local linear index, whether
                      it wrote, whether the faulting access wrote
``[16 + k]``          the number of elements of argument ``k`` (arrays only)
====================  ==========================================================

After the launch the launcher reads the record back (:func:`check`), which waits
for the kernel, and raises :class:`~portakern.errors.KernelFaultError` for a fault.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import KernelFaultError

__all__ = ["ENV", "EXTENTS_AT", "enabled", "new_record", "check", "record_handle",
           "launch_checked", "rebuild_kernel"]

#: The environment variable that turns debug mode on for every kernel made after it is set.
ENV = "PORTAKERN_DEBUG"
#: Where the extents start in the record (after the fault fields and the spare slot).
EXTENTS_AT = 16

_TRUE = frozenset({"1", "true", "yes", "on"})


def enabled(debug: bool | None = None) -> bool:
    """``debug`` if given, else whether ``PORTAKERN_DEBUG`` is set to 1/true/yes/on."""
    if debug is not None:
        if not isinstance(debug, (bool, np.bool_)):
            from ..errors import KernelTypeError

            raise KernelTypeError(f"debug must be True or False, got {debug!r}")
        return bool(debug)
    return os.environ.get(ENV, "").strip().lower() in _TRUE


def new_record(params: list, shapes: dict[int, tuple[int, ...]]) -> np.ndarray:
    """A zeroed record for one launch; ``shapes`` gives each array argument's shape."""
    from ..syntax.vectors import VECTOR_TYPES

    record = np.zeros(EXTENTS_AT + len(params), np.int64)
    for k, shape in shapes.items():
        # A float4* array of shape (n, 4) holds n elements of the kernel's type.
        vt = VECTOR_TYPES.get(params[k].type)
        record[EXTENTS_AT + k] = math.prod(shape) // (vt.width if vt else 1)
    return record


def check(record: np.ndarray, kernel: str, params: list, ndim: int, filename: str,
          source: str, localmem: Sequence[str] = (), private: Sequence[str] = (),
          workgroup: tuple[int, ...] | None = None,
          helper_private: Sequence[tuple[str, str]] = (),
          helper_params: Sequence[tuple[str, str]] = ()) -> None:
    """Raise :class:`KernelFaultError` if ``record`` (read back after a launch) holds a fault.

    ``localmem`` names the kernel's ``@localmem`` arrays in order (a negative argument
    code ``-1 - (16 * k + d)`` stands for dimension ``d`` of the ``k``-th), then
    ``private`` its checked private arrays (``k`` counts on past the ``@localmem`` ones);
    ``workgroup`` is the launch's, per ndrange axis (a race names the other work-item by
    its local index in the record); ``helper_private`` the private arrays of the helper
    functions, ``(helper, array)`` (:func:`~portakern.lower.debug_helper_private.helper_privates`),
    ``helper_params`` their parameters declared as arrays of arrays, ``(helper, parameter)``
    (:func:`~portakern.lower.debug_helper_arrays.helper_array_params`).
    """
    if not int(record[0]):
        return
    argument, index, extent, line = (int(v) for v in record[1:5])
    item = tuple(int(v) for v in record[5:5 + ndim])
    if any(v < 0 for v in item):
        work_item: tuple[int, ...] | None = None
    else:
        work_item = item
    lines = source.split("\n")
    text = lines[line - 1] if 0 < line <= len(lines) else None
    from ..lower.debug_helper_arrays import PARAM_FIRST
    from ..lower.debug_helper_private import PRIVATE_FIRST  # here: only a fault reads them
    from ..lower.subscripts import ND_CODE

    if argument <= -1 - 16 * PARAM_FIRST and helper_params:  # a helper's b[][4] parameter
        j, dimension = divmod(-1 - argument - 16 * PARAM_FIRST, 16)
        fn, name = helper_params[j] if j < len(helper_params) else ("?", f"#{j}")
        raise _param_fault(kernel, fn, name, dimension, index, extent, work_item, filename,
                           line, text)
    if argument <= -1 - 16 * PRIVATE_FIRST and helper_private:  # a helper's private array
        j, dimension = divmod(-1 - argument - 16 * PRIVATE_FIRST, 16)
        fn, name = helper_private[j] if j < len(helper_private) else ("?", f"#{j}")
        from ..lower.debug_rows import FLAT_DIMENSION

        # A struct method's (lower.debug_methods): "Acc::add", its member arrays "this->bins".
        where = f" (in {'method' if '::' in fn else 'helper'} {fn!r})"
        kind = "member" if "." in name or "->" in name else "private"
        name = name.removeprefix("this->")
        if dimension == FLAT_DIMENSION:  # through a pointer into it, or passed whole
            raise _flat_fault(kernel, kind, name, index, extent, work_item, filename,
                              line, text, where)
        raise _private_fault(kernel, name, where, dimension, index, extent,
                             work_item, filename, line, text, kind)
    if argument <= ND_CODE:  # an axis of an N-d array parameter
        k, dimension = divmod(ND_CODE - argument, 16)
        name = params[k].name if k < len(params) else f"#{k}"
        raise KernelFaultError(kernel, name, k, index, extent, work_item, filename, line,
                               text, dimension)
    if argument < 0:
        k, dimension = divmod(-1 - argument, 16)
        from ..lower.debug_rows import FLAT_DIMENSION

        if dimension == FLAT_DIMENSION:  # through a pointer into a multi-dimensional array
            private_one = k >= len(localmem) and k - len(localmem) < len(private)
            name = (private[k - len(localmem)] if private_one
                    else localmem[k] if k < len(localmem) else f"@localmem #{k}")
            raise _flat_fault(kernel, "private" if private_one else "@localmem", name, index,
                              extent, work_item, filename, line, text)
        if k >= len(localmem) and k - len(localmem) < len(private):
            name = private[k - len(localmem)]  # "s.bins": a struct variable's member
            raise _private_fault(kernel, name, "", dimension, index, extent, work_item,
                                 filename, line, text,
                                 "member" if "." in name or "->" in name else "private")
        name = localmem[k] if k < len(localmem) else f"@localmem #{k}"
        from ..lower.initcheck import INITCHECK_DIMENSION
        from ..lower.racecheck import RACE_DIMENSION

        if dimension == RACE_DIMENSION:
            raise _race(record, kernel, name, index, extent, work_item, workgroup, filename,
                        line, lines)
        if dimension == INITCHECK_DIMENSION:
            item = (f"work-item {work_item}" if work_item is not None
                    else "the code that runs once per workgroup")
            message = (f"kernel {kernel!r}: read of element {index} of @localmem array "
                       f"{name!r} ({extent} elements) at {filename}:{line}, which no "
                       f"work-item of the group had written since the group started; "
                       f"{item} read it first. Write every element a work-item reads (a "
                       f"work-item outside the ndrange does not run, so the slots it would "
                       f"write stay unwritten), with @synchronize() between")
            if text is not None:
                message += f"\n    {line} | {text.strip()}"
            raise KernelFaultError(kernel, name, None, index, extent, work_item, filename,
                                   line, text, None, message=message)
        raise KernelFaultError(kernel, name, None, index, extent, work_item, filename, line,
                               text, dimension)
    from ..lower.debug_helpers import HELPER_CODE

    message = None
    if argument >= HELPER_CODE:  # a subscript in a helper function (lower.debug_helpers)
        argument -= HELPER_CODE
        name = params[argument].name if argument < len(params) else f"#{argument}"
        valid = f"valid indices 0 to {extent - 1}" if extent > 0 else "it is empty"
        item = (f"work-item {work_item}" if work_item is not None
                else "the code that runs once per workgroup")
        message = (f"kernel {kernel!r}: out-of-bounds subscript {name}[{index}] in a helper "
                   f"function at {filename}:{line}: argument {argument} {name!r} has {extent} "
                   f"element{'' if extent == 1 else 's'} ({valid}); {item} faulted first. The "
                   f"access went to element 0 of {name!r} instead")
        if text is not None:
            message += f"\n    {line} | {text.strip()}"
    name = params[argument].name if argument < len(params) else f"#{argument}"
    raise KernelFaultError(kernel, name, argument, index, extent, work_item, filename, line,
                           text, message=message)


def _flat_fault(kernel: str, kind: str, name: str, index: int, extent: int,
                work_item: tuple[int, ...] | None, filename: str, line: int,
                text: str | None, where: str = "") -> KernelFaultError:
    """The fault of an access through a pointer into a multi-dimensional array
    (:mod:`portakern.lower.debug_rows`): ``index`` and ``extent`` are flat, row-major."""
    valid = f"valid 0 to {extent - 1}" if extent > 0 else "it is empty"
    item = (f"work-item {work_item}" if work_item is not None
            else "the code that runs once per workgroup")
    message = (f"kernel {kernel!r}: out-of-bounds access through a pointer into {kind} array "
               f"{name!r}{where} at {filename}:{line}: flat element {index} (row-major) of its "
               f"{extent} ({valid}; a pointer into a row may range over the whole array); "
               f"{item} faulted first. The access went to element 0 of {name!r} instead "
               f"(no memory outside the arrays was touched)")
    if text is not None:
        message += f"\n    {line} | {text.strip()}"
    return KernelFaultError(kernel, name, None, index, extent, work_item, filename, line,
                            text, None, message=message)


def _param_fault(kernel: str, fn: str, name: str, dimension: int, index: int, extent: int,
                 work_item: tuple[int, ...] | None, filename: str, line: int,
                 text: str | None) -> KernelFaultError:
    """The fault of a subscript past an inner size of a helper's parameter declared as an
    array of arrays (``b[][4]``, :mod:`portakern.lower.debug_helper_arrays`)."""
    item = (f"work-item {work_item}" if work_item is not None
            else "the code that runs once per workgroup")
    message = (f"kernel {kernel!r}: out-of-bounds subscript {index} of dimension {dimension} "
               f"of parameter {name!r} of helper {fn!r} at {filename}:{line}: that dimension "
               f"has {extent} element{'' if extent == 1 else 's'} (valid indices 0 to "
               f"{extent - 1}); {item} faulted first. The access went to index 0 of that "
               f"dimension instead (no memory outside the arrays was touched)")
    if text is not None:
        message += f"\n    {line} | {text.strip()}"
    return KernelFaultError(kernel, name, None, index, extent, work_item, filename, line,
                            text, dimension, message=message)


def _race(record: np.ndarray, kernel: str, name: str, index: int, extent: int,
          work_item: tuple[int, ...] | None, workgroup: tuple[int, ...] | None,
          filename: str, line: int, lines: list[str]) -> KernelFaultError:
    """The fault for a race (:mod:`portakern.lower.racecheck`): the other access's line,
    work-item and kind are in the record's ``[12]`` .. ``[15]``."""
    other_line, other_lid, other_wrote, wrote = (int(v) for v in record[12:16])
    other: tuple[int, ...] | None = None
    if work_item is not None and workgroup:
        local = np.unravel_index(other_lid, workgroup)
        other = tuple(int(g) // w * w + int(o)
                      for g, w, o in zip(work_item, workgroup, local, strict=True))
    who = (f"work-item {other}" if other is not None
           else f"the work-item of local index {other_lid}")
    message = (f"kernel {kernel!r}: race on element {index} of @localmem array {name!r} "
               f"({extent} elements): {who} {'wrote' if other_wrote else 'read'} it at "
               f"{filename}:{other_line} and work-item {work_item} "
               f"{'wrote' if wrote else 'read'} it at {filename}:{line}, with no "
               f"@synchronize() between. Put a @synchronize() between the two accesses (every "
               f"work-item of the group must reach it), or use an @atomic_* operation")
    for n in (other_line, line):
        if 0 < n <= len(lines):
            message += f"\n    {n} | {lines[n - 1].strip()}"
    text = lines[line - 1] if 0 < line <= len(lines) else None
    err = KernelFaultError(kernel, name, None, index, extent, work_item, filename, line,
                           text, None, message=message)
    err.other_lineno, err.other_work_item = other_line, other
    return err


def record_handle(backend: Any, record: np.ndarray) -> tuple[Any, Any]:
    """The record on ``backend``: ``(array, launch handle)``."""
    array = backend.to_device(record)
    info = backend.array_info(array)
    return array, info.handle


def launch_checked(backend: Any, kernel: Any, kdef: Any, compiled: Any, launch_args: list,
                   infos: dict, plan: Any) -> None:
    """Launch with a fresh record as the hidden last argument, then :func:`check` it.

    ``infos`` holds the ``ArrayInfo`` of each array argument (the extents); ``plan``
    is the launcher's ``(compiled, global size, local size, ndrange sizes)``.
    """
    _, global_size, local_size, sizes = plan
    record = new_record(kdef.params, {k: info.shape for k, info in infos.items()})
    spare = []
    for k, info in infos.items():
        if k < len(launch_args) and 0 in info.shape:
            # An empty array: a faulting access in a helper goes to element 0 of the
            # array it points into, so that element is a spare one-element array's.
            try:
                cell = backend.zeros((1,), info.dtype)
            except (TypeError, ValueError):  # a dtype the backend makes no arrays of
                continue
            spare.append(cell)  # alive until the launch is checked
            launch_args[k] = backend.array_info(cell).handle
    array, handle = record_handle(backend, record)
    launch_args.append(handle)
    launch_args.extend(sizes)
    backend.launch(compiled, launch_args, global_size, local_size)
    from ..lower.debug_views import debug_targets
    from ..lower.subscripts import localmem_names

    template = kernel.template
    record = np.asarray(backend.to_host(array))
    private: list[str] = []
    in_helpers: list[tuple[str, str]] = []
    params: list[tuple[str, str]] = []
    if int(record[0]) and int(record[1]) < 0:
        from ..lower.debug_helper_arrays import helper_array_params
        from ..lower.debug_helpers import helper_private_arrays
        from ..lower.debug_methods import struct_scan
        from ..syntax.macros import expand_macros

        module = kernel.parsed(backend.target)[0]
        helpers = expand_macros(module.helpers)
        private = list(debug_targets(kdef, module, struct_scan(helpers).arrays)[1])
        in_helpers = [(f, n) for f, n, _ in helper_private_arrays(helpers)]
        params = helper_array_params(helpers)
    check(record, kdef.name, kdef.params, len(sizes), template.filename, template.source,
          localmem_names(kdef), private, tuple(local_size)[:len(sizes)][::-1], in_helpers,
          params)


def _private_fault(kernel: str, name: str, where: str, dimension: int, index: int,
                   extent: int, work_item: tuple[int, ...] | None, filename: str, line: int,
                   text: str | None, kind: str = "private") -> KernelFaultError:
    """The fault of an out-of-bounds subscript of a private array (``where``: in which
    helper or method, or empty; ``kind``: "member" for a struct's member array)."""
    valid = f"valid indices 0 to {extent - 1}" if extent > 0 else "it is empty"
    item = (f"work-item {work_item}" if work_item is not None
            else "the code that runs once per workgroup")
    message = (f"kernel {kernel!r}: out-of-bounds subscript {index} of {kind} array "
               f"{name!r}{where} (dimension {dimension}) at {filename}:{line}: that dimension "
               f"has {extent} element{'' if extent == 1 else 's'} ({valid}); {item} "
               f"faulted first. The access went to index 0 of that dimension instead "
               f"(no memory outside the arrays was touched)")
    if text is not None:
        message += f"\n    {line} | {text.strip()}"
    return KernelFaultError(kernel, name, None, index, extent, work_item, filename,
                            line, text, dimension, message=message)


def rebuild_kernel(kernel_class: type, source: str, name: str | None, filename: str,
                   constants: tuple) -> Any:
    """Unpickle a debug-mode kernel (``Kernel.__reduce__``): a new one, in debug mode."""
    import warnings

    from ..errors import PortabilityWarning

    with warnings.catch_warnings():
        # The sender was warned when it created the kernel.
        warnings.simplefilter("ignore", PortabilityWarning)
        return kernel_class(source, name, filename=filename, debug=True, **dict(constants))

