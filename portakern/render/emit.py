"""Jinja: the per-dialect templates, and the rendered kernel a launcher compiles.

The lowered kernel (:mod:`portakern.lower.lowering`) is rendered through
``templates/<target>/module.j2``. Every target folder defines the same primitive
macros in ``macros.j2``; adding a target is a folder of templates plus one launcher.
The user's own source is a template too, rendered before parsing
(:class:`~portakern.source.template.KernelTemplate`, re-exported here), whose line map gives
the ``#line`` directives written here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import KernelTypeError
from ..patterns import lazy
from ..source.template import check_constants
from ..syntax.constant_expressions import KernelTemplate
from ..syntax.language import Token
from ..targets import CANONICAL_TARGET

if TYPE_CHECKING:
    import jinja2

    from ..lower.lowering import Call, LoweredKernel

# Jinja and the lowering are imported when something is rendered, not with portakern
# (DESIGN section 4: `import portakern` within 20 ms of `import numpy`): a source with
# no Jinja syntax is its own rendering, and a launch from the disk cache renders nothing.

__all__ = ["KernelTemplate", "RenderedKernel", "render_lowered", "check_constants",
           "template_dirs", "add_template_dir", "target_environment"]

_IDENT_RE = lazy(r"[A-Za-z_]\w*")
_COMMENT_RE = lazy(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def _packaged_templates() -> Path:
    here = Path(__file__).resolve().parent.parent  # the package folder
    for candidate in (here / "templates", here.parent / "templates"):
        if (candidate / CANONICAL_TARGET / "module.j2").is_file():
            return candidate
    raise FileNotFoundError(  # pragma: no cover - a broken install
        "portakern's templates/ folder is missing; reinstall portakern")


_EXTRA_DIRS: list[Path] = []
_ENV: jinja2.Environment | None = None


def template_dirs() -> list[Path]:
    """The template search path: plugin folders first, then portakern's own."""
    return [*_EXTRA_DIRS, _packaged_templates()]


def add_template_dir(path: str | Path) -> None:
    """Put a plugin's template folder ahead of the built-in ones.

    A folder ``path/<target>/`` either adds a new target or, file by file,
    overrides templates of an existing one.
    """
    global _ENV
    p = Path(path)
    if p not in _EXTRA_DIRS:
        _EXTRA_DIRS.insert(0, p)
    _ENV = None


def target_environment() -> jinja2.Environment:
    """The Jinja environment of the dialect templates (built once)."""
    global _ENV
    if _ENV is None:
        import jinja2

        _ENV = jinja2.Environment(
            loader=jinja2.FileSystemLoader([str(d) for d in template_dirs()]),
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=True,
            autoescape=False,
        )
        from ..target_facts import facts

        # Templates read the table of target facts (math, constants) as data.
        _ENV.globals["target_facts"] = facts
    return _ENV


def lockstep_for(target: str, facts: Any) -> bool:
    """The ``lockstep`` argument of :func:`~portakern.lower.lowering.lower_kernel` on ``target``.

    True for a body whose :class:`~portakern.syntax.tree.BodyFacts` say ``lockstep`` (a
    barrier, ``@localmem``, a group or subgroup collective) on a target whose
    launcher runs a group's work-items one after another
    (:attr:`portakern.targets.TargetInfo.lockstep`): barriers become the ends of
    work-item loops.
    """
    from ..targets import target_info

    return target_info(target).lockstep and facts.lockstep


@dataclass(frozen=True)
class RenderedKernel:
    """Source for one target, with what a launcher needs to know about it."""

    target: str
    name: str
    source: str
    filename: str
    ndim: int
    params: tuple
    bindings: tuple[tuple[str, str], ...]
    extra: tuple[tuple[str, object], ...] = ()
    #: The user's source text, to quote lines in compiler errors.
    user_source: str = ""
    #: Each ``{% block %}`` of the module template rendered on its own, as
    #: (name, text): how a launcher that takes a header and a body separately
    #: (MLX's ``metal_kernel``) gets them.
    sections: tuple[tuple[str, str], ...] = ()
    #: What later stages need to know about the code, found before it was rendered
    #: (DESIGN section 7: metadata beside the source, never read back from it), as
    #: (name, plain data) pairs: ``arrays``, the fixed-size arrays the kernel declares
    #: (:func:`portakern.lower.stack_facts.declared_arrays`); ``group_bound``,
    #: :attr:`portakern.lower.lowering.LoweredKernel.group_bound` of a lockstep
    #: lowering (None otherwise); ``contract``, False for ``@kernel(contract=false)``
    #: (CUDA's launcher passes NVRTC ``--fmad=false``); ``uses_half``, whether the code
    #: uses ``half`` (or includes ``cuda_fp16.h``), so NVRTC needs the CUDA headers; and
    #: ``mlx_renames``, the ``(old, new)`` identifiers MLX's generated names would clash
    #: with. Kept in the disk cache with the source.
    meta: tuple[tuple[str, object], ...] = ()
    #: What this was rendered from, so that :meth:`variant` can render it again.
    lowered: Any = field(default=None, compare=False, repr=False)
    helpers: Any = field(default=None, compare=False, repr=False)
    #: For an entry read from the disk cache (no lowered tree): renders the same
    #: variant from the kernel, for :meth:`variant` (set by ``Kernel.variant``).
    rerender: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        # Read back from the disk cache's JSON, nested tuples come back as lists.
        object.__setattr__(self, "meta", tuple((str(k), _frozen(v)) for k, v in self.meta))

    def fact(self, name: str, default: object = None) -> object:
        """The value of :attr:`meta` ``name`` (``default`` when it has none)."""
        for key, value in self.meta:
            if key == name:
                return value
        return default

    def sources(self) -> dict[str, str]:
        """Filename -> user source, for :func:`portakern.checks.diagnostics.format_diagnostics`."""
        return {self.filename: self.user_source}

    def section(self, name: str) -> str:
        """The text of the module template's ``{% block name %}``."""
        return dict(self.sections)[name]

    def with_lowered(self) -> RenderedKernel:
        """This rendering with its lowered tree: itself, or (read from the disk cache)
        the same variant rendered from the kernel."""
        if self.lowered is None and self.rerender is not None:
            return self.rerender()
        return self

    def variant(self, **extra: object) -> RenderedKernel:
        """Render the same lowered kernel again, with other template options.

        ``template="metal/mlx.j2"`` picks another module template (still with this
        target's macros); other keywords reach the template as variables. Options
        given when this one was rendered are kept unless overridden. An entry read
        from the disk cache renders its variant from the kernel first.
        """
        base = self.with_lowered()
        if base.lowered is None:
            raise TypeError("this rendering has no lowered kernel to render again; get it "
                            "from Kernel.variant() or Kernel.rendered()")
        return render_lowered(base.lowered, base.helpers, base.target, dict(base.bindings),
                              base.filename, user_source=base.user_source,
                              **{**dict(base.extra), **extra})


def _mlx_renames(lowered: LoweredKernel, names: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """The ``mlx_renames`` fact: the kernel's identifiers MLX's generated ones would clash
    with (:func:`portakern.target_facts.mlx_renames`), from the array parameters and the
    identifiers of the lowered helpers and body, as sorted ``(old, new)`` pairs."""
    from ..target_facts import mlx_renames

    arrays = [p.name for p in lowered.params if p.pointer]
    found = mlx_renames(arrays, " ".join(sorted(names | {p.name for p in lowered.params})))
    return tuple(sorted(found.items()))


def _frozen(value: object) -> object:
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def quote_filename(filename: str) -> str:
    """``filename`` as the string literal of a ``#line`` directive.

    Quotes and backslashes are escaped, and control characters (a newline would
    end the directive and start a line of code) become octal escapes.
    """
    out = []
    for c in filename:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\{ord(c):03o}")
        elif 0xDC80 <= ord(c) <= 0xDCFF:  # a byte os.fsdecode could not decode
            out.append(f"\\{ord(c) - 0xDC00:03o}")
        elif 0xD800 <= ord(c) <= 0xDFFF:
            out.append("?")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


class _Emitter:
    """Turn parts into text, inserting #line where the user line changes."""

    def __init__(self, macros: object, type_names: dict[str, str], filename: str,
                 line_directives: bool = True, half_literals: bool = True) -> None:
        self.macros = macros
        self.type_names = type_names
        self.quoted = quote_filename(filename)
        self.line_directives = line_directives
        #: ``1.5h`` is the dialect's (TargetInfo.half_literals); else ``((half)1.5f)``.
        self.half_literals = half_literals

    def emit(self, parts: list) -> str:
        from ..syntax.parts import Call, Gen

        out: list[str] = []
        cur: int | None = None  # the line the compiler believes the current line is
        bol = True
        last = ""  # the previous identifier or number: `long long` is portakern's `long`

        def put(text: str) -> None:
            nonlocal cur, bol
            if not text:
                return
            out.append(text)
            if cur is not None:
                cur += text.count("\n")
            bol = text.endswith("\n")

        for part in parts:
            if isinstance(part, Token):
                if (self.line_directives and part.kind not in ("ws", "comment")
                        and part.line != cur):
                    if not bol:
                        put("\n")
                    out.append(f"#line {part.line} {self.quoted}\n")
                    cur = part.line
                    bol = True
                text = part.text
                if part.kind == "id" and text == "long" and last == "long":
                    continue
                if part.kind not in ("ws", "comment"):
                    last = text if part.kind in ("id", "num") else ""
                if part.kind == "id":
                    text = self.type_names.get(text, text)
                elif (part.kind == "num" and not self.half_literals and text[-1:] in ("h", "H")
                      and not text.lower().startswith("0x")):
                    text = f"(({self.type_names.get('half', 'half')}){text[:-1]}f)"
                put(text)
            elif isinstance(part, Gen):
                put(part.text)
                last = ""
            elif isinstance(part, Call):
                put(self.call(part))
                last = ""
            # the @uniform marker renders as nothing
        return "".join(out)

    def call(self, part: Call) -> str:
        args = []
        for a in part.args:
            if isinstance(a, list):
                args.append(_Emitter(self.macros, self.type_names, "", False,
                                     self.half_literals).emit(a))
            else:
                args.append(a)
        macro = getattr(self.macros, part.macro)
        return str(macro(*args))


def render_lowered(lowered: LoweredKernel, module_helpers: object, target: str,
                   bindings: dict[str, str], filename: str, *, user_source: str = "",
                   template: str | None = None,
                   renames: tuple[tuple[str, str], ...] = (), **extra: object) -> RenderedKernel:
    """Render a lowered kernel (and the module's helpers) for one target.

    ``template`` names the module template, ``<target>/module.j2`` by default; each
    of its ``{% block %}``s also comes back alone in :attr:`RenderedKernel.sections`.
    ``renames`` (``(old, new)`` pairs, e.g. the ``mlx_renames`` fact) renames those
    identifiers in the source and the sections, here where the code is written, so
    that no backend rewrites generated text.
    """
    import jinja2

    from ..lower.helper_functions import lower_helpers

    env = target_environment()
    try:
        macros = env.get_template(f"{target}/macros.j2").module
        module_template = env.get_template(template or f"{target}/module.j2")
    except jinja2.TemplateNotFound as exc:
        if template and exc.name == template:
            raise
        raise KernelTypeError(
            f"unknown target {target!r}; known targets: {', '.join(available_targets())}"
        ) from exc
    type_names: dict[str, str] = dict(getattr(macros, "type_names", {}))
    from ..targets import target_info

    half_literals = target_info(target).half_literals
    emitter = _Emitter(macros, type_names, filename, half_literals=half_literals)
    if lowered.debug:  # the subscripts a #define writes, where used (docs/debugging.md)
        from ..syntax.macros import expand_macros

        module_helpers = expand_macros(module_helpers)
    helper_parts, body_parts = _place_pointers(lowered, lower_helpers(module_helpers), target,
                                               filename)
    if lowered.debug:  # helpers' pointer parameters checked too
        from ..lower.debug_helpers import check_helpers
        from ..lower.debug_method_pointers import method_pointers
        from ..lower.debug_methods import methods_in

        names = lowered.debug_methods
        found = methods_in(helper_parts, names) if names else []
        helper_parts = check_helpers(helper_parts, filename, names,
                                     method_pointers(helper_parts, found))
    local_decls, half_bits = lowered.localmem, {}
    from ..lower.bf16_storage import BF16, bf16_variant, bf16_words, uses_bf16

    bf16 = bf16_words(bindings) if uses_bf16(lowered, [helper_parts, body_parts, *local_decls],
                                             bindings) else frozenset()
    if bf16:
        # bfloat16 is storage everywhere: 16-bit arrays, computed in float.
        helper_parts, body_parts, local_decls = bf16_variant(
            lowered, helper_parts, body_parts, list(local_decls), bindings,
            type_names.get("uint16_t", "uint16_t"))
        type_names[BF16] = "float"
    if extra.get("half_storage"):
        # A device without half arithmetic: half is storage, computed in float.
        from ..lower.half_storage import storage_variant

        helper_parts, body_parts, local_decls, half_bits = storage_variant(
            lowered, helper_parts, body_parts, bindings, list(local_decls))
    shapes = None
    if getattr(macros, "native_shapes", False) and not (lowered.lockstep or lowered.debug):
        # Shapes the native path runs in another form (portakern/lower/native_shapes.py).
        from ..lower.native_shapes import native_shapes

        body_parts, shapes = native_shapes(body_parts, lowered.params, lowered.ndim,
                                           type_names)
    helpers = emitter.emit(helper_parts)
    # The generated signature (and local memory) belong to the user's @kernel line, not
    # to the last helper line: a compiler error there must not blame a helper.
    kernel_line = f"\n#line {lowered.line} {emitter.quoted}" if lowered.line else ""
    body = emitter.emit(body_parts)
    from ..lower.stack_facts import declared_arrays, sized_local

    # The collectives' own buffers are declared by the target's macros: each declaration
    # and its fact leave the emitter together.
    from ..syntax.parts import Call

    # the rendering's #line state untouched
    aside = _Emitter(macros, type_names, filename, half_literals=half_literals)
    hidden = [aside.emit(decl) for decl in local_decls
              if decl and isinstance(decl[0], Call) and decl[0].macro != "localmem"]
    localmem = "\n".join(
        (f"#line {decl[0].line} {emitter.quoted}\n" if getattr(decl[0], "line", 0) else "")
        + emitter.emit(decl) for decl in local_decls if decl)
    resolved = []
    for p in lowered.params:
        t = bindings.get(p.type, p.type)
        if p.name in half_bits:
            p, t = replace(p, name=half_bits[p.name]), "ushort"
        elif p.pointer and p.type in bf16:
            t = "uint16_t"
        resolved.append((p, type_names.get(t, t), t))
    typedefs = [(name, type_names.get(t, t), t) for name, t in bindings.items()]
    all_text = helpers + body + localmem + " ".join(t for _, t, _ in typedefs) + " ".join(
        c for _, c, _ in resolved)
    # The identifiers the code uses (comments excluded), so templates emit only the
    # prelude pieces a kernel needs.
    names = frozenset(_IDENT_RE.findall(_COMMENT_RE.sub(" ", all_text)))
    per_param = getattr(macros, "debug_param_accessors", None)
    if lowered.debug and per_param is not None:
        # Each array parameter's checked subscript, after the helpers: an array of a
        # struct the source defines is declared only there.
        accessors = str(per_param(resolved)).strip("\n")
        if accessors:
            if lowered.line:
                quoted = quote_filename(f"<portakern debug accessors of {lowered.name}>")
                accessors = f"#line 1 {quoted}\n{accessors}"
            helpers += "\n" + accessors
    helpers += kernel_line
    uses_half = "half" in names or "__half" in names
    from ..lower.private_atomics import taken

    private = taken(lowered.private_atomics, {p.name: t for p, _, t in resolved})
    meta = (("arrays", declared_arrays(local_decls, (helper_parts, body_parts), bindings,
                                       hidden, dict(getattr(macros, "buffer_sizes", {})))),
            ("group_bound", lowered.group_bound if lowered.lockstep else None),
            ("contract", lowered.contract),
            # A helper may include the header itself.
            ("uses_half", uses_half or "cuda_fp16" in names),
            ("mlx_renames", _mlx_renames(lowered, names)),
            ("sized_local", sized_local(local_decls, bindings)),  # as rewritten: a float each
            ("private_atomics", private))
    variables = dict(
        pk=macros,
        kernel=lowered,
        params=resolved,
        typedefs=typedefs,
        helpers=helpers,
        localmem=localmem,
        body=body,
        ndim=lowered.ndim,
        names=names,
        uses_double="double" in names,
        uses_half=uses_half and not extra.get("half_storage"),
        uses_bfloat16=bool(bf16),
        uses_atomics=any(n.startswith("pk_atomic_") for n in names)
        or bool(lowered.private_atomics),
        private_atomics=private,
        shapes=shapes if shapes is not None and shapes.any else None,
        **extra,
    )
    source = module_template.render(variables)
    sections = tuple((name, "".join(block(module_template.new_context(variables))))
                     for name, block in module_template.blocks.items())
    if renames:
        from ..target_facts import rename_identifiers

        table = dict(renames)
        source = rename_identifiers(source, table)
        sections = tuple((name, rename_identifiers(text, table)) for name, text in sections)
        extra = {**extra, "renames": tuple(renames)}
    if template:
        extra = {**extra, "template": template}
    return RenderedKernel(target, lowered.name, source, filename, lowered.ndim,
                          tuple(lowered.params), tuple(sorted(bindings.items())),
                          tuple(sorted(extra.items())), user_source, sections, meta,
                          lowered, module_helpers)


def _place_pointers(lowered: LoweredKernel, helpers: list, target: str, filename: str,
                    ) -> tuple[list, list]:
    """Helpers and body with each pointer's address space, where ``target`` needs one."""
    from ..lower.pointers import place_address_spaces
    from ..targets import target_info

    spaces = target_info(target).pointer_spaces()
    # Fixed-size and launch-sized arrays alike are local memory (a launch-sized one is
    # OpenCL's `__local T* const` into the launch's buffer, Metal's threadgroup array).
    local = [decl[0].args[1] for decl in lowered.localmem
             if decl and getattr(decl[0], "macro", None) in ("localmem", "localmem_sized")]
    return place_address_spaces(spaces, helpers, lowered.rendered_body, lowered.params,
                                local, filename)


def available_targets() -> list[str]:
    """Targets that have a template folder on the search path."""
    names = set()
    for d in template_dirs():
        if d.is_dir():
            names.update(p.parent.name for p in d.glob("*/module.j2"))
    return sorted(names)
