"""Debug mode inside struct methods (issue 28, docs/debugging.md "In a struct's method").

A method defined in the body of a struct the source declares at top level (``float add(float
v, long k) { ... }`` in ``struct Acc { ... };``) takes debug mode's hidden parameters after
its own, each **with a default** (the target's ``debug_method_params``: a null record, no
work-item). A call debug mode rewrites passes the caller's record and work-item:
``acc.add(v)``, ``p->add(v)``, ``tile[i].add(v)``, ``this->add(v)`` (:func:`pass_to_methods`,
in the kernel body, in helpers and in methods) and ``add(v)`` in another method of the same
struct. Any other call (through a template parameter, say) still builds and takes the
defaults, so the method runs unchecked there, as without the record.

With the record, the method body's subscripts of its struct's **member arrays** (``bins[k]``,
a field ``float bins[4]``: the extent from the struct definition) and of its own private
arrays are checked (``pk_dbg ? checked_local(...) : (k)``, so a null record checks nothing),
and the helpers it calls get its record and work-item. Its pointer parameters take where
they point too, and are checked as a helper's are (:mod:`.debug_method_pointers`). The
member and private arrays' fault codes are in the helpers' private range
(:data:`.debug_helper_private.PRIVATE_FIRST`), after the helpers' own arrays:
:func:`method_privates` lists them (``Acc::add``; a member array as ``this->bins``), and the
launcher names them from the same list.

Left as before (no hidden parameters; calls from them pass a null record): constructors,
destructors, operators, template and virtual methods, one with a default argument (a call
leaving it out would pass the hidden values in its place), a method declared in the struct and
defined outside it, one whose name is overloaded or is also a field, a helper or anything
else that is not called (``&Acc::add``), and methods of nested or local structs (their
names too: a call ``x.m()`` is rewritten by its name alone, so every method of that name
must take the parameters). ``bins[k]`` and ``this->bins[k]`` are member accesses, but not
where the method declares ``bins`` itself; ``other.bins[k]`` of a struct variable the
method declares or takes is a member path (:mod:`.debug_members`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..syntax.language import Token
from ..syntax.parts import Call, Gen, item_step
from ..syntax.parts import is_tok as _is_tok
from ..syntax.parts import match_items as _match_items
from .debug_helper_parts import code_of as _code
from .debug_helper_parts import definitions
from .debug_helper_parts import skip as _next
from .debug_helper_parts import tok as _tok

__all__ = ["checkable_methods", "method_privates", "methods_in", "pass_to_methods",
           "struct_scan"]

_AGGREGATES = ("struct", "class", "union")
_SPECIFIERS = ("public", "private", "protected")
_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*")
_SIZE_PUNCT = frozenset({"+", "-", "*", "/", "%", "(", ")", "<<", ">>"})


@dataclass
class Method:
    """A method defined in a top-level struct's body: indices into the scanned parts."""
    struct: str
    name: str
    at: int
    open: int
    close: int
    brace: int
    end: int

    @property
    def full(self) -> str:
        return f"{self.struct}::{self.name}"


@dataclass
class Scan:
    methods: list[Method] = field(default_factory=list)
    #: Each top-level struct's member arrays with constant sizes: ``{struct: {name: sizes}}``.
    arrays: dict[str, dict[str, list[list]]] = field(default_factory=dict)
    #: Names that cannot take the hidden parameters (see the module's docstring).
    bad: set[str] = field(default_factory=set)


def _macros(parts: list) -> set[str]:
    return {m.group(1) for t in parts if isinstance(t, Token) and t.kind == "pp"
            for m in [re.match(r"#\s*define\s+([A-Za-z_]\w*)(?!\()", t.text)] if m}


def _aggregate_at(parts: list, k: int) -> tuple[str, int] | None:
    """``(name, brace)`` where ``parts[k]`` is ``struct``/``class``/``union`` opening a body."""
    if not _is_tok(parts[k], *_AGGREGATES) or _tok(parts[k]).kind != "id":
        return None
    j = _next(parts, k + 1)
    name = ""
    if j < len(parts) and isinstance(parts[j], Token) and parts[j].kind == "id":
        name = parts[j].text
        j = _next(parts, j + 1)
    while j < len(parts) and not _is_tok(parts[j], "{", ";", "(", ")", "=", ","):
        j += 1  # a base list: struct B : A {
    if j < len(parts) and _is_tok(parts[j], "{"):
        if not name:  # typedef struct { ... } name;
            after = _next(parts, _match_items(parts, j) + 1)
            if after < len(parts) and isinstance(parts[after], Token) and parts[after].kind == "id":
                name = parts[after].text
        return name, j
    return None


def _all_calls(parts: list) -> set[str]:
    """The names ``f`` of every ``f(`` in ``parts``."""
    out = set()
    for k, t in enumerate(parts):
        if isinstance(t, Token) and t.kind == "id":
            j = _next(parts, k + 1)
            if j < len(parts) and _is_tok(parts[j], "("):
                out.add(t.text)
    return out


def _constant(size: list, macros: set[str]) -> bool:
    return bool(size) and all(
        (s.kind == "num" and _NUMBER.fullmatch(s.text))
        or (s.kind == "punct" and s.text in _SIZE_PUNCT)
        or (s.kind == "id" and s.text in macros) for s in size)


def _members(parts: list, name: str, brace: int, close: int, scan: Scan, top: bool,
             macros: set[str]) -> None:
    """Scan one struct body ``parts[brace + 1:close]``."""
    seen: dict[str, int] = {}
    arrays: dict[str, list[list]] = {}
    fields: set[str] = set()
    start = k = brace + 1
    while k < close:
        it = parts[k]
        if _is_tok(it, "(", "["):
            k = _match_items(parts, k) + 1
            continue
        if _is_tok(it, ":") and [t.text for t in _code(parts[start:k])
                                 if isinstance(t, Token)] in ([s] for s in _SPECIFIERS):
            start = k = k + 1
            continue
        if not _is_tok(it, "{", ";"):
            k += 1
            continue
        seg = [t for t in _code(parts[start:k]) if isinstance(t, Token)]
        paren = next((j for j, t in enumerate(seg) if t.is_punct("(")), None)
        if paren is not None and any(t.is_punct("=") for t in seg[:paren]):
            paren = None  # a field with an initializer: float s = f(1);
        if paren is not None:  # a member function
            head = seg[:paren]
            fn = head[-1].text if head and head[-1].kind == "id" else ""
            seen[fn] = seen.get(fn, 0) + 1
            plain = (top and _is_tok(it, "{") and fn and fn != name and fn != "operator"
                     and len(head) > 1 and not head[-2].is_punct("~")
                     and not any(t.text in ("template", "virtual", "friend", "operator")
                                 for t in head)
                     # A default argument: a call that leaves it out would pass the hidden
                     # values in its place.
                     and not any(t.is_punct("=") for t in seg[paren:]))
            if _is_tok(it, "{"):
                end = _match_items(parts, k)
                scan.bad.update(_nested_calls(parts[k + 1:end], scan, macros))
                if plain:
                    at = next(j for j in range(k, start - 1, -1)
                              if isinstance(parts[j], Token) and parts[j] is head[-1])
                    open_at = _next(parts, at + 1)
                    scan.methods.append(Method(name, fn, at, open_at,
                                               _match_items(parts, open_at), k, end))
                else:
                    scan.bad.add(fn)
                start = k = end + 1
                continue
            scan.bad.add(fn)
            start = k = k + 1
            continue
        if _is_tok(it, "{"):  # a nested aggregate (or a brace initializer)
            end = _match_items(parts, k)
            scan.bad.update(_nested_calls(parts[k + 1:end], scan, macros))
            k = end + 1
            continue
        for j, t in enumerate(seg):  # a field declaration
            nxt = seg[j + 1] if j + 1 < len(seg) else None
            if t.kind == "id" and (nxt is None or _is_tok(nxt, "[", ",", "=", ":")):
                fields.add(t.text)
                if nxt is not None and _is_tok(nxt, "[") and j:
                    dims, m, ok = [], j + 1, True
                    while m < len(seg) and seg[m].is_punct("["):
                        c = _match_items(seg, m)
                        ok = ok and _constant(seg[m + 1:c], macros)
                        dims.append([Gen("("), *seg[m + 1:c], Gen(")")])
                        m = c + 1
                    if ok:
                        arrays[t.text] = dims
        start = k = k + 1
    scan.bad.update(fields)
    scan.bad.update(f for f, n in seen.items() if n > 1)
    if top and name:
        scan.arrays.setdefault(name, {}).update(arrays)


def _nested_calls(body: list, scan: Scan, macros: set[str]) -> set[str]:
    """The method names of aggregates nested in ``body`` (a method's or a struct's)."""
    out: set[str] = set()
    for k in range(len(body)):
        found = _aggregate_at(body, k)
        if found is not None:
            inner = Scan()
            _members(body, found[0], found[1], _match_items(body, found[1]), inner, False,
                     macros)
            out |= inner.bad | _all_calls(body[found[1]:_match_items(body, found[1])])
    return out


def struct_scan(parts: list) -> Scan:
    """The methods and member arrays of the structs declared at the top of ``parts`` (the
    helper code), and the names of methods elsewhere (nested or local structs)."""
    scan = Scan()
    macros = _macros(parts)
    depth = 0
    k = 0
    while k < len(parts):
        it = parts[k]
        found = _aggregate_at(parts, k) if depth == 0 else None
        if found is not None:
            close = _match_items(parts, found[1])
            _members(parts, found[0], found[1], close, scan, True, macros)
            k = close + 1
            continue
        if depth and _aggregate_at(parts, k) is not None:  # a local struct in a function
            name, brace = _aggregate_at(parts, k)
            scan.bad |= _nested_calls(parts[k:_match_items(parts, brace) + 1], scan, macros)
        depth += item_step(it) if not isinstance(it, Token) else (
            1 if it.is_punct("{") else -1 if it.is_punct("}") else 0)
        k += 1
    return scan


def checkable_methods(helpers: list, bodies: list) -> frozenset[str]:
    """The names of the methods that take the hidden parameters, from the source's helper
    code ``helpers`` (macros expanded) and the kernel body's tokens ``bodies``: every method
    of that name is a plain one of a top-level struct, and the name is only ever called."""
    scan = struct_scan(helpers)
    names = {m.name for m in scan.methods}
    if not names:
        return frozenset()
    bad = set(scan.bad) | {helpers[n].text for n, _, _, _ in definitions(helpers)}
    bad |= _nested_calls(bodies, scan, set())
    for part in (helpers, bodies):
        for k, t in enumerate(part):
            if isinstance(t, Token) and t.kind == "id" and t.text in names:
                j = _next(part, k + 1)
                if not (j < len(part) and _is_tok(part[j], "(")):
                    bad.add(t.text)  # &Acc::add, a variable or a type of that name
            elif isinstance(t, Token) and t.kind == "pp":
                bad.update(n for n in names if re.search(rf"\b{n}\b", t.text))
    return frozenset(names - bad)


def methods_in(parts: list, names: frozenset[str]) -> list[Method]:
    """The definitions in ``parts`` of the methods ``names``."""
    return [m for m in struct_scan(parts).methods if m.name in names]


def _shadowed(body: list, params: list, name: str) -> bool:
    """Whether a method declares ``name`` itself (then ``name`` there is not the member)."""
    from .debug_views import declares

    if any(isinstance(t, Token) and t.text == name for t in params):
        return True
    sig = [t for t in _code(body) if isinstance(t, Token)]
    for j, t in enumerate(sig):
        if t.kind == "id" and t.text == name and j:
            prev = sig[j - 1]
            if declares(prev) or (_is_tok(prev, "*", "&") and j > 1 and (
                    declares(sig[j - 2]) or _is_tok(sig[j - 2], "*", ","))):
                return True
    return False


def method_privates(parts: list) -> list[tuple[str, str, list[list]]]:
    """``(Struct::method, array, sizes)`` of each array a method of a top-level struct checks:
    its member arrays (named ``this->bins``) and its own private arrays, in source order.
    The list does not depend on which methods take the record, so the launcher (which reads
    the source's helper code) numbers them as the rendering does."""
    from .debug_members import member_paths
    from .debug_views import private_arrays

    scan = struct_scan(parts)
    macros = _macros(parts)
    out: list[tuple[str, str, list[list]]] = []
    for m in scan.methods:
        body = parts[m.brace + 1:m.end]
        params = parts[m.open + 1:m.close]
        for name, dims in scan.arrays.get(m.struct, {}).items():
            if not _shadowed(body, params, name):
                out.append((m.full, f"this->{name}", dims))
        names = {t.text for t in params if isinstance(t, Token) and t.kind == "id"}
        own = private_arrays([t for t in body if type(t) is Token], macros, names)
        out += [(m.full, n, d) for n, d in own.items()]
        out += [(m.full, n, d) for n, d in member_paths(  # o.bins of a const Acc& o
            parts[m.open:m.end + 1], scan.arrays, set(own)).items()]
    return out


def pass_to_methods(parts: list, names: frozenset[str], ids_of, inside: bool,
                    context_of, record: str = "pk_dbg", bare: frozenset[str] = frozenset(),
                    pointers: dict[str, tuple[int, ...]] | None = None,
                    known: dict[str, tuple] | None = None) -> list:
    """``parts`` with each call ``x.m(...)``, ``p->m(...)`` of a method in ``names`` (and each
    bare ``m(...)`` of one in ``bare``: in a method of its struct) passing ``record``, the
    work-item ``ids_of(line, inside)``, the racecheck context ``context_of(inside)`` and, for
    each pointer parameter ``pointers[m]`` lists, where its argument points (``known``: the
    caller's places, as :func:`.debug_helpers.pass_extents` takes them; unknown elsewhere)."""
    if not names:
        return parts
    from ..syntax.parts import split_top
    from .debug_helper_calls import handed_on, hidden_args

    pointers, known = pointers or {}, known or {}
    out: list = []
    depth = 0 if inside else -1
    n = 0
    while n < len(parts):
        it = parts[n]
        step = item_step(it)
        depth += step
        if not step and isinstance(it, Call) and any(isinstance(a, list) for a in it.args):
            it = Call(it.macro, tuple(
                pass_to_methods(a, names, ids_of, depth >= 0, context_of, record, bare,
                                pointers, known)
                if isinstance(a, list) else a for a in it.args), it.line, it.col)
        t = _tok(it)
        if t is not None and t.kind == "id" and t.text in names:
            prev = next((o for o in reversed(_code(out))), None)
            j = _next(parts, n + 1)
            member = _is_tok(prev, ".", "->") or (t.text in bare and not _is_tok(prev, "::"))
            if member and j < len(parts) and _is_tok(parts[j], "("):
                close = _match_items(parts, j)
                inner = pass_to_methods(parts[j + 1:close], names, ids_of, depth >= 0,
                                        context_of, record, bare, pointers, known)
                args = split_top(inner, ",") if _code(inner) else []
                slots = pointers.get(t.text, ())
                params = [("", k in slots) for k in range(len(args))]
                hidden = hidden_args(args, params, ids_of(t.line, depth >= 0), known, record,
                                     context_of(depth >= 0))
                inner = handed_on(inner, args, params, known)
                out += parts[n:j + 1] + inner + [Gen(", " if args else "")] + hidden \
                    + [parts[close]]
                n = close + 1
                continue
        out.append(it)
        n += 1
    return out


def check_method(parts: list, m: Method, names: frozenset[str], rewrite_calls,
                 order: list[tuple[str, str, list[list]]],
                 pointers: dict[str, tuple[int, ...]], places: dict[str, tuple],
                 filename: str) -> list:
    """The method ``m`` of ``parts`` (its parameter list through its closing brace) with
    the hidden parameters, its member and private arrays and its pointer parameters
    (``pointers[m.name]``: :mod:`.debug_method_pointers`) checked and its calls passing the
    record on; ``rewrite_calls(body, known)`` passes it to helpers, ``places`` says where its
    private and member arrays are (a call passes them on), ``order`` is the list of checked
    arrays (:func:`.debug_helpers.helper_private_arrays`: the fault codes)."""
    from .debug_helper_calls import check_body
    from .debug_helper_private import PRIVATE_FIRST
    from .debug_method_pointers import check_pointer_params
    from .debug_views import check_private

    slots = pointers.get(m.name, ())
    inner = parts[m.open + 1:m.close]
    hidden = Call("debug_method_params", (slots,), parts[m.at].line)
    head = [*inner, Gen(", "), hidden] if _code(inner) and not (
        len(_code(inner)) == 1 and _is_tok(_code(inner)[0], "void")) else [hidden]
    body, origins, mine, checked = check_pointer_params(parts, m, slots, filename)
    known = {**places, **mine}
    ids = [[Gen(f"pk_dbg_g{d}")] for d in range(3)]
    bare = frozenset(o.name for o in methods_in(parts, names) if o.struct == m.struct)
    body = rewrite_calls(body, known)
    body = pass_to_methods(body, names, lambda line, inside: ids, True,
                           lambda inside: Call("helper_context", ("helper", True), 0),
                           bare=bare, pointers=pointers, known=known)
    for k, (fn, name, dims) in enumerate(order):
        if fn == m.full:
            body = check_private(body, {name: dims}, PRIVATE_FIRST + k, 1, ids=ids)
    body = check_body(body, {p: mine[p][:3] for p in checked}, checked)
    return [parts[m.open], *head, *parts[m.close:m.brace + 1], *origins, *body, parts[m.end]]
