"""The scans' workgroup kernels: a tile per workgroup in ``@localmem``, for GPU backends.

A GPU wants its loads coalesced (neighbouring work-items read neighbouring elements)
and many work-items, which the chunk-per-work-item kernels of
:mod:`portakern.blocks.scan` do not give it. Here a workgroup of ``WG`` work-items scans
a tile of ``WG * K`` elements:

1. the tile is loaded into ``@localmem`` with coalesced reads (item ``l`` reads elements
   ``l``, ``l + WG``, ...), and each work-item scans its ``K`` consecutive elements there;
2. the ``WG`` item totals are scanned in ``@localmem`` (Hillis and Steele: ``log2(WG)``
   rounds, each between two ``@synchronize()``), and each item combines the total of the
   items before it into its elements;
3. the tile is written back coalesced, and the group's total goes to ``gtotals``.

The group totals are then scanned (by the same scan object, recursively) and a last
kernel combines total ``g - 1`` into every element of group ``g`` (``_addback``). Past
the end of the input a tile holds copies of the last element: an inclusive scan's valid
outputs never depend on later elements, so no neutral element is needed. An exclusive
scan writes each element's predecessor (``neutral`` at a tile's start), which the
add-back turns into the group's carry, since ``carry op neutral`` is the carry.

Segmented scans keep the chunk kernels on every backend.
"""

from __future__ import annotations

#: Work-items per group, and elements per work-item, of the tile kernels.
WG = 256
K = 8
TILE = WG * K

_TILE = """
@kernel(workgroupsize=@WG@) void @NAME@_wg@SUFFIX@(T* y, T* gtotals, @X@long n) {
    @localmem T tile[@TILE@];
    @localmem T sums[@WG@];
    const long l = @index(Local, Linear);
    const long base = @index(Group, Linear) * @TILE@;
    for (int k = 0; k < @K@; ++k) {
        const long idx = base + k * @WG@ + l;
        tile[k * @WG@ + l] = @XR@[idx < n ? idx : n - 1];
    }
    @synchronize();
    T acc = tile[l * @K@];
    for (int k = 1; k < @K@; ++k) {
        acc = scan_op(acc, tile[l * @K@ + k]);
        tile[l * @K@ + k] = acc;
    }
    sums[l] = acc;
    @synchronize();
    for (long off = 1; off < @WG@; off *= 2) {
        T v = sums[l];
        if (l >= off) {
            v = scan_op(sums[l - off], v);
        }
        @synchronize();
        sums[l] = v;
        @synchronize();
    }
    if (l > 0) {
        const T carry = sums[l - 1];
        for (int k = 0; k < @K@; ++k) {
            tile[l * @K@ + k] = scan_op(carry, tile[l * @K@ + k]);
        }
    }
    @synchronize();
    for (int k = 0; k < @K@; ++k) {
        const long p = k * @WG@ + l;
        if (base + p < n) {
            y[base + p] = @WRITE@;
        }
    }
    if (l == @WG@ - 1) {
        gtotals[@index(Group, Linear)] = sums[l];
    }
}
"""

_ADDBACK = """
@kernel void @NAME@_addback(T* y, const T* gtotals, long n) {
    const long idx = @index(Global, Linear) + @TILE@;
    y[idx] = scan_op(gtotals[idx / @TILE@ - 1], y[idx]);
}
"""


def source(name: str, neutral: str | None, exclusive: bool) -> str:
    """The tile kernels (out of place and in place) and the add-back of one scan."""
    write = f"p > 0 ? tile[p - 1] : (T)({neutral})" if exclusive else "tile[p]"
    parts = []
    for suffix, x, xr in (("", "const T* x, ", "x"), ("_inplace", "", "y")):
        text = _TILE
        for key, value in (("SUFFIX", suffix), ("X", x), ("XR", xr), ("WRITE", write),
                           ("NAME", name), ("TILE", str(TILE)), ("WG", str(WG)),
                           ("K", str(K))):
            text = text.replace(f"@{key}@", value)
        parts.append(text)
    parts.append(_ADDBACK.replace("@NAME@", name).replace("@TILE@", str(TILE)))
    return "".join(parts)
