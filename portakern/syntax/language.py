"""Parse the kernel dialect into a small tree.

The input is the kernel source *after* Jinja has rendered it (see
:mod:`portakern.render.emit`), together with a line map back to the user's file. The
output is a :class:`Module`: the helper code shared by every kernel, and one
:class:`KernelDef` per ``@kernel`` function with its parameters and the body as
tokens. Lowering the ``@`` constructs is :mod:`portakern.lower.lowering`'s job.

The tokenizer (:mod:`portakern.syntax.tokens`, re-exported here) is deliberately small: it
knows identifiers, numbers, strings, comments, preprocessor lines, punctuation and
``@name``. It keeps whitespace so the user's code is emitted unchanged around the
constructs that get lowered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import KernelSyntaxError, KernelTypeError, NDRangeError
from ..patterns import lazy
from ..types import KNOWN_TYPES
from .macros import macro_of
from .ndarrays import MAX_AXES, nd_suffix
from .optional import check_null_default, null_default
from .structs import StructDef, check_struct_param, module_structs, refuse_declared_type
from .tokens import (
    CLOSING,
    SourceMap,
    Token,
    match_bracket,
    next_significant,
    significant,
    split_commas,
    tokenize,
)
from .vectors import VECTOR_TYPES, check_components, vector_returns
from .vectors import check_param as check_vector_param

__all__ = ["Token", "Param", "KernelDef", "Module", "SourceMap", "tokenize", "parse",
           "declared_workgroup", "hidden_params", "MAX_AXES"]



@dataclass(frozen=True)
class Param:
    """A kernel parameter: ``T* x`` (array), ``const T* x`` (read-only), ``T a``.

    ``axes`` is the number of axes of an N-d array parameter ``T x[:, :]`` (0 for a
    flat ``T* x`` or a scalar); an N-d array is also a ``pointer`` (its base).
    ``optional`` marks a flat array declared ``const T* x = null``, which a launch may
    pass as None (a null pointer the kernel tests with ``if (x)``).
    """

    name: str
    type: str
    pointer: bool
    const: bool
    index: int
    line: int = field(default=0, compare=False)  # the user's line of its name (errors)
    axes: int = 0
    optional: bool = False  # declared ``const T* x = null``: may be passed None

    @property
    def is_array(self) -> bool:
        return self.pointer

    @property
    def writable(self) -> bool:
        return self.pointer and not self.const

    def describe(self) -> str:
        if self.axes:
            return f"{'const ' if self.const else ''}{self.type}[{', '.join(':' * self.axes)}]"
        return f"{'const ' if self.const else ''}{self.type}{'*' if self.pointer else ''}"


def hidden_params(params: list[Param] | tuple[Param, ...]) -> list[Param]:
    """The scalars an N-d array parameter brings, in launch order, after the user's.

    Per N-d array ``x`` of ``k`` axes: its extents ``pk_x_n0 .. pk_x_n{k-1}``, its element
    strides ``pk_x_s0 ..`` and the offset ``pk_x_o`` (elements) of its first element from
    the pointer passed, all ``long``. (MLX reserves ``x_shape``/``x_strides``: these names
    contain neither.)
    """
    out: list[Param] = []
    at = len(params)
    for p in params:
        if not p.axes:
            continue
        names = ([f"pk_{p.name}_n{d}" for d in range(p.axes)]
                 + [f"pk_{p.name}_s{d}" for d in range(p.axes)] + [f"pk_{p.name}_o"])
        for name in names:
            out.append(Param(name, "long", False, False, at, p.line))
            at += 1
    return out


def check_count(name: str, params: list[Param] | tuple[Param, ...], nargs: int) -> None:
    """Raise the error a call with ``nargs`` arguments gets when the kernel takes another count."""
    if nargs != len(params):
        sig = ", ".join(f"{p.describe()} {p.name}" if not p.axes else
                        f"{'const ' if p.const else ''}{p.type} {p.name}"
                        f"[{', '.join(':' * p.axes)}]" for p in params)
        raise KernelTypeError(
            f"kernel {name!r} takes {len(params)} argument"
            f"{'' if len(params) == 1 else 's'} ({sig}), got {nargs}")


@dataclass
class KernelDef:
    """One ``@kernel`` function as parsed (not yet lowered)."""

    name: str
    params: list[Param]
    body: list[Token]  # tokens between the braces
    unsafe_indices: bool
    line: int
    type_vars: tuple[str, ...]
    col: int = 1
    #: ``@kernel(workgroupsize=...)``: the declared workgroup size, an int (the fastest
    #: axis, like a launch's ``workgroupsize=256``) or a tuple in ndrange order; None if
    #: the launch decides (see :func:`declared_workgroup`).
    workgroupsize: int | tuple[int, ...] | None = None
    #: ``@kernel(contract=false)`` sets this False: no target may fuse ``a * b + c``
    #: into one fused multiply-add (docs/language.md, "Floating-point contraction").
    contract: bool = True
    #: The structs the source defines before the kernel, by type name (syntax.structs).
    structs: dict[str, StructDef] = field(default_factory=dict, compare=False, repr=False)


def declared_workgroup(kernel: KernelDef, ndim: int) -> tuple[int, ...] | None:
    """The kernel's declared workgroup size for an ndrange of ``ndim`` axes, or None.

    An int sizes the fastest (last) axis and the others get 1, as a launch's
    ``workgroupsize=256`` does; a tuple must have one size per ndrange axis.

    Raises
    ------
    NDRangeError
        The declared size has another number of axes than the ndrange.
    """
    ws = kernel.workgroupsize
    if ws is None:
        return None
    if isinstance(ws, int):
        if ndim == 0:
            if ws != 1:
                raise NDRangeError(
                    f"kernel {kernel.name!r} declares workgroupsize={ws}, but a 0-axis "
                    f"ndrange runs one work-item")
            return ()
        return (1,) * (ndim - 1) + (ws,)
    if len(ws) != ndim:
        raise NDRangeError(
            f"kernel {kernel.name!r} declares workgroupsize={ws} ({len(ws)} "
            f"ax{'is' if len(ws) == 1 else 'es'}) on line {kernel.line}, but the ndrange has "
            f"{ndim} ax{'is' if ndim == 1 else 'es'}")
    return tuple(ws)


@dataclass
class Module:
    """A parsed source: helper tokens and kernels, in source order."""

    helpers: list[Token]
    kernels: list[KernelDef]
    source_map: SourceMap
    type_names: frozenset[str] = field(default_factory=frozenset)

    def kernel(self, name: str | None) -> KernelDef:
        if name is None:
            if len(self.kernels) == 1:
                return self.kernels[0]
            names = ", ".join(k.name for k in self.kernels)
            raise KernelSyntaxError(
                f"the source defines several @kernel functions ({names}); "
                f"pick one with pk.kernel(source, name=...)",
                self.source_map.filename, self.kernels[1].line, self.kernels[1].col, None)
        for k in self.kernels:
            if k.name == name:
                return k
        names = ", ".join(k.name for k in self.kernels) or "none"
        raise KernelSyntaxError(
            f"no @kernel named {name!r} in the source (it defines: {names})",
            self.source_map.filename, 1, 1, None)


def _parse_params(tokens: list[Token], smap: SourceMap, opener: Token,
                  declared: dict[str, Token], structs: dict[str, StructDef]) -> list[Param]:
    params: list[Param] = []
    groups = split_commas(significant(tokens))
    if groups == [[]] or (len(groups) == 1 and [t.text for t in groups[0]] == ["void"]):
        return params
    for idx, group in enumerate(groups):
        if not group:
            raise smap.error_at("empty parameter in the @kernel signature", opener)
        const = False
        type_name: str | None = None
        stars = 0
        name: Token | None = None
        axes = 0
        struct_kw: Token | None = None
        group, optional = null_default(group, smap)
        n_axes = nd_suffix(group, smap)
        if n_axes:
            axes, group = n_axes, group[:-(2 * n_axes + 1)]
        for t in group:
            if t.kind == "id" and t.text in ("const",):
                const = True
            elif t.kind == "id" and t.text in ("restrict", "__restrict__", "__restrict"):
                continue
            elif t.kind == "id" and t.text == "struct":
                struct_kw = t  # must name a struct the source defines (checked below)
            elif t.kind == "id" and t.text in ("unsigned", "signed", "short", "char", "size_t",
                                               "volatile", "__global", "global", "device",
                                               "__local", "local", "constant", "__constant"):
                hint = {
                    "unsigned": "use uint, ulong, uint8_t ... instead",
                    "signed": "use int, long, int8_t ... instead",
                    "short": "use int16_t or uint16_t",
                    "char": "use int8_t or uint8_t",
                    "size_t": "use long or ulong",
                    "volatile": "volatile is not supported on parameters",
                }.get(t.text, "address spaces are the renderer's job; write plain T* or const T*")
                raise smap.error_at(f"'{t.text}' is not allowed in a kernel parameter: {hint}", t)
            elif t.kind == "id" and type_name is None:
                type_name = t.text
                if t.text in declared and t.text not in structs:
                    refuse_declared_type(t, declared[t.text], smap)
                elif struct_kw is not None and t.text not in structs:
                    refuse_declared_type(struct_kw, None, smap)
            elif t.kind == "id" and name is None:
                name = t
            elif t.is_punct("*"):
                if type_name is None or name is not None:
                    raise smap.error_at("misplaced '*' in a kernel parameter", t)
                stars += 1
                if stars > 1:
                    raise smap.error_at(
                        "pointers to pointers cannot be kernel parameters; pass arrays as T*",
                        t)
            else:
                raise smap.error_at(
                    f"unexpected '{t.text}' in a kernel parameter; write 'T* name', "
                    f"'const T* name' or 'T name'", t)
        if type_name is None or name is None:
            raise smap.error_at(
                "a kernel parameter needs a type and a name ('T* x', 'const T* x', 'T a')",
                group[0])
        if type_name in structs:
            check_struct_param(name, structs[type_name], type_name, stars, axes, smap)
        if axes and stars:
            raise smap.error_at(
                f"{name.text!r}: an N-d array parameter is written without '*': "
                f"'{'const ' if const else ''}{type_name} {name.text}"
                f"[{', '.join(':' * axes)}]'", name)
        if optional:
            check_null_default(name, type_name, stars, axes, smap)
        if axes:
            check_vector_param(name.text, type_name, True, name, smap)
            if type_name in VECTOR_TYPES:
                raise smap.error_at(
                    f"{name.text!r}: N-d array parameters of vector type ({type_name}) are "
                    f"not supported; declare 'const {type_name}* {name.text}' (flat) or an "
                    f"N-d array of the element type", name)
            params.append(Param(name.text, type_name, True, const, idx, name.line, axes))
            continue
        check_vector_param(name.text, type_name, stars == 1, name, smap)
        params.append(Param(name.text, type_name, stars == 1, const and stars == 1, idx,
                            name.line, optional=optional))
    seen: set[str] = set()
    for p in params:
        if p.name in seen:
            raise smap.error_at(f"duplicate parameter name {p.name!r}", opener)
        seen.add(p.name)
    return params


def _declared_types(tokens: list[Token]) -> dict[str, Token]:
    """The names ``typedef``/``struct`` declare, each with the token that starts it."""
    names: dict[str, Token] = {}
    sig = significant(tokens)
    for i, t in enumerate(sig):
        if t.kind == "id" and t.text == "typedef":
            j = i + 1
            depth = 0
            last = None
            while j < len(sig):
                s = sig[j]
                if s.kind == "punct" and s.text in "({[":
                    depth += 1
                elif s.kind == "punct" and s.text in ")}]":
                    depth -= 1
                elif depth == 0 and s.is_punct(";"):
                    break
                elif depth == 0 and s.kind == "id":
                    last = s.text
                j += 1
            if last:
                names.setdefault(last, t)
        elif t.kind == "id" and t.text == "struct" and i + 1 < len(sig) and sig[i + 1].kind == "id":
            names.setdefault(sig[i + 1].text, t)
    return names


def _defined_types(tokens: list[Token]) -> set[str]:
    """The names ``#define NAME type`` makes a known type."""
    names: set[str] = set()
    for t in tokens:
        if t.kind == "pp":
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)\s+(\w+)\s*$", t.text)
            if m and m.group(2) in KNOWN_TYPES:
                names.add(m.group(1))
    return names


def parse(smap: SourceMap) -> Module:
    """Parse rendered kernel text into a :class:`Module`."""
    tokens = tokenize(smap.rendered, smap)
    helpers: list[Token] = []
    kernels: list[KernelDef] = []
    i = 0
    depth = 0
    while i < len(tokens):
        t = tokens[i]
        if t.kind == "pp" and "@" in _strip_pp_comments(t.text):
            raise smap.error_at("@ constructs cannot be used inside preprocessor directives", t)
        if t.kind == "punct" and t.text in CLOSING:
            depth += 1
        elif t.kind == "punct" and t.text in (")", "]", "}"):
            depth -= 1
            if depth < 0:
                raise smap.error_at(f"unmatched '{t.text}'", t)
        if t.kind == "at" and t.text == "@kernel":
            if depth != 0:
                raise smap.error_at("@kernel must be at the top level of the source", t)
            kernel, i = _parse_kernel(tokens, i, smap, _declared_types(helpers),
                                      module_structs(helpers, smap))
            kernels.append(kernel)
            continue
        if t.kind == "at":
            _check_helper_construct(t, smap)
        _check_reserved(t, smap)
        helpers.append(t)
        i += 1
    if depth != 0:
        opener = next((t for t in reversed(tokens) if t.kind == "punct" and t.text in CLOSING),
                      tokens[-1] if tokens else Token("ws", "", 1, 1))
        raise smap.error_at(f"'{opener.text}' is never closed", opener)
    if not kernels:
        raise smap.error("the source has no @kernel function", 1, 1, 0)
    first_line: dict[str, int] = {}
    for k in kernels:
        if k.name in first_line:
            # Point at the second definition, the one to rename or remove.
            raise smap.error_at(
                f"@kernel {k.name!r} is defined twice (first on line {first_line[k.name]})",
                Token("at", "@kernel", k.line, k.col))
        first_line[k.name] = k.line
    declared = _declared_types(helpers)
    for k in kernels:
        check_print_calls(k.body, smap)
    # What would otherwise pass through silently (DESIGN section 1a): a comma in a flat
    # array's subscript, pointer casts, arrays of pointers.
    from .pointer_checks import check_flat_access  # off the import path

    check_flat_access(tokens, smap, {p.name: p.type for k in kernels for p in k.params
                                     if p.pointer and not p.axes},
                      frozenset(p.name for k in kernels for p in k.params if p.axes))
    return Module(helpers, kernels, smap, frozenset(set(declared) | _defined_types(helpers)))


#: A printf conversion: flags, width, precision, length (OpenCL's vector ``v4hl`` too).
_CONVERSION_RE = lazy(
    r"%(?:%|[-+ #0]*(\*|\d+)?(?:\.(\*|\d*))?(?:v\d+)?(?:hh|hl|h|ll|l|L|z|j|t)?"
    r"([diouxXeEfFgGaAcsp]))")


def check_print_calls(body: list[Token], smap: SourceMap) -> None:
    """Each ``@print`` has one format string and as many values as it converts.

    KernelAbstractions' form ``@print("item ", i, "\\n")`` passes values between
    strings; as printf the values would be dropped (``item item item``), so it is
    refused with the printf form to write instead.
    """
    for n, t in enumerate(body):
        if not (t.kind == "at" and t.text == "@print"):
            continue
        j = next_significant(body, n + 1)
        if j >= len(body) or not body[j].is_punct("("):
            continue  # the lowering says what @print needs
        close = match_bracket(body, j, smap)
        args = split_commas(significant(body[j + 1:close]))
        fmt = args[0]
        if not fmt or not all(a.kind == "str" and a.text.startswith('"') for a in fmt):
            continue  # not a string literal first: the lowering's error
        text = "".join(a.text[1:-1] for a in fmt)
        wanted = 0
        for m in _CONVERSION_RE.finditer(text):
            if m.group(3):
                wanted += 1 + (m.group(1) == "*") + (m.group(2) == "*")
        values = args[1:]
        strings = [a for a in values if len(a) == 1 and a[0].kind == "str"]
        if len(values) == wanted and not (strings and not wanted):
            continue
        example = '@print("item %ld\\n", i);'
        if strings:
            raise smap.error_at(
                f"@print takes one format string and then its values, like printf: write "
                f"{example} (KernelAbstractions' form, values between strings, is not "
                f"supported: as printf it would print the first string only)", t)
        raise smap.error_at(
            f"@print's format converts {wanted} value{'' if wanted == 1 else 's'} but "
            f"{len(values)} {'is' if len(values) == 1 else 'are'} given; write one "
            f"conversion per value, e.g. {example} (%ld for long, %d for int, %f for "
            f"(double)x)", t)


def _check_reserved(t: Token, smap: SourceMap) -> None:
    """Names starting with ``pk_`` belong to the generated code (``pk_active``, ``pk_n0``...)."""
    if t.kind == "id" and t.text.startswith("pk_"):
        name = t.text
    elif t.kind == "pp" and (m := macro_of(t)) is not None and m.name.startswith("pk_"):
        name = m.name
    else:
        return
    raise smap.error_at(
        f"{name!r}: names starting with pk_ are reserved for the code portakern generates "
        f"(pk_active, pk_n0, ...); rename it", t)


def _strip_pp_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)


#: Constructs that may appear outside a @kernel (in helper functions).
#: The ``@`` constructs of a kernel body (:mod:`portakern.lower.lowering` gives their meaning).
KERNEL_CONSTRUCTS = frozenset({
    "@index", "@ndrange", "@groupsize", "@localmem", "@private", "@uniform", "@synchronize",
    "@groupreduce",
    # subgroup operations (portakern.lower.subgroups)
    "@subgroupsize", "@subgroupid", "@laneid", "@shuffle", "@shuffle_down", "@shuffle_up",
    "@shuffle_xor", "@broadcast", "@subgroupreduce",
    "@groups", "@print", "@vload", "@vstore", "@bitcast", "@load", "@store",
    # N-d array parameters (portakern.lower.subscripts)
    "@size", "@length",
})

HELPER_CONSTRUCTS = frozenset(
    f"@atomic_{op}" for op in ("add", "sub", "min", "max", "xchg", "cas", "and", "or", "xor"))


def _check_helper_construct(t: Token, smap: SourceMap) -> None:
    if t.text == "@synchronize":
        return  # a void helper with a barrier is inlined (portakern.lower.barrier_helpers)
    if t.text not in HELPER_CONSTRUCTS:
        if t.text in KERNEL_CONSTRUCTS:
            raise smap.error_at(
                f"{t.text} can only be used inside a @kernel function, not in a helper", t)
        raise smap.error_at(unknown_construct_message(t.text), t)


def unknown_construct_message(text: str) -> str:
    known = ", ".join(sorted(KERNEL_CONSTRUCTS | HELPER_CONSTRUCTS | {"@kernel"}))
    return f"unknown construct {text}; known constructs are {known}"


def _parse_kernel(tokens: list[Token], i: int, smap: SourceMap, declared: dict[str, Token],
                  structs: dict[str, StructDef]) -> tuple[KernelDef, int]:
    at = tokens[i]
    j = next_significant(tokens, i + 1)
    unsafe = False
    options: dict[str, object] = {}
    if j < len(tokens) and tokens[j].is_punct("("):
        close = match_bracket(tokens, j, smap)
        options = _kernel_options(significant(tokens[j + 1:close]), smap)
        unsafe = bool(options.pop("unsafe_indices", False))
        j = next_significant(tokens, close + 1)
    if j >= len(tokens) or tokens[j].text != "void":
        bad = tokens[j] if j < len(tokens) else at
        raise smap.error_at("a @kernel function must return void: '@kernel void name(...)'", bad)
    j = next_significant(tokens, j + 1)
    if j >= len(tokens) or tokens[j].kind != "id":
        bad = tokens[j] if j < len(tokens) else at
        raise smap.error_at("expected the kernel's name after '@kernel void'", bad)
    name = tokens[j]
    j = next_significant(tokens, j + 1)
    if j >= len(tokens) or not tokens[j].is_punct("("):
        bad = tokens[j] if j < len(tokens) else name
        raise smap.error_at(f"expected '(' after the kernel name {name.text!r}", bad)
    pclose = match_bracket(tokens, j, smap)
    params = _parse_params(tokens[j + 1:pclose], smap, tokens[j], declared, structs)
    for p in params:
        if p.name.startswith("pk_"):
            raise smap.error_at(f"parameter {p.name!r}: names starting with pk_ are reserved",
                                tokens[j])
    b = next_significant(tokens, pclose + 1)
    if b >= len(tokens) or not tokens[b].is_punct("{"):
        bad = tokens[b] if b < len(tokens) else tokens[pclose]
        raise smap.error_at("expected '{' to open the kernel body", bad)
    bclose = match_bracket(tokens, b, smap)
    for t in tokens[b + 1:bclose]:
        _check_reserved(t, smap)
    type_vars = tuple(dict.fromkeys(p.type for p in params if p.type not in KNOWN_TYPES
                                    and p.type not in VECTOR_TYPES and p.type not in structs))
    check_components(tokens[b + 1:bclose], params, smap, vector_returns(tokens[:i]))
    kernel = KernelDef(name.text, params, tokens[b + 1:bclose], unsafe, at.line, type_vars,
                       at.col, **options)  # type: ignore[arg-type]
    kernel.structs = structs
    return kernel, bclose + 1


#: ``@kernel(...)`` options: a bare word, or ``name=value``.
KERNEL_OPTIONS = ("unsafe_indices", "workgroupsize=...", "contract=false")


def _kernel_options(opts: list[Token], smap: SourceMap) -> dict[str, object]:
    """``unsafe_indices, workgroupsize=(16, 16), contract=false`` -> KernelDef fields."""
    groups: list[list[Token]] = [[]]
    depth = 0
    for t in opts:
        if t.is_punct("("):
            depth += 1
        elif t.is_punct(")"):
            depth -= 1
        if depth == 0 and t.is_punct(","):
            groups.append([])
        else:
            groups[-1].append(t)
    known = ", ".join(KERNEL_OPTIONS)
    out: dict[str, object] = {}
    for group in groups:
        if not group:
            continue  # '@kernel()', or a trailing ','
        word = group[0]
        if word.kind != "id" or word.text not in ("unsafe_indices", "workgroupsize",
                                                  "contract"):
            raise smap.error_at(
                f"unknown @kernel option {word.text!r}; the options are {known}", word)
        key = word.text
        if key in out:
            raise smap.error_at(f"@kernel option {word.text!r} is given twice", word)
        if word.text == "unsafe_indices":
            if len(group) > 1:
                raise smap.error_at("unsafe_indices takes no value: '@kernel(unsafe_indices)'",
                                    group[1])
            out[key] = True
            continue
        if len(group) < 3 or not group[1].is_punct("="):
            example = "workgroupsize=(16, 16)" if word.text == "workgroupsize" else \
                "contract=false"
            raise smap.error_at(f"@kernel option {word.text} needs a value: '{example}'", word)
        value = group[2:]
        if word.text == "contract":
            if len(value) != 1 or value[0].text not in ("true", "false"):
                raise smap.error_at("contract takes true or false: '@kernel(contract=false)'",
                                    value[0])
            out[key] = value[0].text == "true"
        else:
            out[key] = _workgroup_option(value, smap)
    return out


def _workgroup_option(value: list[Token], smap: SourceMap) -> int | tuple[int, ...]:
    """``256`` or ``(16, 16)``: positive integer literals (a Jinja constant renders as one)."""
    hint = ("workgroupsize takes an integer or a tuple of 1 to 3 integers in ndrange order, "
            "e.g. workgroupsize=256 or workgroupsize=(16, 16)")
    single = len(value) == 1
    if not single and not (value[0].is_punct("(") and value[-1].is_punct(")")):
        raise smap.error_at(hint, value[0])
    inner = value if single else value[1:-1]
    sizes: list[int] = []
    expect_number = True
    for t in inner:
        if expect_number:
            if t.kind != "num" or not re.fullmatch(r"\d+[uUlL]*", t.text):
                raise smap.error_at(f"{t.text!r} is not an integer literal; {hint}", t)
            n = int(re.sub(r"[uUlL]", "", t.text))
            if n < 1:
                raise smap.error_at(f"workgroupsize sizes must be >= 1, got {n}", t)
            sizes.append(n)
        elif not t.is_punct(","):
            raise smap.error_at(f"unexpected {t.text!r}; {hint}", t)
        expect_number = not expect_number
    if not sizes or len(sizes) > 3 or (expect_number and not single and inner and
                                        not inner[-1].is_punct(",")):
        raise smap.error_at(hint, value[0])
    return sizes[0] if single else tuple(sizes)
