"""Subgroup operations: the lowering of ``@laneid()``, ``@shuffle(v, lane)`` and the rest.

A *subgroup* is a run of consecutive work-items of a workgroup, by linear local
index (``@index(Local, Linear)``): a CUDA warp, a Metal SIMD-group, an OpenCL
sub-group. The position constructs (``@subgroupsize()``, ``@subgroupid()``,
``@laneid()``) are expressions; the collectives (``@shuffle``, ``@shuffle_down``,
``@shuffle_up``, ``@shuffle_xor``, ``@broadcast``, ``@subgroupreduce``) exchange
values between the lanes of a subgroup and, like ``@groupreduce``, each initialises a
declaration of its own and counts as a barrier for the convergence rule: every
work-item of the group reaches it, in group-uniform control flow, the ones outside
the ndrange included (they contribute ``T(0)``, or the identity of the reduction,
without evaluating the value).

Defined results where hardware leaves them open: a source lane outside the caller's
subgroup (negative, at least ``@subgroupsize()``, or past the end of a partial last
subgroup) gives the caller's own value; ``@shuffle_down``/``@shuffle_up``/
``@shuffle_xor`` with a negative argument too.

One ``subgroup`` primitive carries each collective to the target's template
(``templates/<target>/subgroups.j2``); on a lockstep target (the C++ path) the
collective becomes work-item loops here (:func:`lockstep`), through a buffer of one
value per work-item.
"""

from __future__ import annotations

from typing import Any

from ..syntax.language import Token, match_bracket, next_significant, significant
from ..syntax.parts import SUBGROUP, Call, Gen, UniformMark, code, is_tok, split_top
from ..syntax.vectors import VECTOR_TYPES
from ..syntax.vocabulary import COLLECTIVES, LOCKSTEP_SIZE
from .constructs import spaced

#: The lowerer these functions are handed (a :class:`portakern.lower.lowerer.Lowerer`, which
#: imports this module: the lowerer is passed down, never imported back).
Lowerer = Any

__all__ = ["POSITION", "COLLECTIVES", "CONSTRUCTS", "REDUCE_OPS", "LOCKSTEP_SIZE",
           "lower_construct", "lockstep", "construct_name"]

#: The position constructs and the target primitive each lowers to.
POSITION = {"@subgroupsize": "subgroup_size", "@subgroupid": "subgroup_id",
            "@laneid": "lane_id"}
CONSTRUCTS = frozenset(POSITION) | frozenset(COLLECTIVES)
REDUCE_OPS = ("add", "min", "max")

#: The source lane of each exchange, from the caller's lane ``pk_lane`` and the
#: argument ``pk_a`` (both int); -1 stands for "none" (the caller keeps its value).
_SOURCE = {
    "shuffle": "pk_a",
    "broadcast": "pk_a",
    "shuffle_down": "(pk_a < 0 ? -1 : pk_lane + pk_a)",
    "shuffle_up": "(pk_a < 0 ? -1 : pk_lane - pk_a)",
    "shuffle_xor": "(pk_a < 0 ? -1 : pk_lane ^ pk_a)",
}


#: What the second argument of each exchange is called (for error messages).
_ARGUMENT = {"@shuffle": "lane", "@broadcast": "lane", "@shuffle_down": "delta",
             "@shuffle_up": "delta", "@shuffle_xor": "mask"}


def construct_name(call: Call) -> str:
    """The user's spelling of a lowered collective (for error messages)."""
    op = call.args[0]
    return "@subgroupreduce" if op in REDUCE_OPS else f"@{op}"


def lower_construct(lw: Lowerer, toks: list[Token], i: int, out: list) -> int:
    """Lower the subgroup construct at ``toks[i]`` into ``out``; return the next index."""
    t = toks[i]
    lin = lw.linear(*lw.index_parts("Local", t.line, t.col))
    if t.text in POSITION:
        args, close = lw.args_of(toks, i)
        if args:
            raise lw.smap.error_at(f"{t.text}() takes no arguments", t)
        out.append(Call(POSITION[t.text], (lin,), t.line, t.col))
        return close + 1
    return _collective(lw, toks, i, out, lin)


def _collective(lw: Lowerer, toks: list[Token], i: int, out: list, lin: list) -> int:
    t = toks[i]
    reduce = t.text == "@subgroupreduce"
    usage = ("@subgroupreduce(add|min|max, value)" if reduce
             else f"{t.text}(value, {_ARGUMENT[t.text]})")
    form = (f"{t.text} must initialise a declaration of its own, as a statement every "
            f"work-item of the group reaches: 'const T r = {usage};'")
    start = len(out)
    while start > 0:
        it = out[start - 1]
        if isinstance(it, UniformMark) or is_tok(it, ";", "{", "}") or (
                isinstance(it, Token) and it.kind == "pp"):
            break
        start -= 1
    if start > 0 and isinstance(out[start - 1], UniformMark):
        raise lw.smap.error_at(
            f"{t.text} has a value per work-item (per subgroup at most): it cannot be "
            f"@uniform", out[start - 1].at)
    sig = code(out[start:])
    words = [it for it in sig[:-2] if not is_tok(it, "const", "volatile")]
    if (len(sig) < 3 or not is_tok(sig[-1], "=") or not isinstance(sig[-2], Token)
            or sig[-2].kind != "id" or not words
            or not all(isinstance(w, Token) and w.kind == "id" for w in words)):
        raise lw.smap.error_at(form, t)
    vector = next((w for w in words if w.text in VECTOR_TYPES), None)
    if vector is not None:
        raise lw.smap.error_at(
            f"{t.text} exchanges scalars, and {vector.text} is a vector type (CUDA's warp "
            f"shuffles take none): exchange each component, 'const float x = "
            f"{t.text}(v.x, ...);'", vector)
    if any(w.text == "auto" for w in words):
        raise lw.smap.error_at(
            f"{t.text} needs the result's type: write 'const T r = {usage};' instead of "
            f"'auto'", words[0])
    j = next_significant(toks, i + 1)
    if j >= len(toks) or not toks[j].is_punct("("):
        raise lw.smap.error_at(form, t)
    close = match_bracket(toks, j, lw.smap)
    args = split_top(toks[j + 1:close], ",")
    if len(args) != 2 or not all(significant(a) for a in args):
        raise lw.smap.error_at(f"{t.text} takes two arguments: {usage}", t)
    if reduce:
        op_toks = significant(args[0])
        if len(op_toks) != 1 or op_toks[0].text not in REDUCE_OPS:
            raise lw.smap.error_at(
                f"@subgroupreduce takes an operator first: add, min or max, as in {usage}",
                op_toks[0])
        op, value, arg = op_toks[0].text, lw.lower_tokens(args[1]), []
    else:
        op, value, arg = COLLECTIVES[t.text], lw.lower_tokens(args[0]), lw.lower_tokens(args[1])
    k = next_significant(toks, close + 1)
    if k >= len(toks) or not toks[k].is_punct(";"):
        raise lw.smap.error_at(form, t)
    type_parts = spaced(words)
    buf = _buffer(lw, type_parts, t)
    at = next(n for n, it in enumerate(out) if it is sig[0])
    del out[at:]
    out.append(Call(SUBGROUP, (op, type_parts, sig[-2].text, value, arg,
                               not lw.k.unsafe_indices, buf, lin, _SOURCE.get(op, "pk_lane")),
                    t.line, t.col))
    return k


def _buffer(lw: Lowerer, type_parts: list, t: Token) -> str:
    """The hidden workgroup buffer of the OpenCL fallback, one per value type."""
    key = " ".join(p.text for p in type_parts if isinstance(p, Token))
    bufs = [d[0] for d in lw.localmem if d and d[0].macro == "subgroup_buffer"]
    for call in bufs:
        if " ".join(p.text for p in call.args[0] if isinstance(p, Token)) == key:
            return call.args[1]
    name = f"pk_sg{len(bufs)}"
    lw.localmem.append([Call("subgroup_buffer", (type_parts, name), t.line, t.col)])
    return name


def lockstep(lw: Lowerer, stmt: list, call: Call) -> list:
    """A collective on a lockstep target: two loops over the group's work-items.

    The first stores each work-item's value in ``pk_sv`` (one slot per item; an item
    outside the ndrange stores zero or the identity), the second gives each item its
    result from its subgroup's slots: subgroups of :data:`LOCKSTEP_SIZE` items by
    linear local index, the last one partial when the group size is not a multiple.
    The result lives on as ``pk_priv_<name>[pk_items]``, like every variable that a
    later work-item loop reads.
    """
    op, type_parts, name, value, arg, masked, _buf, _lin, source = call.args
    lead = stmt[:next(n for n, it in enumerate(stmt) if it is call)]
    size = LOCKSTEP_SIZE
    reduce = op in REDUCE_OPS
    active: list = ([Gen(" const bool pk_active = "), *lw.active(), Gen(";")]
                    if masked else [])
    binds = lw.bindings()  # portakern.lower.lockstep: recomputed declarations and per-item arrays
    none = (Gen(f"PK_GR_ID_{op}("), *type_parts, Gen(")")) if reduce else (
        Gen("("), *type_parts, Gen(")0"))
    stored = ([Gen("pk_active ? ("), *type_parts, Gen(")("), *value, Gen(") : "), *none]
              if masked else [Gen("("), *type_parts, Gen(")("), *value, Gen(")")])
    out: list = [*lead, *type_parts, Gen(f" pk_priv_{name}[pk_items]; {{ "), *type_parts,
                 Gen(" pk_sv[pk_items];"),
                 Call("items_begin", (lw.ndim,), call.line), *active, *binds,
                 Gen(" pk_sv[pk_lid] = "), *stored, Gen(";"), Call("items_end", ())]
    if reduce:
        # Once per subgroup, in lane order, into its lane 0's slot.
        out += [Gen(f" for (long long pk_b = 0; pk_b < pk_items; pk_b += {size}) {{ "),
                *type_parts,
                Gen(f" pk_r = pk_sv[pk_b]; const long long pk_e = pk_items - pk_b < {size}"
                    f" ? pk_items : pk_b + {size}; for (long long pk_k = pk_b + 1;"
                    f" pk_k < pk_e; ++pk_k) pk_r = PK_GR_OP_{op}(pk_r, pk_sv[pk_k]);"
                    f" pk_sv[pk_b] = pk_r; }}")]
    out += [Call("items_begin", (lw.ndim,), call.line), *active, *binds,
                 Gen(f" auto& {name} = pk_priv_{name}[pk_lid]; {{"
                     f" const long long pk_lane = pk_lid % {size}, pk_base = pk_lid - pk_lane;"
                     f" const long long pk_w = pk_items - pk_base < {size} ? pk_items - pk_base"
                     f" : {size};")]
    if reduce:
        out += [Gen(f" {name} = pk_sv[pk_base];")]
    else:
        a = ([Gen("pk_active ? (int)("), *arg, Gen(") : 0")] if masked
             else [Gen("(int)("), *arg, Gen(")")])
        out += [Gen(" const int pk_a = "), *a,
                Gen(f"; const long long pk_src = {source};"
                    f" {name} = (unsigned long long)pk_src < (unsigned long long)pk_w"
                    f" ? pk_sv[pk_base + pk_src] : pk_sv[pk_lid];")]
    out += [Gen(" }"), Call("items_end", ()), Gen(" }")]
    lw.scopes[-1].append(name)
    return out
