"""Address spaces for pointers and references: inferred, never written by the author.

DESIGN section 1: pointer variables into arrays (``const T* row = x + i * n;``) and
helpers taking array, local-memory or reference parameters are part of the portable
subset, and the renderer infers each pointer's address space. CUDA and the native
C++ path need nothing (one flat address space, C++ references); OpenCL C and Metal
need an address space on every pointer, and OpenCL C has no references. This module
is one pass over the lowered parts of a kernel body and its helpers, run by
:func:`portakern.render.emit.render_lowered`, which hands it the target's
:class:`~portakern.targets.AddressSpaces` (its words, whether it has references and
overloading; :meth:`~portakern.targets.TargetInfo.pointer_spaces`):

* where each pointer comes from: an array parameter is global memory (a read-only one
  is ``input``: Metal's MLX puts inputs of fewer than 8 elements in ``constant``
  memory, others in ``device`` memory), a ``@localmem`` array is local memory, any
  other variable is private memory; a pointer variable or reference takes the space
  of what it is initialised (or first assigned) with;
* a pointer (or reference) declaration gets that space's word (OpenCL ``__global
  __local __private``, Metal ``device threadgroup thread``; Metal spells an ``input``
  pointer ``decltype(&x[0])``, which is right for either launch);
* a helper with pointer or reference parameters is rendered once per combination
  of the address spaces it is called with, like C++ template instances: on OpenCL
  each copy is renamed (``dot_pk_gl`` for global, local) and the calls with it, on
  Metal the copies are overloads of the user's name (an ``input`` argument makes both
  a ``device`` and a ``constant`` overload);
* OpenCL C has no references: a reference parameter ``uint& a`` becomes a pointer
  ``__private uint* a``, each use ``a`` becomes ``(*a)`` and each call passes
  ``&(arg)``; a reference variable ``T& r = x[i];`` the same.

On every target, a reference variable that the lowering declares apart from its value
(``T& r;`` hoisted above a masked segment of a kernel with barriers) becomes a pointer
the same way: C++ has no reference without a value. The native path's lockstep
lowering keeps variables that live across a barrier as arrays, so it gets its
references as pointers before lowering (:func:`references_as_pointers`).

Pointers to pointers are refused (:func:`check_pointer_depth`) on every target.
Both token-level passes live in :mod:`portakern.syntax.pointer_checks` (re-exported here).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass, field

from ..errors import KernelSyntaxError
from ..syntax.language import Token
from ..syntax.parts import Call, Gen
from ..syntax.pointer_checks import KEYWORDS, QUALIFIERS
from ..targets import AddressSpaces

__all__ = ["place_address_spaces"]

#: Letters of the renamed OpenCL copies of a helper (``dot_pk_gl``).
_LETTER = {"__global": "g", "__local": "l", "__private": "p", "__constant": "c"}
#: Address-space words a target escape may have written itself.
_SPELLED = frozenset({"device", "threadgroup", "thread", "constant", "__global", "__local",
                      "__private", "__constant", "global", "local", "private"})

_GEN_TOKEN_RE = re.compile(r"\s*(?:(?P<id>[A-Za-z_]\w*)|(?P<num>\d\w*)|"
                           r"(?P<punct>->|&&|\|\||[^\sA-Za-z_0-9]))")


@dataclass
class _Item:
    """One token of the flat view of a part list."""

    kind: str  # id, num, punct, call, str
    text: str
    at: int  # index of the part it comes from
    user: bool  # a user Token (may be edited on its own)


def _flat(parts: list) -> list[_Item]:
    out: list[_Item] = []
    for n, p in enumerate(parts):
        if isinstance(p, Token):
            if p.kind in ("ws", "comment", "pp"):
                continue
            array = getattr(p, "array", "")  # debug mode's (&grid[0][0]): an lvalue of grid
            out.append(_Item(p.kind, array or p.text, n, not array))
        elif isinstance(p, Gen):
            for m in _GEN_TOKEN_RE.finditer(p.text):
                kind = m.lastgroup or "punct"
                out.append(_Item(kind, m.group(kind), n, False))
        elif isinstance(p, Call) and p.macro in ("checked", "local_read", "local_write",
                                                  "local_update", "race_read", "race_write",
                                                  "race_update"):
            # Debug mode's bounds-checked (initchecked, racechecked) element x[i]: an lvalue of x.
            out += [_Item("id", str(p.args[0]), n, False), _Item("punct", "[", n, False),
                    _Item("punct", "]", n, False)]
        elif isinstance(p, Call):
            out.append(_Item("call", p.macro, n, False))
    return out


def _match(items: list[_Item], k: int) -> int:
    depth = 0
    for n in range(k, len(items)):
        if items[n].kind == "punct" and items[n].text in "([{":
            depth += 1
        elif items[n].kind == "punct" and items[n].text in ")]}":
            depth -= 1
            if depth == 0:
                return n
    return len(items) - 1


def _is(item: _Item | None, *texts: str) -> bool:
    return item is not None and item.kind in ("punct", "id") and item.text in texts


@dataclass
class _Edits:
    before: dict[int, list] = field(default_factory=dict)
    after: dict[int, list] = field(default_factory=dict)
    replace: dict[int, list] = field(default_factory=dict)

    def apply(self, parts: list, lo: int = 0, hi: int | None = None) -> list:
        """``parts[lo:hi]`` with the edits made."""
        out: list = []
        for n in range(lo, len(parts) if hi is None else hi):
            p = parts[n]
            out += self.before.get(n, [])
            out += self.replace.get(n, [p])
            out += self.after.get(n, [])
        return out


@dataclass
class _Helper:
    """A helper function of the module: where it is, and its pointer parameters."""

    name: str
    start: int  # part index of its function_prefix
    end: int  # part index of its closing '}' (or ';' of a prototype)
    #: (parameter name, is a reference, part index of its first token, part index of
    #: its '*' or '&', its position among the parameters).
    pointers: list[tuple[str, bool, int, int, int]]
    body: tuple[int, int] | None  # part indices of '{' and '}'
    name_at: int


class _Placer:
    def __init__(self, spaces: AddressSpaces, filename: str, helpers: list) -> None:
        self.spaces = spaces
        self.flat = spaces.flat
        self.words = dict(spaces.words)
        #: Part indices of names that are assigned a reference's target (``r = &(x)``).
        self.bound_at: set[int] = set()
        self.filename = filename
        self.helper_parts = helpers
        self.helpers = {h.name: h for h in _find_helpers(helpers)}
        #: helper name -> the space combinations it is called with, in first-use order.
        self.wanted: dict[str, list[tuple[str, ...]]] = {}

    # -- errors -----------------------------------------------------------------
    def error(self, message: str, parts: list, item: _Item) -> KernelSyntaxError:
        p = parts[item.at]
        line, col = (p.line, p.col) if isinstance(p, Token) else (1, 1)
        return KernelSyntaxError(message, self.filename, line, col)

    # -- spaces -------------------------------------------------------------------
    def space_of(self, items: list[_Item], env: dict[str, str], *, lvalue: bool) -> str | None:
        """The space of a pointer expression (``lvalue``: of the object an lvalue names)."""
        k = 0
        while k < len(items):
            it = items[k]
            if _is(it, "["):
                k = _match(items, k) + 1
                continue
            if it.kind == "id" and it.text not in QUALIFIERS and it.text not in KEYWORDS:
                nxt = items[k + 1] if k + 1 < len(items) else None
                if _is(nxt, "("):  # a call: its result is not the object
                    k = _match(items, k + 1) + 1
                    continue
                if _is(nxt, ".", "->") and not lvalue:
                    return None
                if it.text in env:
                    return env[it.text]
                if lvalue or _is(items[k - 1] if k else None, "&"):
                    return self.words["private"]
            k += 1
        return None

    # -- one body -------------------------------------------------------------------
    def walk(self, parts: list, items: list[_Item], env: dict[str, str], edits: _Edits,
             refs: set[str], statements: bool = True) -> None:
        """Place the spaces of the declarations and helper calls in ``items``.

        A primitive's code arguments (``@groupreduce``'s value, a checked subscript's
        index) are walked too (``statements`` False: expressions, no declarations), so a
        helper called there gets its copy and the call its name.
        """
        self.bound_at = set()  # part indices of this body only
        starts = {0} if statements else set()
        for n, it in enumerate(items if statements else ()):
            if _is(it, ";", "{", "}"):
                starts.add(n + 1)
            elif _is(it, "(") and n and _is(items[n - 1], "for"):
                starts.add(n + 1)
            elif it.kind == "call":  # a statement primitive (debug's `race_clear`) ends one
                starts.add(n + 1)
        n = 0
        while n < len(items):
            it = items[n]
            if isinstance(parts[it.at], Call) and (n == 0 or items[n - 1].at != it.at):
                self.call_arguments(parts, it.at, env, edits, refs)
            if n in starts:
                array = _private_array(items, n)
                if array is not None:
                    env[array] = self.words["private"]
                end = self.declaration(parts, items, n, env, edits, refs)
                if end is not None:
                    n = end
                    continue
            if it.kind == "id" and it.user and it.text in refs and it.at not in self.bound_at \
                    and not _is(items[n - 1] if n else None, ".", "->"):
                edits.replace[it.at] = [_at(parts[it.at], f"(*{it.text})")]
            if (not self.flat and it.kind == "id" and it.text in self.helpers
                    and n + 1 < len(items)
                    and _is(items[n + 1], "(") and self.helpers[it.text].pointers):
                self.call(parts, items, n, env, edits)
            n += 1

    def call_arguments(self, parts: list, at: int, env: dict[str, str], edits: _Edits,
                       refs: set[str]) -> None:
        """The primitive ``parts[at]`` with its code arguments placed, where they change."""
        call, bound = parts[at], self.bound_at
        args, changed = [], False
        for a in call.args:
            if isinstance(a, list) and a:
                sub = _Edits()
                self.walk(a, _flat(a), env, sub, refs, statements=False)
                placed = sub.apply(a)
                changed = changed or placed != a
                a = placed
            args.append(a)
        self.bound_at = bound
        if changed:
            edits.replace[at] = [dataclasses.replace(call, args=tuple(args))]

    def declaration(self, parts: list, items: list[_Item], n: int, env: dict[str, str],
                    edits: _Edits, refs: set[str]) -> int | None:
        """A pointer or reference declaration starting at ``items[n]``; its end, or None."""
        k = n
        while k < len(items) and _is(items[k], *QUALIFIERS):
            k += 1
        if k >= len(items) or items[k].kind != "id" or items[k].text in KEYWORDS \
                or not items[k].user:
            return None
        k += 1
        while k < len(items) and _is(items[k], *QUALIFIERS):
            k += 1
        stars = k
        while k < len(items) and _is(items[k], "*", "&", "&&"):
            k += 1
        if k == stars:
            return None
        marks = [items[m].text for m in range(stars, k)]
        while k < len(items) and _is(items[k], *QUALIFIERS):
            k += 1
        if k + 1 >= len(items) or items[k].kind != "id" or not _is(items[k + 1], "=", ";", ","):
            return None
        name = items[k]
        if len(marks) > 1 or marks[0] == "&&":
            raise self.error(
                f"{name.text!r} is a pointer to a pointer (or a reference to one), which "
                f"portakern does not support: address spaces are inferred one level deep; "
                f"index the array itself", parts, name)
        reference = marks[0] == "&"
        # What it points into: its initializer, or its first assignment.
        bound: _Item | None = None
        value: list[_Item] | None
        initialised = _is(items[k + 1], "=")
        if initialised:
            stop = k + 2
            while stop < len(items) and not _is(items[stop], ";", ","):
                if _is(items[stop], "(", "[", "{"):
                    stop = _match(items, stop)
                stop += 1
            value = items[k + 2:stop]
        else:
            bound, value = _first_assignment(items, k + 2, name.text)
        if self.flat and (not reference or initialised):
            return None  # nothing to do where every pointer is alike
        space = self.space_of(value, env, lvalue=reference) if value is not None else None
        if space is None and self.flat:
            space = ""
        if space is None:
            raise self.error(
                f"cannot infer the address space of {name.text!r} (OpenCL and Metal need "
                f"one): initialise it from an array parameter, a @localmem array or a "
                f"variable (const T* p = x + i;)", parts, name)
        env[name.text] = space
        first = items[n]
        word, decl = self.word(space)
        if decl is not None:
            edits.replace[first.at] = [_at(parts[first.at], decl + " ")]
            for m in range(n + 1, k):
                if items[m].user:
                    edits.replace[items[m].at] = []
        elif word:
            edits.before.setdefault(first.at, []).append(_at(parts[first.at], word + " "))
        # A reference becomes a pointer where OpenCL C has none, where the lowering
        # declared it apart from its value (no C++ reference can be), and where its type
        # is spelled by decltype (a Metal input).
        if reference and (not self.spaces.references or not initialised
                          or decl is not None):
            if decl is None:
                edits.replace[items[stars].at] = [Gen("*")]
            if value:
                edits.before.setdefault(value[0].at, []).append(_at(parts[value[0].at], "&("))
                edits.after.setdefault(value[-1].at, []).append(Gen(")"))
            if bound is not None:
                self.bound_at.add(bound.at)
            refs.add(name.text)
        return k + 1

    def word(self, space: str) -> tuple[str, str | None]:
        """The qualifier for ``space`` and, for a Metal input, the whole declared type."""
        if space.startswith("input:"):
            return "device", f"decltype(&{space[6:]}[0])"
        return space, None

    def call(self, parts: list, items: list[_Item], n: int, env: dict[str, str],
             edits: _Edits) -> None:
        helper = self.helpers[items[n].text]
        close = _match(items, n + 1)
        args: list[list[_Item]] = [[]]
        depth = 0
        for it in items[n + 2:close]:
            if _is(it, "(", "[", "{"):
                depth += 1
            elif _is(it, ")", "]", "}"):
                depth -= 1
            if depth == 0 and _is(it, ","):
                args.append([])
            else:
                args[-1].append(it)
        spaces = []
        for pname, reference, _, _, index in helper.pointers:
            if index >= len(args) or not args[index]:
                return  # a wrong call: the compiler says so
            arg = args[index]
            space = self.space_of(arg, env, lvalue=reference)
            if space is None:
                raise self.error(
                    f"cannot infer the address space of argument {index + 1} of "
                    f"{helper.name}() (parameter {pname!r}): pass an array parameter, a "
                    f"@localmem array, a pointer variable or a variable", parts, arg[0])
            spaces.append(space)
            if reference and not self.spaces.references:
                edits.before.setdefault(arg[0].at, []).append(_at(parts[arg[0].at], "&("))
                edits.after.setdefault(arg[-1].at, []).append(Gen(")"))
        key = tuple(spaces)
        for concrete in self.expand(key):
            wanted = self.wanted.setdefault(helper.name, [])
            if concrete not in wanted:
                wanted.append(concrete)
        if not self.spaces.overloads:
            edits.replace[items[n].at] = [_renamed(parts[items[n].at], _mangle(helper.name, key))]

    def expand(self, key: tuple[str, ...]) -> list[tuple[str, ...]]:
        """The concrete copies a call needs (a Metal input: device and constant)."""
        choices = [self.spaces.input_spaces if s.startswith("input:") else (s,) for s in key]
        return [tuple(c) for c in itertools.product(*choices)]

    # -- the module -------------------------------------------------------------------
    def kernel_env(self, params: list, local: list[str]) -> dict[str, str]:
        env: dict[str, str] = {}
        for p in params:
            if p.pointer:
                env[p.name] = (f"input:{p.name}" if p.const and self.spaces.input_spaces
                               else self.words["input" if p.const else "global"])
        for name in local:
            env[name] = self.words["local"]
        return env

    def place_body(self, parts: list, env: dict[str, str]) -> list:
        edits = _Edits()
        self.walk(parts, _flat(parts), dict(env), edits, set())
        return edits.apply(parts)

    def place_helpers(self) -> list:
        parts = self.helper_parts
        ordered = sorted(self.helpers.values(), key=lambda h: h.start)
        copies: dict[str, list] = {}
        # Callers come after their callees: walk from the last helper back, so each
        # helper knows every combination it is called with before it is copied.
        for h in reversed(ordered):
            if h.body is None:
                copies[h.name] = [] if h.pointers else parts[h.start:h.end + 1]
                continue
            if not h.pointers:
                copies[h.name] = self.copy(h, ())
                continue
            done: list[tuple[str, ...]] = []
            out: list = []
            while len(done) < len(self.wanted.get(h.name, [])):
                key = self.wanted[h.name][len(done)]
                done.append(key)
                out += self.copy(h, key) + [Gen("\n")]
            copies[h.name] = out
        result: list = []
        n = 0
        by_start = {h.start: h for h in ordered}
        while n < len(parts):
            at = by_start.get(n)
            if at is None:
                result.append(parts[n])
                n += 1
                continue
            result += copies[at.name]
            n = at.end + 1
        return result

    def copy(self, h: _Helper, key: tuple[str, ...]) -> list:
        """One copy of helper ``h`` for the spaces ``key`` of its pointer parameters."""
        parts = self.helper_parts
        edits = _Edits()
        env: dict[str, str] = {}
        refs: set[str] = set()
        for (pname, reference, first, amp, _), space in zip(h.pointers, key, strict=True):
            env[pname] = space
            edits.before.setdefault(first, []).append(_at(parts[first], space + " "))
            if reference and not self.spaces.references:
                edits.replace[amp] = [Gen("*")]
                refs.add(pname)
        if key and not self.spaces.overloads:
            edits.replace[h.name_at] = [_renamed(parts[h.name_at], _mangle(h.name, key))]
        assert h.body is not None
        lo, hi = h.body
        items = [it for it in _flat(parts) if lo < it.at < hi]
        self.walk(parts, items, env, edits, refs)
        return edits.apply(parts, h.start, h.end + 1)


def _at(part: object, text: str) -> object:
    """Generated ``text`` placed at the user's token ``part``.

    As a token of the same line, it sits after the ``#line`` directive the renderer
    writes before ``part``, never split from it by one (``device`` / ``#line`` / ``T``).
    """
    if isinstance(part, Token):
        return Token("punct", text, part.line, part.col)
    return Gen(text)


def _renamed(part: object, name: str) -> object:
    """The user's token ``part`` spelled ``name`` (it keeps its line for ``#line``)."""
    if isinstance(part, Token):
        return dataclasses.replace(part, text=name)
    return Gen(name)


def _mangle(name: str, key: tuple[str, ...]) -> str:
    return f"{name}_pk_" + "".join(_LETTER.get(s, "g") for s in key)


def _private_array(items: list[_Item], n: int) -> str | None:
    """The name a ``T name[...]`` declaration at ``items[n]`` declares, or None."""
    k = n
    while k < len(items) and _is(items[k], *QUALIFIERS):
        k += 1
    if k + 2 < len(items) and items[k].kind == "id" and items[k].text not in KEYWORDS \
            and items[k + 1].kind == "id" and _is(items[k + 2], "["):
        return items[k + 1].text
    return None


def _first_assignment(items: list[_Item], k: int, name: str,
                      ) -> tuple[_Item | None, list[_Item] | None]:
    """The name and value of the first ``name = value`` after ``items[k]``."""
    for m in range(k, len(items) - 1):
        if items[m].kind == "id" and items[m].text == name and _is(items[m + 1], "=") \
                and not _is(items[m - 1], ".", "->"):
            stop = m + 2
            while stop < len(items) and not _is(items[stop], ";", ","):
                if _is(items[stop], "(", "[", "{"):
                    stop = _match(items, stop)
                stop += 1
            return items[m], items[m + 2:stop]
    return None, None


def _find_helpers(parts: list) -> list[_Helper]:
    """The helper functions of lowered helper parts (each starts at ``function_prefix``)."""
    items = _flat(parts)
    found = []
    for n, it in enumerate(items):
        if it.kind != "call" or it.text != "function_prefix":
            continue
        k = n + 1
        while k < len(items) and not _is(items[k], "("):
            k += 1
        if k >= len(items) or items[k - 1].kind != "id":
            continue
        name = items[k - 1]
        close = _match(items, k)
        pointers = []
        params: list[list[_Item]] = [[]]
        depth = 0
        for p in items[k + 1:close]:
            if _is(p, "(", "[", "{"):
                depth += 1
            elif _is(p, ")", "]", "}"):
                depth -= 1
            if depth == 0 and _is(p, ","):
                params.append([])
            else:
                params[-1].append(p)
        for index, param in enumerate(params):
            marks = [p for p in param if _is(p, "*", "&", "&&")]
            ids = [p for p in param if p.kind == "id"]
            rows = next((m for m, p in enumerate(param) if _is(p, "[")), None)
            if not marks and rows and param[rows - 1].kind == "id" \
                    and not any(_is(p, ":") for p in param):
                # `T b[][4]` (array_parameters_as_pointers made `T b[]` a pointer): a
                # pointer to rows, `T (*b)[4]`, which takes its space like any pointer.
                marks, ids = [param[rows]], [p for p in param[:rows] if p.kind == "id"]
            if not marks or not ids or any(p.text in _SPELLED for p in ids):
                continue  # not a pointer, or a target escape spelled its space out
            if len(marks) > 1 or marks[0].text == "&&":
                raise KernelSyntaxError(
                    f"parameter {ids[-1].text!r} of {name.text}() is a pointer to a pointer "
                    f"(or a reference to one), which portakern does not support: address "
                    f"spaces are inferred one level deep")
            pointers.append((ids[-1].text, marks[0].text == "&", param[0].at, marks[0].at,
                             index))
        after = close + 1
        start = _template_start(items, n, it.at)  # each copy takes its `template <...>`
        if after < len(items) and _is(items[after], "{"):
            end = _match(items, after)
            found.append(_Helper(name.text, start, items[end].at, pointers,
                                 (items[after].at, items[end].at), name.at))
        elif after < len(items):
            found.append(_Helper(name.text, start, items[after].at, pointers, None, name.at))
    return found


def _template_start(items: list[_Item], n: int, at: int) -> int:
    """The part index of the ``template`` of a ``template <...>`` header just before the
    function prefix ``items[n]``, else ``at`` (the prefix's)."""
    if n == 0 or not _is(items[n - 1], ">", ">>"):
        return at
    depth = 0
    for k in range(n - 1, -1, -1):
        if _is(items[k], ">", ">>"):
            depth += 1 if items[k].text == ">" else 2
        elif _is(items[k], "<"):
            depth -= 1
            if depth == 0:
                ok = k > 0 and items[k - 1].kind == "id" and items[k - 1].text == "template"
                return items[k - 1].at if ok else at
    return at


def place_address_spaces(spaces: AddressSpaces, helpers: list, body: list, params: list,
                         local: list[str], filename: str) -> tuple[list, list]:
    """The helper and body parts of a kernel with every pointer's address space placed.

    ``params`` are the kernel's parameters, ``local`` the names of its ``@localmem``
    arrays. Returns ``(helpers, body)`` for :func:`portakern.render.emit.render_lowered`.
    """
    placer = _Placer(spaces, filename, helpers)
    body = placer.place_body(body, placer.kernel_env(params, local))
    return (helpers if placer.flat else placer.place_helpers()), body
