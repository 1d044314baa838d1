"""The fixed-size arrays a lowered kernel declares: a fact the CPU backends size stacks by.

A kernel's ``@localmem`` arrays (native path: once per group, on the thread's stack),
its ``@private`` and other fixed-size arrays (per work-item; in a barrier kernel lowered
for the native path, one per item of the group: ``pk_priv_<name>[pk_items]``) live on the
stack of the thread that runs the group. Larger than that stack, they overflow it. Their
sizes are compile-time constants, found here from the lowered parts (the user's tokens,
the lowering's own text and its ``localmem`` calls), the ``#define``s and ``typedef``s
of the module and the type bindings, before anything is rendered. The result travels
beside the rendered source (:attr:`portakern.render.emit.RenderedKernel.meta`), so no
backend reads the generated code back (DESIGN section 7).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from ..syntax.parts import Call, Gen
from ..syntax.tokens import Token

__all__ = ["ArrayFact", "declared_arrays", "sized_local"]

#: ``(name, bytes, per work-item, @localmem)``: plain data, as the disk cache keeps it.
ArrayFact = tuple[str, int, bool, bool]

_C_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "uchar": 1, "bool": 1,
    "short": 2, "unsigned short": 2, "ushort": 2, "half": 2, "_Float16": 2,
    "int": 4, "unsigned int": 4, "unsigned": 4, "uint": 4, "float": 4,
    "long long": 8, "unsigned long long": 8, "long": 8, "ulong": 8, "double": 8,
    "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
    "int64_t": 8, "uint64_t": 8, "size_t": 8,
}
# These read the user's declarations and the lowering's own text, never a rendering.
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+)$", re.MULTILINE)
_TYPEDEF = re.compile(r"\btypedef\s+((?:unsigned\s+|signed\s+)?(?:long\s+long|\w+))\s+(\w+)\s*;")
_DECL = re.compile(
    r"(?:^|[;{}(\s])(?:(?:const|static|volatile|__local|local|__private|private)\s+)*"
    r"((?:unsigned\s+|signed\s+)?(?:long\s+long|[A-Za-z_]\w*))\s+([A-Za-z_]\w*)\s*"
    r"((?:\[[^\[\]]+\]\s*)+)(?=[;=])")
_DIM = re.compile(r"\[([^\[\]]+)\]")
_WORD = re.compile(r"[A-Za-z_]\w*")
_INT_SUFFIX = re.compile(r"\b((?:0[xX][0-9a-fA-F]+)|\d+)[uUlL]+\b")
_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift)
_APPLY = {
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
    # C's / and % truncate toward zero
    ast.FloorDiv: lambda a, b: abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1),
    ast.Mod: lambda a, b: a - abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1) * b,
    ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
}


def evaluate(text: str) -> int | None:
    """A C integer constant expression of literals and + - * / % << >>, or None."""
    text = _INT_SUFFIX.sub(r"\1", text).replace("/", "//")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return None

    def ev(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
                raise ValueError
            if isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= b < 128:
                raise ValueError
            if abs(a) > 1 << 80 or abs(b) > 1 << 80:
                raise ValueError  # not a size anyone declares
            return _APPLY[type(node.op)](a, b)
        raise ValueError

    try:
        return ev(tree.body)
    except (ValueError, RecursionError):
        return None


def _text(parts: Iterable[object], out: list[str]) -> None:
    """The code of lowered parts; a primitive call is opaque (``pk_call``), never a size."""
    for it in parts:
        if isinstance(it, Token):
            out.append(" " if it.kind == "comment" else it.text)
        elif isinstance(it, Gen):
            out.append(it.text)
        elif isinstance(it, Call):
            out.append(" pk_call(")
            for a in it.args:
                if isinstance(a, list):
                    _text(a, out)
                    out.append(",")
            out.append(") ")
        elif isinstance(it, list):
            _text(it, out)


def declared_arrays(localmem: Iterable[list], parts: Iterable[list],
                    bindings: Mapping[str, str], hidden: Iterable[str] = (),
                    sizes_named: Mapping[str, str] | None = None) -> tuple[ArrayFact, ...]:
    """The fixed-size arrays declared in ``parts`` and ``localmem``, whose size is known.

    ``localmem`` holds the lowering's ``localmem(type, name, dims)`` declarations;
    ``parts`` the lowered helpers and body (the user's tokens and generated text);
    ``bindings`` the type variables' types (``T`` -> ``float``); ``hidden`` the
    declarations a target's macros write for the collectives' own workgroup buffers
    (``pk_gr0``, ``pk_sg0``), as the renderer emits each with its call, and
    ``sizes_named`` the constants those name (the target's ``buffer_sizes``). An array
    whose element
    type or a dimension is not a known constant is left out. The lockstep lowering's
    ``pk_priv_<name>[pk_items]...`` is per work-item, reported as ``<name>``.
    """
    chunks: list[str] = []
    for p in parts:
        _text(p, chunks)
        chunks.append("\n")
    text = _COMMENTS.sub(" ", "".join(chunks))
    defines = dict(sizes_named or {})
    defines.update((name, value.strip()) for name, value in _DEFINE.findall(text))
    sizes = dict(_C_SIZES)
    for tv, t in bindings.items():
        if t in sizes:
            sizes[tv] = sizes[t]
    for base, name in _TYPEDEF.findall(text):
        base = " ".join(base.split())
        if base in sizes:
            sizes[name] = sizes[base]
    decls: list[tuple[str, str, list[str], bool]] = []
    for decl in localmem:
        if not decl or not isinstance(decl[0], Call) or decl[0].macro != "localmem":
            continue  # a collective's hidden buffer (GPU dialects only)
        ctype, name, dims = decl[0].args
        found: list[str] = []
        _text(ctype if isinstance(ctype, list) else [Gen(str(ctype))], found)
        dim_text: list[str] = []
        _text(dims if isinstance(dims, list) else [Gen(str(dims))], dim_text)
        decls.append((" ".join("".join(found).split()), str(name),
                      _DIM.findall("".join(dim_text)), True))
    for m in _DECL.finditer(text):
        decls.append((" ".join(m.group(1).split()), m.group(2), _DIM.findall(m.group(3)),
                      False))
    for decl_text in hidden:
        for m in _DECL.finditer(_COMMENTS.sub(" ", decl_text)):
            decls.append((" ".join(m.group(1).split()), m.group(2),
                          _DIM.findall(m.group(3)), True))
    out: list[ArrayFact] = []
    for ctype, name, dims, local in decls:
        size = sizes.get(ctype)
        if size is None:
            continue
        per_item = bool(dims) and dims[0].strip() == "pk_items"
        if per_item:
            dims = dims[1:]
        total = size
        for d in dims:
            for _ in range(8):  # macros that name macros
                expanded = _WORD.sub(lambda w: defines.get(w.group(0), w.group(0)), d)
                if expanded == d:
                    break
                d = expanded
            v = evaluate(d)
            if v is None or v < 0:
                total = -1
                break
            total *= v
        if total < 0:
            continue
        shown = name[len("pk_priv_"):] if name.startswith("pk_priv_") else name
        out.append((shown, total, per_item, local))
    return tuple(out)


def sized_local(localmem: list, bindings: dict) -> tuple:
    """The ``@localmem`` arrays sized at launch (:meth:`portakern.lower.constructs.
    ConstructLowering.do_localmem`), each ``(name, element type, count)``: the type with
    the type variables bound, the count a Python expression of the launch arguments ``a``
    and the workgroup size ``g`` (:mod:`portakern.backends.local_sizes` reads it)."""
    out = []
    for decl in localmem:
        if decl and isinstance(decl[0], Call) and decl[0].macro == "localmem_sized":
            type_toks, name, _count, expr, _offset = decl[0].args
            type_name = " ".join(t.text for t in type_toks)
            out.append((name, bindings.get(type_name, type_name), expr))
    return tuple(out)
