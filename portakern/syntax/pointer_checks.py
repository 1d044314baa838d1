"""Pointer declarations checked and rewritten on the kernel's tokens, before lowering.

Split from :mod:`portakern.lower.pointers` (which places the address spaces, and
re-exports these names): :func:`check_pointer_depth` refuses pointers to pointers on
every target, :func:`check_flat_access` refuses what the parser would otherwise pass
through to a wrong result or to one target's compiler (a comma inside a flat array's
subscript, a pointer cast, an array of pointers; DESIGN section 1a, "nothing passes
silently"), and :func:`references_as_pointers` turns the reference variables of a
kernel's body into pointers for the native path's lockstep lowering. The words a
declaration may start with (:data:`QUALIFIERS`) and those that never name a type
(:data:`KEYWORDS`) are shared with the address-space pass.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import KernelSyntaxError
from .tokens import SourceMap, Token

__all__ = ["KEYWORDS", "QUALIFIERS", "check_flat_access", "check_pointer_depth",
           "references_as_pointers"]

#: Words that may come before (or between) a declaration's type and its ``*``/``&``.
QUALIFIERS = frozenset({"const", "volatile", "restrict", "unsigned", "signed", "struct"})
#: Words that start a statement but never a declaration.
KEYWORDS = frozenset({
    "return", "if", "else", "for", "while", "do", "switch", "case", "default", "break",
    "continue", "goto", "sizeof", "typedef",
})


def _declarations(sig: list[Token]) -> Iterator[tuple[Token, list[str], Token | None]]:
    """Each declarator with ``*``/``&`` marks: (its name, the marks, the token after it).

    Declarations are looked for where one may start: a statement (after ``;``, ``{``,
    ``}``), a ``for`` header, or a parameter of a function defined at the top level.
    """
    starts = {0}
    depth = 0
    params: int | None = None  # the depth inside a top-level parameter list
    for n, t in enumerate(sig):
        if t.kind != "punct":
            continue
        if t.text in "([{":
            prev = sig[n - 1] if n else None
            if t.text == "(" and prev is not None and prev.kind == "id":
                if depth == 0 and prev.text not in KEYWORDS:
                    params = 1
                    starts.add(n + 1)
                elif prev.text == "for":
                    starts.add(n + 1)
            depth += 1
        elif t.text in ")]}":
            depth -= 1
            if params is not None and depth < params:
                params = None
        if t.text in (";", "{", "}") or (t.text == "," and params == depth):
            starts.add(n + 1)
    for n in sorted(starts):
        k = n
        while k < len(sig) and sig[k].kind == "id" and sig[k].text in QUALIFIERS:
            k += 1
        if k >= len(sig) or sig[k].kind != "id" or sig[k].text in KEYWORDS:
            continue
        k += 1
        while k < len(sig) and sig[k].kind == "id" and sig[k].text in QUALIFIERS:
            k += 1
        marks = []
        while k < len(sig) and sig[k].kind == "punct" and sig[k].text in ("*", "&", "&&"):
            marks.append(sig[k].text)
            k += 1
            while k < len(sig) and sig[k].kind == "id" and sig[k].text in QUALIFIERS:
                k += 1
        if marks and k < len(sig) and sig[k].kind == "id":
            yield sig[k], marks, sig[k + 1] if k + 1 < len(sig) else None


def check_pointer_depth(tokens: list[Token], filename: str) -> None:
    """Refuse a pointer to a pointer (``T** p``, ``T*& r``) in a declaration."""
    sig = [t for t in tokens if t.kind not in ("ws", "comment", "pp")]
    for name, marks, after in _declarations(sig):
        if len(marks) < 2 and marks != ["&&"]:
            continue
        if after is None or not (after.kind == "punct"
                                 and after.text in ("=", ";", ",", ")", "[")):
            continue
        raise KernelSyntaxError(
            f"{name.text!r} is a pointer to a pointer (or a reference to one), which "
            f"portakern does not support: address spaces are inferred one level deep; "
            f"index the array itself", filename, name.line, name.col)


_CXX_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast"})
#: What the refusal of a pointer cast tells the user to write instead.
LOAD_STORE_HINT = (
    "read and write bytes of another type with @load(T, p, offset) and "
    "@store(T, p, offset, v) (byte offsets into a 'const uint8_t* p', any alignment; "
    "docs/language.md, 'Bit casts and byte-addressed loads'), reinterpret a value with "
    "@bitcast(T, v), or pass the data as an array of that type itself ('const float* x')")


def _cast_message(sig: list[Token], n: int, close: int, arrays: dict[str, str]) -> str:
    """What the refusal of the pointer cast ``sig[n:close + 1]`` says: both types, the fix."""
    spelled = " ".join(x.text for x in sig[n + 1:close]).replace(" *", "*")
    target = " ".join(x.text for x in sig[n + 1:close] if x.text not in QUALIFIERS
                      and x.text != "*")
    source = next((x for x in sig[close + 1:close + 4] if x.kind == "id"), None)
    what = "a pointer"
    if source is not None and source.text in arrays:
        what = f"a pointer, {source.text!r} ({arrays[source.text]}*),"
    name = source.text if source is not None else "p"
    return (f"'({spelled})' casts {what} to another pointer type ({spelled}), which is not "
            f"portable (OpenCL and Metal need the address space of every pointer, and "
            f"reading one type's bytes as another is undefined in C); read it with "
            f"@load({target}, {name}, offset) (write with @store({target}, {name}, offset, "
            f"v)), a byte offset; {LOAD_STORE_HINT}")


def check_flat_access(tokens: list[Token], smap: SourceMap, arrays: dict[str, str],
                      nd_arrays: frozenset[str] = frozenset()) -> None:
    """Refuse, at the user's line, what would pass through to a silent wrong result.

    * ``a[i, j]`` on a flat array (an array parameter ``T* a``, a pointer variable,
      a ``@localmem``, ``@private`` or local array; any name but the N-d array
      parameters ``nd_arrays``): the comma is C's comma operator, ``a[j]``; ``arrays``
      gives the element type of each array parameter, for the message;
    * a pointer cast ``(const float*)p`` (or ``reinterpret_cast<...*>``): the address
      space and the element type of the result are unknown to the renderer, and the
      OpenCL and Metal compilers refuse what the native path ran;
    * an array of pointers ``const float* p[2] = {a, b};``: each element would need
      its own address space;
    * a pointer-to-array variable ``float (*rows)[4] = tile;`` (a parameter of that
      form is fine): OpenCL, Metal and CUDA did not build it;
    * a function pointer ``float (*f)(float) = sq;`` (a variable, a parameter or a
      ``typedef``): OpenCL C and Metal have none.
    """
    sig = [t for t in tokens if t.kind not in ("ws", "comment", "pp")]
    for n, t in enumerate(sig):
        if t.is_punct("[") and n:
            _check_subscript(sig, n, smap, arrays, nd_arrays)
        elif t.is_punct("(") and not (n and sig[n - 1].kind == "id" and (
                sig[n - 1].text not in KEYWORDS or sig[n - 1].text == "sizeof")):
            # After a name, '(' opens a call or a parameter list ('void f(float*);'),
            # and 'sizeof(float*)' names a type: neither is a cast.
            close = _cast_close(sig, n)
            if close is not None and close + 1 < len(sig) and not (
                    sig[close + 1].kind == "punct"
                    and sig[close + 1].text in (")", ";", ",", "]", "}", "{")):
                raise smap.error_at(_cast_message(sig, n, close, arrays), t)
        elif t.kind == "id" and t.text in _CXX_CASTS and n + 1 < len(sig) \
                and sig[n + 1].is_punct("<"):
            end = next((m for m in range(n + 2, len(sig)) if sig[m].is_punct(">")), None)
            if end is not None and any(x.is_punct("*") for x in sig[n + 2:end]):
                raise smap.error_at(
                    f"{t.text}<...*> casts a pointer to another pointer type, which is not "
                    f"portable; {LOAD_STORE_HINT}", t)
    depth = 0  # of parentheses: a parameter list (`float (*b)[4]` is fine there)
    for n, t in enumerate(sig):
        declarator = t.is_punct("(") and n and sig[n - 1].kind == "id" \
            and sig[n - 1].text not in KEYWORDS and n + 4 < len(sig) \
            and sig[n + 1].is_punct("*") and sig[n + 2].kind == "id" \
            and sig[n + 3].is_punct(")")
        if declarator and sig[n + 4].is_punct("("):
            name = sig[n + 2]
            raise smap.error_at(
                f"{name.text!r} is a function pointer ('{sig[n - 1].text} "
                f"(*{name.text})(...)'), which is not portable: OpenCL C and Metal have "
                f"no pointers to functions; call the helper directly (a switch over the "
                f"helpers, or a Jinja loop that renders one kernel per helper)", name)
        if declarator and not depth and sig[n + 4].is_punct("["):
            name = sig[n + 2]
            raise smap.error_at(
                f"{name.text!r} is a pointer to an array ('{sig[n - 1].text} "
                f"(*{name.text})[...]'), which portakern does not support as a variable "
                f"(its address space and the lowering of its declaration are not inferred "
                f"on OpenCL, Metal and CUDA): index the array itself ('tile[r][c]'), or "
                f"pass it to a helper that takes 'const T b[][4]'", name)
        depth += t.is_punct("(") - t.is_punct(")")
    for name, marks, after in _declarations(sig):
        if marks == ["*"] and after is not None and after.is_punct("["):
            raise smap.error_at(
                f"{name.text!r} is an array of pointers, which portakern does not support "
                f"(OpenCL and Metal need one address space per pointer, inferred from what "
                f"it points into): pass each array as a parameter of its own and choose "
                f"with a condition, or keep offsets into one array", name)


def _closing(sig: list[Token], n: int) -> int:
    """The index of the bracket closing ``sig[n]`` (the end if it is never closed)."""
    depth = 0
    for m in range(n, len(sig)):
        if sig[m].kind == "punct" and sig[m].text in "([{":
            depth += 1
        elif sig[m].kind == "punct" and sig[m].text in ")]}":
            depth -= 1
            if depth == 0:
                return m
    return len(sig)


def _cast_close(sig: list[Token], n: int) -> int | None:
    """The ``)`` of a pointer type in parentheses at ``sig[n]`` (``(const T*)``), or None."""
    k = n + 1
    seen_type = False
    stars = 0
    while k < len(sig):
        t = sig[k]
        if t.kind == "id" and (t.text in QUALIFIERS or not seen_type) and not stars:
            seen_type = seen_type or t.text not in QUALIFIERS
        elif t.kind == "id" and t.text in QUALIFIERS and stars:
            pass
        elif t.is_punct("*") and seen_type:
            stars += 1
        elif t.is_punct(")") and stars:
            return k
        else:
            return None
        k += 1
    return None


def _check_subscript(sig: list[Token], n: int, smap: SourceMap, arrays: dict[str, str],
                     nd_arrays: frozenset[str]) -> None:
    """``name[a, b]`` (or ``name[i][a, b]``) on a flat array: refused at the comma."""
    k = n - 1
    while k >= 0 and sig[k].is_punct("]"):  # a[i][j, k]: back to the name
        depth = 0
        while k >= 0:
            if sig[k].is_punct("]"):
                depth += 1
            elif sig[k].is_punct("["):
                depth -= 1
                if depth == 0:
                    break
            k -= 1
        k -= 1
    if k < 0 or sig[k].kind != "id" or sig[k].text in KEYWORDS or sig[k].text in nd_arrays:
        return
    if sig[k].text == "auto":
        return  # auto [i, j] = ...: a structured binding
    depth = 0
    for m in range(n + 1, len(sig)):
        t = sig[m]
        if t.kind == "punct" and t.text in "([{":
            depth += 1
        elif t.kind == "punct" and t.text in ")]}":
            if depth == 0:
                return
            depth -= 1
        elif depth == 0 and t.is_punct(","):
            name = sig[k].text
            close = _closing(sig, n)
            inner = " ".join(x.text for x in sig[n + 1:close]).replace(" ,", ",")
            last = inner.rsplit(",", 1)[-1].strip()
            nd = (f"declare the parameter as an N-d array, '{arrays[name]} {name}[:, :]', "
                  f"to index it {name}[{inner}]" if name in arrays else
                  f"for a local array, one size per axis ('T {name}[4][4]') indexed "
                  f"{name}[{inner.replace(', ', '][')}]")
            raise smap.error_at(
                f"{name}[{inner}]: {name!r} is a flat array, so the comma is C's comma "
                f"operator and this means {name}[{last}]; index it with one linear index "
                f"({name}[i * n + j], the last axis fastest), or {nd}", t)


def references_as_pointers(toks: list[Token]) -> list[Token]:
    """A kernel body's tokens with each reference variable ``T& r = x[i];`` a pointer.

    For the native path's lockstep lowering (:func:`portakern.lower.lowering.lower_kernel`),
    which keeps a variable that lives across ``@synchronize`` as one element per
    work-item (``pk_priv_r[pk_items]``): C++ has no arrays of references, so the
    declaration becomes ``T* r = &(x[i]);`` and each later use of ``r`` ``(*r)``.
    """
    code = [n for n, t in enumerate(toks) if t.kind not in ("ws", "comment", "pp")]
    names: set[str] = set()
    edits: dict[int, list[Token]] = {}  # token index -> its replacement
    skip: set[int] = set()
    for c in range(len(code)):
        prev = toks[code[c - 1]] if c else None
        if prev is not None and not (prev.kind == "punct" and prev.text in ";{}"):
            continue
        k = c
        while k < len(code) and toks[code[k]].kind == "id" and toks[code[k]].text in QUALIFIERS:
            k += 1
        if k + 3 >= len(code) or toks[code[k]].kind != "id" or toks[code[k]].text in KEYWORDS:
            continue
        amp, name, eq = (toks[code[k + 1]], toks[code[k + 2]], toks[code[k + 3]])
        if not (amp.is_punct("&") and name.kind == "id" and eq.is_punct("=")):
            continue
        end = k + 4
        depth = 0
        while end < len(code) and not (depth == 0 and toks[code[end]].is_punct(";")):
            t = toks[code[end]]
            if t.kind == "punct" and t.text in "([{":
                depth += 1
            elif t.kind == "punct" and t.text in ")]}":
                depth -= 1
            end += 1
        if end >= len(code) or end == k + 4:
            continue
        names.add(name.text)
        skip.add(code[k + 2])
        edits[code[k + 1]] = [Token("punct", "*", amp.line, amp.col)]
        first = toks[code[k + 4]]
        edits[code[k + 4]] = [Token("punct", "&", first.line, first.col),
                              Token("punct", "(", first.line, first.col), first]
        semi = toks[code[end]]
        edits[code[end]] = [Token("punct", ")", semi.line, semi.col), semi]
    if not names:
        return toks
    out: list[Token] = []
    for n, t in enumerate(toks):
        if n in edits:
            out += edits[n]
        elif t.kind == "id" and t.text in names and n not in skip and not (
                out and any(o.kind == "punct" and o.text in (".", "->")
                            for o in [_last_code(out)] if o is not None)):
            out += [Token("punct", "(", t.line, t.col), Token("punct", "*", t.line, t.col), t,
                    Token("punct", ")", t.line, t.col)]
        else:
            out.append(t)
    return out


def _last_code(tokens: list[Token]) -> Token | None:
    for t in reversed(tokens):
        if t.kind not in ("ws", "comment", "pp"):
            return t
    return None
