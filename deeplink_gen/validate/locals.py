"""The names the kernel wrapper (templates/kernels/wrapper.j2) declares in its function
scope, where the op's arguments and the custom code's locals live too: a name declared
twice there does not compile; the names custom code declares there. Also: whether a
pasted expression is empty."""

from __future__ import annotations

import re

from torchgen.model import SchemaKind

from deeplink_gen import cpplex
from deeplink_gen.model import CatalogEntry
from deeplink_gen.translate.args import ArgKind, aux_name, local_name
from deeplink_gen.translate.signature import OpSignature, wrapper_name

# The wrapper's own locals, whatever the op (some only with a switch on), -> what each is.
# tests/test_kernels_validation.py checks this against the declarations of rendered wrappers.
WRAPPER_LOCALS = {
    "guard": "its device guard",
    "_": "its profiler record",
    "context": "its DIOPI context",
    "ctx": "the pointer to its DIOPI context",
    "dipuRecorder": "the profiler record of its DIOPI call",
    "ret": "the status of its DIOPI call",
}


def wrapper_locals(sig: OpSignature, entry: CatalogEntry) -> dict[str, str]:
    """Each name the wrapper of *entry* declares besides its parameters and the custom code's
    locals -> what it is: its own locals, and the converted forms (DIOPI handles, sizes,
    scalars) of the ins/outs/sizes locals and of the arguments and fresh returns the call
    passes by name (plan/kernels.call_args; a converted form the custom code declares itself
    and lists under locals is not declared again)."""
    out = dict(WRAPPER_LOCALS)
    passed = {a.text for a in entry.call.args if a.is_name}
    converted = [(p.name, p.kind) for p in sig.params if p.name in passed]
    converted += [(r.name, ArgKind.FRESH) for r in sig.fresh_returns if r.is_tensor and r.name in passed]
    converted += [(n, ArgKind.INS) for n, _ in entry.ins] + [(n, ArgKind.OUTS) for n in entry.outs]
    converted += [(n, ArgKind.SIZES) for n in entry.sizes]
    for name, kind in converted:
        for local in filter(None, (local_name(name, kind), aux_name(name, kind))):
            out.setdefault(local, f"the converted form of '{name}', which the call passes")
    return out


# The suffix of the host copy the CPU fallback and the autocompare twin make of each tensor argument.
CPU_SUFFIX = "_cpu"

# What the blocks of templates/kernels/wrapper.j2 besides the wrapper's own scope declare -> what
# each is: the CPU-fallback block (inside the wrapper), the autocompare twin and the autograd
# function (whose scopes hold the op's arguments too). inner_locals says which of them collides
# with a name of a given op; tests/test_kernels_validation.py checks this against rendered code.
INNER_LOCALS = {
    "result_cpu": "the CPU result of its CPU fallback and autocompare twin",
    "result_device": "the device result of its autocompare twin",
    "current_stream": "the stream its CPU fallback copies results back on",
    "i": "the index of its CPU fallback's loop over a tensor-list result",
    "dst": "the element of its CPU fallback's loop over a tensor-list result",
    "g": "the dispatch guard of its autograd forward",
    "result": "the result of its autograd function",
}

# Functions the kernel templates call unqualified where the op's arguments are in scope (the
# wrapper, its CPU fallback, its autocompare twin): an argument of that name hides the function.
# tests/test_kernels_validation.py checks this against rendered code.
TEMPLATE_FUNCTIONS = frozenset("""
allclose_autocompare checkTensorDevice diopi_call_failure dumpArg dumpOpArgLevel on_dipu_or_ignored printf
synchronizeIfEnable tensor_clone_to_host tensor_copy_host_to_device tensor_reference_or_clone_to_host
""".split())


def inner_locals(sig: OpSignature, entry: CatalogEntry) -> dict[str, str]:
    """Each argument or fresh-return name of *entry*'s op that a block of its wrapper, its
    autocompare twin or its autograd function declares again, or whose function it hides ->
    what that block declares or calls. Only names that collide for this op: a real op may
    name an argument dst or result where no block of its declares one."""
    names = {p.name for p in sig.params} | {r.name for r in sig.fresh_returns}
    params = {p.name for p in sig.params}
    out: dict[str, str] = {}
    for p in sig.params:
        if p.is_tensor_like and p.name + CPU_SUFFIX in names:
            out[p.name + CPU_SUFFIX] = f"the host copy of '{p.name}' its CPU fallback and autocompare twin make"
    functional = sig.kind not in (SchemaKind.out, SchemaKind.inplace)
    # What the CPU fallback copies back: the functional op's returns, the mutable arguments.
    results = [(r.name, r.is_tensor_list, r.is_tensor or r.is_tensor_list) for r in sig.returns] if functional else []
    results += [(p.name, p.kind == ArgKind.TENSOR_LIST, True) for p in sig.params if p.mutable]
    if functional and "result_cpu" in names:
        out["result_cpu"] = INNER_LOCALS["result_cpu"]
    if sig.return_type != "void" and "result_device" in params:
        out["result_device"] = INNER_LOCALS["result_device"]
    if any(tensor for _, _, tensor in results) and "current_stream" in {n for n, _, _ in results}:
        out["current_stream"] = INNER_LOCALS["current_stream"]
    for name, is_list, _ in results:
        if is_list and name in ("i", "dst"):
            out[name] = INNER_LOCALS[name]
    if entry.autograd is not None:
        for name in ("g", "result"):
            if name in params:
                out[name] = INNER_LOCALS[name]
    # Functions called unqualified: the DIOPI function, the custom fallback, the autograd forward's wrapper.
    called = {entry.call.function: "the DIOPI function its wrapper calls"}
    if entry.flag("custom_fallback"):
        called["custom_fallback_" + wrapper_name(entry.op)] = "the custom fallback its wrapper calls"
    if entry.autograd is not None:
        forward = entry.autograd.forward.value if entry.autograd.forward is not None else entry.op
        called[wrapper_name(forward)] = "the wrapper its autograd forward calls"
    called.update((f, "a function its wrapper calls unqualified") for f in TEMPLATE_FUNCTIONS)
    out.update((name, what) for name, what in called.items() if name in names)
    return out


def generated_names(sig: OpSignature, entry: CatalogEntry, key: tuple[str, str]) -> dict[str, str]:
    """The names the generated code declares in the scope that *entry*'s code text at *key*
    (("code", hook) or ("autograd", text)) is pasted into, besides the text's own -> what each
    is: the wrapper's for a hook; for an autograd text, its forward's, its backward's or the
    wrapper's around the autograd function."""
    arguments = {p.name: f"an argument of {entry.op}" for p in sig.params}
    part, name = key
    if part == "code":
        allocated = {r.name: "a return the wrapper allocates (alloc:)" for r in sig.fresh_returns
                     if entry.alloc_for(r.name) is not None}
        return arguments | allocated | wrapper_locals(sig, entry)
    context = {"ctx": "the autograd context its forward and backward take"}
    if name == "forward_code":
        return arguments | context | {"g": INNER_LOCALS["g"]}
    if name == "wrapper_return":
        return arguments | {"result": INNER_LOCALS["result"]}
    saved = {n + "_": f"the value '{n}' its backward reads back" for n in entry.autograd.saved}
    return context | saved | {"grad_outputs": "the gradients its backward takes", "result": INNER_LOCALS["result"]}


# Words that begin a statement or an expression, never a declaration's type.
_NOT_TYPES = frozenset("""
and and_eq bitand bitor break case catch co_await co_return co_yield compl continue default delete do else
false for goto if new not not_eq nullptr or or_eq return sizeof static_assert switch this throw true try
typeid while xor xor_eq
""".split())
# What may follow the name a declaration declares: its initializer, its end, its parameters or
# its array bounds, or the next name it declares.
_DECLARATOR_ENDS = frozenset({"=", ";", "{", "(", "[", ","})
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def top_level_declarations(text: str) -> list[cpplex.Token]:
    """The names *text*, code pasted into a function's scope, declares in that scope (not in a
    block nested in it, where declaring a name again is legal), read simply: at a statement's
    start, a type (names, ::, <...>, * and &, after [[attributes]]) then the name, followed by
    = ; { ( [ or a comma; and each name after a comma of that declaration. Nothing for a text
    that cannot be read (which is reported as that)."""
    found: list[cpplex.Token] = []
    depth = 0
    statement: list[str] | None = []      # the statement's tokens so far while they may be a type
    declaring = False                       # whether the statement declared a name
    tokens = cpplex.tokens(text) or ()
    for k, token in enumerate(tokens):
        t = token.text
        depth -= t in (")", "]", "}")
        following = tokens[k + 1].text if k + 1 < len(tokens) else ""
        if depth == 0:
            if t in (";", ":", "{", "}"):           # a statement's end, a label's, a block's
                declaring, statement = False, []
            elif statement is not None and _WORD.fullmatch(t) and following in _DECLARATOR_ENDS \
                    and _is_type(statement):
                found.append(token)
                declaring, statement = True, None
            elif t == "," and declaring:
                statement = [","]
            elif statement is not None and t not in (")", "]"):
                if t == "[" and following == "[":
                    statement.append("[[")
                elif _type_token(t):
                    statement.append(t)
                else:
                    statement = None
        depth += t in ("(", "[", "{")
    return found


def _is_type(statement: list[str]) -> bool:
    """Whether *statement*, the tokens before a name, can be the type of a declaration of it:
    names, ::, <...>, * and & after [[attributes]], or a comma and * or & for a further name."""
    if statement[:1] == [","]:
        return all(t in ("*", "&") for t in statement[1:])
    words = [t for t in statement if t != "[["]
    if not words or not (_WORD.fullmatch(words[0]) or words[0] == "::") or words[-1] == "::":
        return False        # a name after :: is part of a qualified name: std::swap(a, b)
    angles = 0
    for t in words:
        angles += (t == "<") - (t == ">")
        if angles < 0 or not _type_token(t) or (t == "," and not angles):
            return False
    return angles == 0


def _type_token(t: str) -> bool:
    """Whether token *t* may stand in a type: a name but a statement's or expression's word,
    ::, <, >, * and &, and the comma between a template's arguments."""
    return bool(_WORD.fullmatch(t)) and t not in _NOT_TYPES or t in ("::", "*", "&", "<", ">", ",")


# What an expression may hold and still be empty: blanks, comments, line splices.
_NOTHING = re.compile(r"\s+|/\*.*?\*/|//[^\n]*|\\\n", re.S)


def is_empty(text: str) -> bool:
    """*text* holds no C++ token: only blanks and comments (a pasted expression that is
    empty leaves a declaration or a call without its value)."""
    i = 0
    while i < len(text):
        m = _NOTHING.match(text, i)
        if m is None:
            return False
        i = m.end()
    return True
