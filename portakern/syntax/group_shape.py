"""Whether a kernel body can tell the shape of its workgroups (a fact of the body).

Read once, with the rest of :class:`portakern.syntax.tree.BodyFacts`, and used by
``CPU()``'s one default-workgroup rule (:mod:`portakern.backends.native_groups`): a
kernel that can tell gets the same groups on both CPU paths.
"""

from __future__ import annotations

from collections.abc import Iterable

from .tokens import Token

__all__ = ["SHAPE_BLIND", "reads_group_shape"]

#: The constructs that cannot tell a work-item anything about its group.
SHAPE_BLIND = frozenset({"@ndrange", "@uniform", "@print", "@vload", "@vstore", "@private"})


def reads_group_shape(tokens: Iterable[object]) -> bool:
    """Whether a body's tokens use any ``@`` construct but ``@index(Global, ...)``,
    :data:`SHAPE_BLIND` and the atomics (a group's items share nothing through them
    that the shape decides). The ``@`` constructs appear only in kernel bodies
    (helpers with barriers are inlined before the facts are read), so the body's
    tokens are all there is to read; ``unsafe_indices`` is the kernel's to add."""
    toks = [t for t in tokens if isinstance(t, Token) and t.kind not in ("ws", "comment")]
    for n, t in enumerate(toks):
        if t.kind != "at" or t.text in SHAPE_BLIND or t.text.startswith("@atomic_"):
            continue
        if t.text == "@index" and n + 2 < len(toks) and toks[n + 1].text == "(" \
                and toks[n + 2].text == "Global":
            continue
        return True
    return False
