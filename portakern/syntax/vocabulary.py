"""Words of the kernel language that the syntax stage must know by name.

The statement tree (:mod:`portakern.syntax.tree`) marks subgroup collectives as
their own nodes, so it needs their names; their lowering lives in
:mod:`portakern.lower.subgroups`, which reads the same table. The lockstep subgroup size
is here too: the backends' limits report it without loading the lowering.
"""

from __future__ import annotations

__all__ = ["COLLECTIVES", "LOCKSTEP_SIZE"]

#: The collectives and the operation the ``subgroup`` primitive receives
#: (``@subgroupreduce`` passes its operator, add, min or max, instead).
COLLECTIVES = {"@shuffle": "shuffle", "@shuffle_down": "shuffle_down",
               "@shuffle_up": "shuffle_up", "@shuffle_xor": "shuffle_xor",
               "@broadcast": "broadcast", "@subgroupreduce": "reduce"}

#: The subgroup size where portakern chooses it: the C++ path's lockstep loops and
#: OpenCL devices without ``cl_khr_subgroups`` (the local-memory fallback).
LOCKSTEP_SIZE = 32
