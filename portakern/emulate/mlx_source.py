"""The kernel source MLX writes for ``mx.fast.metal_kernel``, reproduced for the Metal
stand-in (:mod:`portakern.emulate.mlx`, which re-exports these names).

From MLX's ``write_signature`` and ``metal_kernel.cpp`` (MLX 0.32), written here from
MLX's source: the signature (inputs, their shape/stride/rank buffers when the body
names them, outputs, the thread attributes the body names), the template parameter
list and instantiation, and the kernel's function name. Portakern's own marshalling
(:mod:`portakern.backends._mlx`) is checked against this, never shared with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ATTRIBUTES", "Input", "MAX_CONSTANT_ARRAY_SIZE", "TYPE_STRINGS", "UTILS",
           "buffer_params", "kernel_name", "write_signature"]

#: MLX places inputs with fewer elements in the constant address space.
MAX_CONSTANT_ARRAY_SIZE = 8

#: MLX's ``get_type_string``: the Metal type of each MLX dtype, by dtype name.
TYPE_STRINGS = {
    "float32": "float", "float16": "float16_t", "bfloat16": "bfloat16_t",
    "float64": "double", "complex64": "complex64_t", "bool": "bool", "int8": "int8_t",
    "int16": "int16_t", "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t",
    "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
}

#: The thread attributes MLX declares when the body names them, in MLX's order.
ATTRIBUTES = (
    ("dispatch_quadgroups_per_threadgroup", "uint"),
    ("dispatch_simdgroups_per_threadgroup", "uint"),
    ("dispatch_threads_per_threadgroup", "uint3"),
    ("grid_origin", "uint3"),
    ("grid_size", "uint3"),
    ("quadgroup_index_in_threadgroup", "uint"),
    ("quadgroups_per_threadgroup", "uint"),
    ("simdgroup_index_in_threadgroup", "uint"),
    ("simdgroups_per_threadgroup", "uint"),
    ("thread_execution_width", "uint"),
    ("thread_index_in_quadgroup", "uint"),
    ("thread_index_in_simdgroup", "uint"),
    ("thread_index_in_threadgroup", "uint"),
    ("thread_position_in_grid", "uint3"),
    ("thread_position_in_threadgroup", "uint3"),
    ("threadgroup_position_in_grid", "uint3"),
    ("threadgroups_per_grid", "uint3"),
    ("threads_per_grid", "uint3"),
    ("threads_per_simdgroup", "uint"),
    ("threads_per_threadgroup", "uint3"),
)

#: What MLX puts before every kernel (``metal::utils()``, i.e. its ``utils.h``): the
#: parts a custom kernel can name without including anything (bfloat16 is left out; a
#: kernel using it fails to compile here). ``complex64_t`` is reduced to its layout, two
#: floats (MLX's has operators too).
UTILS = ("#include <metal_stdlib>\nusing namespace metal;\ntypedef half float16_t;\n"
         "struct complex64_t { float real; float imag; };\n")


@dataclass(frozen=True)
class Input:
    """What the signature needs of one input: its type string, rank and size."""

    type_string: str
    ndim: int
    size: int


def template_def(template: Sequence[tuple[str, Any]]) -> str:
    """The template argument list, ``<...>``, as MLX writes it."""
    # MLX's write_template: ints and bools as numbers, dtypes as type strings.
    parts = []
    for _, value in template:
        if isinstance(value, bool):
            parts.append(str(int(value)))
        elif isinstance(value, int):
            parts.append(str(value))
        else:
            parts.append(TYPE_STRINGS[dtype_name(value)])
    return "<" + ", ".join(parts) + ">"


def template_hash(template_def: str) -> str:
    """The template argument list as it appears in the kernel's name."""
    # MLX's make_template_hash: '<' and '>' become '_', ", " becomes '_', and the
    # last character is dropped.
    out, i = [], 0
    while i < len(template_def):
        c = template_def[i]
        if c in "<>":
            out.append("_")
        elif c == "," and i + 1 < len(template_def) and template_def[i + 1] == " ":
            out.append("_")
            i += 1
        else:
            out.append(c)
        i += 1
    return "".join(out)[:-1]


def template_bindings(template: Sequence[tuple[str, Any]]) -> str:
    """The template arguments as plain declarations (an enum or typedef each)."""
    lines = []
    for name, value in template:
        if isinstance(value, bool):
            lines.append(f"enum : bool {{ {name} = {str(value).lower()} }};")
        elif isinstance(value, int):
            lines.append(f"enum : int {{ {name} = {value} }};")
        else:
            lines.append(f"typedef {TYPE_STRINGS[dtype_name(value)]} {name};")
    return "\n" + "\n".join(lines) + "\n"


def kernel_name(name: str, inputs: Sequence[Input], output_types: Sequence[str],
                template: Sequence[tuple[str, Any]] = ()) -> str:
    """The kernel's function name, as MLX builds it."""
    out = "custom_kernel_" + name
    if template:
        out += "_" + template_hash(template_def(template))
    for arg in inputs:
        out += "_" + arg.type_string
        if arg.ndim == 0:
            out += "s"
        elif arg.size < MAX_CONSTANT_ARRAY_SIZE:
            out += "c"
    for type_string in output_types:
        out += "_" + type_string
    return out


def attributes_named(source: str) -> list[str]:
    """The declarations of the thread attributes ``source`` names, in MLX's order."""
    return [f"  {t} {a} [[{a}]]" for a, t in ATTRIBUTES if a in source]


def shape_buffers(input_names: Sequence[str], source: str) -> list[tuple[bool, bool, bool]]:
    """Per input, whether the body names its ``_shape``, ``_strides`` and ``_ndim``."""
    return [(f"{n}_shape" in source, f"{n}_strides" in source, f"{n}_ndim" in source)
            for n in input_names]


def write_signature(func_name: str, header: str, source: str,
                    input_names: Sequence[str], inputs: Sequence[Input],
                    output_names: Sequence[str], output_types: Sequence[str],
                    template: Sequence[tuple[str, Any]] = (),
                    atomic_outputs: bool = False) -> str:
    """The kernel source MLX writes (without its utils.h), as ``write_signature`` does.

    ``template`` adds MLX's template parameter list and explicit instantiation.
    """
    attributes = attributes_named(source)
    shape_infos = shape_buffers(input_names, source)
    out = [header]
    if template:
        kinds = ["bool" if isinstance(v, bool) else "int" if isinstance(v, int)
                 else "typename" for _, v in template]
        out.append("template <" + ", ".join(f"{k} {n}" for k, (n, _) in
                                             zip(kinds, template, strict=True)) + ">\n")
    out += ["[[kernel]] void ", func_name, "(\n"]
    index = 0
    for name, arg, (shape, strides, ndim) in zip(input_names, inputs, shape_infos,
                                                 strict=True):
        location = "constant" if arg.size < MAX_CONSTANT_ARRAY_SIZE else "device"
        ref = "&" if arg.ndim == 0 else "*"
        out.append(f"  const {location} {arg.type_string}{ref} {name} [[buffer({index})]],\n")
        index += 1
        if arg.ndim > 0:
            if shape:
                out.append(f"  const constant int* {name}_shape [[buffer({index})]],\n")
                index += 1
            if strides:
                out.append(f"  const constant int64_t* {name}_strides [[buffer({index})]],\n")
                index += 1
            if ndim:
                out.append(f"  const constant int& {name}_ndim [[buffer({index})]],\n")
                index += 1
    for name, type_string in zip(output_names, output_types, strict=True):
        element = f"atomic<{type_string}>" if atomic_outputs else type_string
        out.append(f"  device {element}* {name} [[buffer({index})]]")
        # MLX's own test (which counts only inputs and outputs, not shape buffers).
        if index < len(inputs) + len(output_names) - 1 or attributes:
            out.append(",\n")
        else:
            out.append(") {\n")
        index += 1
    for k, attribute in enumerate(attributes):
        out.append(attribute + (",\n" if k < len(attributes) - 1 else ") {\n"))
    out += [source, "\n}\n"]
    text = "".join(out)
    if template:
        instance = func_name + template_def(template)
        text += (f'\ntemplate [[host_name("{func_name}")]] [[kernel]] decltype({instance}) '
                 f"{instance};\n")
    return text


def dtype_name(dtype: Any) -> str:
    """An MLX (or NumPy) dtype's short name, the key of :data:`TYPE_STRINGS`."""
    return str(dtype).rsplit(".", 1)[-1].replace("bool_", "bool")


def buffer_params(inputs: Sequence[Input], shape_infos: Sequence[tuple[bool, bool, bool]],
                  output_types: Sequence[str], atomic_outputs: bool) -> list[str]:
    """The type of each buffer parameter, in buffer order (as write_signature declares)."""
    out = []
    for arg, (shape, strides, ndim) in zip(inputs, shape_infos, strict=True):
        location = "constant" if arg.size < MAX_CONSTANT_ARRAY_SIZE else "device"
        out.append(f"const {location} {arg.type_string}{'&' if arg.ndim == 0 else '*'}")
        if arg.ndim > 0:
            out += [d for d, on in (("const constant int*", shape),
                                    ("const constant int64_t*", strides),
                                    ("const constant int&", ndim)) if on]
    for type_string in output_types:
        out.append(f"device {f'atomic<{type_string}>' if atomic_outputs else type_string}*")
    return out
