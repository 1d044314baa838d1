"""Argument makers and NumPy reference models of the particle push examples
(one scalar per axis, and one ``float4`` per particle).
"""

from __future__ import annotations

import numpy as np

from .catalog import Args, Consts, Size
from .inputs import random_array, shape_flat


def particles_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                   c: Consts) -> Args:
    (n,) = shape
    return (random_array(rng, (3, n), dt), random_array(rng, (3, n), dt, -0.1, 0.1),
            dt.type(0.01), dt.type(4.0), dt.type(0.05))


def particles_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    pos, vel, dt, stiffness, damping = args
    x, v = pos.copy(), vel.copy()
    for _ in range(c["NSTEPS"]):
        v += dt * (-stiffness * x - damping * v)
        x += dt * v
    return {"pos": x, "vel": v}


def particles_shape(size: Size) -> tuple[int, ...]:
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    shape = tuple(int(s) for s in size)
    if len(shape) != 1:
        raise ValueError(f"size must be the number of particles, got {size!r}")
    return shape


def particles4_args(shape: tuple[int, ...], rng: np.random.Generator, dt: np.dtype,
                    c: Consts) -> Args:
    (n,) = shape
    pos, vel = random_array(rng, (n, 4), dt), random_array(rng, (n, 4), dt, -0.1, 0.1)
    pos[:, 3] = random_array(rng, (n,), dt, 0.5, 2.0)  # w: the mass
    vel[:, 3] = 0
    return (pos, vel, dt.type(0.01), dt.type(4.0), dt.type(0.05))


def particles4_ref(args: Args, c: Consts) -> dict[str, np.ndarray]:
    pos, vel, dt, stiffness, damping = args
    x, v = pos.copy(), vel.copy()
    k = (stiffness / x[:, 3])[:, None]
    for _ in range(c["NSTEPS"]):
        v[:, :3] += dt * (-k * x[:, :3] - damping * v[:, :3])
        x[:, :3] += dt * v[:, :3]
    return {"pos": x, "vel": v}


def particles4_shape(size: Size) -> tuple[int, ...]:
    return (int(np.prod(shape_flat(size))),)


def ndrange_particles4(args: Args) -> tuple[int, ...]:
    return (int(args[0].shape[0]),)


def ndrange_particles(args: Args) -> tuple[int, ...]:
    return (int(args[0].shape[1]),)
