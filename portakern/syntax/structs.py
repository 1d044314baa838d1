"""The structs a module declares, and struct types on kernel parameters.

``typedef struct { half d; uint8_t qs[16]; } block_q4_0;`` or ``struct name { ... };``
in the helper code makes ``block_q4_0`` (``name``) a type (DESIGN section 1a,
"Structs"): usable for locals, helper parameters and results, ``@localmem`` and as the
element type of an array parameter (``const block_q4_0* blocks``). A struct's name is
never a type variable. :func:`struct_definitions` reads each definition's fields in
order (name, element type words, array extents), which
:mod:`portakern.analysis.struct_layouts` lays out per target.
"""

from __future__ import annotations

from dataclasses import dataclass

from .tokens import SourceMap, Token, significant

__all__ = ["StructDef", "StructField", "module_structs", "struct_definitions",
           "check_struct_param", "refuse_declared_type"]


@dataclass(frozen=True)
class StructField:
    """One field: ``uint8_t qs[16]`` is ``StructField("qs", "uint8_t", (16,))``."""

    name: str
    type: str  # the element type as written, without const/volatile/struct
    dims: tuple[int, ...]
    line: int = 0


@dataclass(frozen=True)
class StructDef:
    """A struct definition: its name(s), its fields in order and the line it starts on."""

    names: tuple[str, ...]  # the tag and/or the typedef name
    fields: tuple[StructField, ...]
    line: int
    tag: str | None  # ``struct tag {...}``: C targets need ``typedef struct tag tag;``
    typedef: bool  # written ``typedef struct ... name;``
    problem: str = ""  # why its fields cannot be laid out (a field the layout cannot read)


_SKIP = frozenset({"const", "volatile", "struct"})


def _fields(inner: list[Token], smap: SourceMap | None) -> tuple[StructField, ...]:
    out: list[StructField] = []
    stmt: list[Token] = []
    for t in inner + [Token("punct", ";", 0, 0)]:
        if not t.is_punct(";"):
            stmt.append(t)
            continue
        if stmt:
            out.extend(_field_statement(stmt, smap))
        stmt = []
    return tuple(out)


def _field_statement(stmt: list[Token], smap: SourceMap | None) -> list[StructField]:
    """``T a, b[4]`` -> its fields; a field the layout cannot read is an error."""
    words: list[str] = []
    k = 0
    while k < len(stmt) and stmt[k].kind == "id" and (
            k + 1 < len(stmt) and stmt[k + 1].kind == "id" or stmt[k].text in _SKIP):
        if stmt[k].text not in _SKIP:
            words.append(stmt[k].text)
        k += 1
    out: list[StructField] = []
    for part in _split(stmt[k:], ","):
        if not part or part[0].kind != "id" or not words:
            _bad(stmt[0], smap, "write one field per declarator: 'T name;' or 'T name[N];'")
        dims: list[int] = []
        rest = part[1:]
        while rest:
            if (len(rest) >= 3 and rest[0].is_punct("[") and rest[1].kind == "num"
                    and rest[2].is_punct("]")):
                try:
                    dims.append(int(rest[1].text.rstrip("uUlL"), 0))
                except ValueError:
                    _bad(rest[1], smap, "an array field's extent must be an integer literal "
                         "(or a #define of one)")
                rest = rest[3:]
            else:
                _bad(rest[0], smap, "a field is 'T name' or 'T name[N]' with a literal N "
                     "(pointers, bit-fields and initializers are not supported in structs)")
        out.append(StructField(part[0].text, " ".join(words), tuple(dims), part[0].line))
    return out


def _split(tokens: list[Token], sep: str) -> list[list[Token]]:
    out: list[list[Token]] = [[]]
    depth = 0
    for t in tokens:
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        if depth == 0 and t.is_punct(sep):
            out.append([])
        else:
            out[-1].append(t)
    return out


class _Unreadable(Exception):
    """A field the layout cannot read: only an error where the layout matters."""


def _bad(t: Token, smap: SourceMap | None, fix: str) -> None:
    raise _Unreadable(f"line {t.line}: {fix}")


def struct_definitions(helpers: list[Token], smap: SourceMap | None = None,
                       defines: dict[str, str] | None = None) -> list[StructDef]:
    """Every ``struct ... { ... }`` definition at the top level of ``helpers``, in order.

    ``defines`` maps ``#define NAME 16`` names to their text, so ``uint8_t qs[QK]``
    reads as 16.
    """
    sig = significant(helpers)
    if defines:
        sig = [Token("num", defines[t.text], t.line, t.col)
               if t.kind == "id" and t.text in defines else t for t in sig]
    out: list[StructDef] = []
    depth = 0
    n = 0
    while n < len(sig):
        t = sig[n]
        if depth == 0 and t.kind == "id" and t.text == "struct":
            typedef = n > 0 and sig[n - 1].text == "typedef"
            tag = sig[n + 1].text if n + 1 < len(sig) and sig[n + 1].kind == "id" else None
            brace = n + (2 if tag else 1)
            if brace < len(sig) and sig[brace].is_punct("{"):
                close, d = brace, 0
                while close < len(sig):
                    d += sig[close].is_punct("{") - sig[close].is_punct("}")
                    if d == 0:
                        break
                    close += 1
                names = [tag] if tag else []
                end = close + 1
                while end < len(sig) and not sig[end].is_punct(";"):
                    if typedef and sig[end].kind == "id":
                        names.append(sig[end].text)
                    end += 1
                try:
                    fields, problem = _fields(sig[brace + 1:close], smap), ""
                except _Unreadable as exc:
                    fields, problem = (), str(exc)
                out.append(StructDef(tuple(dict.fromkeys(names)), fields, t.line, tag,
                                     typedef, problem))
                n = end + 1
                continue
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        n += 1
    return out


def check_struct_param(name: Token, struct: StructDef, type_name: str, stars: int, axes: int,
                       smap: SourceMap) -> None:
    """A struct-typed kernel parameter must be a flat array ``[const] S* name`` of a
    struct whose fields portakern can lay out."""
    if struct.problem:
        raise smap.error_at(
            f"{name.text!r}: struct {type_name} (line {struct.line}) cannot be the element "
            f"type of an array parameter, its fields must be laid out like NumPy's: "
            f"unsupported field at {struct.problem}", name)
    if stars == 1 and not axes:
        return
    how = "an N-d array" if axes else "passed by value"
    raise smap.error_at(
        f"{name.text!r}: a struct parameter ({type_name}) cannot be {how}; declare "
        f"'const {type_name}* {name.text}' and pass a NumPy structured array (a one-element "
        f"array for a single value)", name)


def refuse_declared_type(t: Token, decl: Token | None, smap: SourceMap) -> None:
    """A parameter typed with a name the source declares that is not a struct
    (``typedef float real;``), or ``struct`` before a name that is no struct.

    Such a name must never become a type variable (it would be bound from the array's
    dtype and declared a second time).
    """
    where = "" if decl is None else (
        f"{t.text!r} is a type the source declares (line {decl.line}), not a type "
        f"variable; ")
    raise smap.error_at(
        f"{where}only structs the source defines and built-in types may type a kernel "
        f"parameter: write the built-in type (or a type variable) instead", t)


def module_structs(helpers: list[Token], smap: SourceMap | None = None) -> dict[str, StructDef]:
    """Each struct type name of ``helpers`` -> its definition (``#define`` extents read)."""
    from .macros import macro_of

    defines: dict[str, str] = {}
    for t in helpers:
        m = macro_of(t) if t.kind == "pp" else None
        if m is not None and not m.undef and m.params is None and m.body.strip().isdigit():
            defines[m.name] = m.body.strip()
    out: dict[str, StructDef] = {}
    for d in struct_definitions(helpers, smap, defines):
        for name in d.names:
            out[name] = d
    sig = significant(helpers)
    for n, t in enumerate(sig[:-4]):  # typedef struct tag alias;
        if (t.text == "typedef" and sig[n + 1].text == "struct" and sig[n + 2].text in out
                and sig[n + 3].kind == "id" and sig[n + 4].is_punct(";")):
            out.setdefault(sig[n + 3].text, out[sig[n + 2].text])
    return out


def tag_definition_ends(helpers: list[Token]) -> dict[int, str]:
    """The index in ``helpers`` of the ``;`` ending each ``struct tag { ... };`` written
    without ``typedef``, with its tag: OpenCL C (C99) needs ``typedef struct tag tag;``
    to use the bare name, which C++ targets accept as well."""
    out: dict[int, str] = {}
    code = [(n, t) for n, t in enumerate(helpers) if t.kind not in ("ws", "comment", "pp")]
    depth = 0
    for k, (_n, t) in enumerate(code):
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        if (depth == 0 and t.text == "struct" and k + 2 < len(code)
                and code[k + 1][1].kind == "id" and code[k + 2][1].is_punct("{")
                and not (k > 0 and code[k - 1][1].text == "typedef")):
            d, j = 0, k + 2
            while j < len(code):
                d += code[j][1].is_punct("{") - code[j][1].is_punct("}")
                if d == 0:
                    break
                j += 1
            if j + 1 < len(code) and code[j + 1][1].is_punct(";"):
                out[code[j + 1][0]] = code[k + 1][1].text
    return out


#: Words before a ``(`` in a struct's body that are no member function.
_NOT_METHODS = frozenset({"alignas", "_Alignas", "__attribute__", "__declspec", "sizeof",
                          "__align__", "decltype"})


def struct_methods(helpers: list[Token]) -> list[tuple[str, Token]]:
    """``(struct name, name token)`` of each member function of the structs defined in
    ``helpers`` (a module's helpers, and a kernel's body after them), at the top level or
    in any block of a function's body: a method
    ``float norm() const { ... }``, a constructor ``V(float a)`` or an ``operator+``
    declared in a struct's body, and one defined outside it (``float V::norm()``), in
    source order. OpenCL C (C99) has none: the target fact
    :attr:`portakern.targets.TargetInfo.methods`."""
    sig = significant(helpers)
    out: list[tuple[str, Token]] = []
    depth = 0
    n = 0
    while n < len(sig):
        t = sig[n]
        if t.kind == "id" and t.text in ("struct", "class"):  # in a nested block too
            brace = n + 1
            while brace < len(sig) and (sig[brace].kind == "id" or sig[brace].is_punct(":")):
                brace += 1
            if brace < len(sig) and sig[brace].is_punct("{"):
                close = _close_of(sig, brace)
                name = sig[n + 1].text if sig[n + 1].kind == "id" else (
                    sig[close + 1].text if close + 1 < len(sig) and sig[close + 1].kind == "id"
                    else "S")
                out += [(name, m) for m in _members(sig[brace + 1:close])]
                n = close + 1
                continue
        if depth == 0 and t.kind == "id" and n + 4 < len(sig) and sig[n + 1].is_punct(":") \
                and sig[n + 2].is_punct(":") and sig[n + 3].kind == "id" \
                and (sig[n + 4].is_punct("(") or sig[n + 3].text == "operator"):
            out.append((t.text, sig[n + 3]))  # float V::norm() const { ... } (or V::V(...))
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            depth -= 1
        n += 1
    return out


def _close_of(sig: list[Token], brace: int) -> int:
    d, close = 0, brace
    while close < len(sig):
        d += sig[close].is_punct("{") - sig[close].is_punct("}")
        if d == 0:
            break
        close += 1
    return close


def _members(inner: list[Token]) -> list[Token]:
    """The member functions declared in one struct body (its tokens between the braces)."""
    out: list[Token] = []
    depth = 0
    named = False  # a member function seen in this member declaration already
    for k, t in enumerate(inner):
        if t.kind == "punct" and t.text in ("(", "[", "{"):
            if t.text == "(" and depth == 0 and not named and k > 0:
                before = inner[k - 1]
                # operator+ ( and operator[] ( and operator() (: the word a few tokens back
                at = next((inner[j] for j in range(k - 1, max(k - 4, -1), -1)
                           if inner[j].text == "operator"), before)
                if at.text == "operator" or (before.kind == "id"
                                              and before.text not in _NOT_METHODS):
                    out.append(at)
                    named = True
            depth += 1
        elif t.kind == "punct" and t.text in (")", "]", "}"):
            depth -= 1
            if depth == 0 and t.text == "}" and named:
                named = False  # the end of an inline body
        elif depth == 0 and t.is_punct(";"):
            named = False
    return out
