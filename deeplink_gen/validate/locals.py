"""The names the kernel wrapper (templates/kernels/wrapper.j2) declares in its function
scope, where the op's arguments and the custom code's locals live too: a name declared
twice there does not compile; the names custom code declares there. Also: whether a
pasted expression is empty."""

from __future__ import annotations

import re

from torchgen.model import SchemaKind

from deeplink_gen import cpplex
from deeplink_gen.cpptext import referenced_names
from deeplink_gen.model import CatalogEntry
from deeplink_gen.translate.args import ArgKind, aux_name, local_name
from deeplink_gen.translate.signature import OpSignature, derived_names, wrapper_name

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
    locals -> what it is: its own locals (its device guard only where it may have one), and
    the converted forms (DIOPI handles, sizes, scalars) of what plan/kernels.call_args
    converts for *entry*."""
    out = {name: what for name, what in WRAPPER_LOCALS.items() if name != "guard" or _may_guard(sig, entry)}
    for name, kind in _converted(sig, entry):
        for local in filter(None, (local_name(name, kind), aux_name(name, kind))):
            out.setdefault(local, f"the converted form of '{name}', which the call passes")
    return out


def _may_guard(sig: OpSignature, entry: CatalogEntry) -> bool:
    """Whether the wrapper may declare its device guard (plan/kernels._guard): not where the
    entry says device_guard: false, a fact no vendor overrides, nor where the op has neither a
    tensor nor a device to guard on."""
    chosen = entry.device_guard.value if entry.device_guard is not None else True
    if chosen is False:
        return False
    return isinstance(chosen, str) or any(p.kind in (ArgKind.MUT_TENSOR, ArgKind.TENSOR)
                                          or p.cpp_type.endswith("optional<at::Device>") for p in sig.params)


def _converted(sig: OpSignature, entry: CatalogEntry) -> list[tuple[str, ArgKind]]:
    """(name, kind) of each value whose converted form the wrapper declares before its call
    (plan/kernels.call_args): the arguments and fresh returns the call passes by name, those
    whose converted form the call's expressions or the before_call and before_return code
    name (unless the code declares that form itself and lists it under locals), and the
    ins/outs/sizes locals. None with dummy_call, whose wrapper converts nothing."""
    if entry.flag("dummy_call"):
        return []
    params = {p.name: p for p in sig.params}
    fresh = {r.name for r in sig.fresh_returns if r.is_tensor}
    derived = derived_names(sig)
    texts = [a.text for a in entry.call.args] + [entry.hook("before_call") + entry.hook("before_return")]
    named = {a.text for a in entry.call.args if a.is_name}
    named |= {derived[n] for text in texts for n in referenced_names(text) if n in derived and n not in entry.locals}
    converted = [(n, ArgKind.FRESH) for n in sorted(named & fresh)]
    converted += [(n, params[n].kind) for n in sorted(named - fresh) if n in params]
    converted += [(n, ArgKind.INS) for n, _ in entry.ins] + [(n, ArgKind.OUTS) for n in entry.outs]
    return converted + [(n, ArgKind.SIZES) for n in entry.sizes]


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


# The functions of TEMPLATE_FUNCTIONS the wrapper calls unqualified after each hook (some only
# with a switch on): a name the hook's code declares hides the function from those calls.
CALLED_AFTER_HOOK = {
    "beginning": frozenset("""
        checkTensorDevice diopi_call_failure dumpArg dumpOpArgLevel on_dipu_or_ignored synchronizeIfEnable
        tensor_clone_to_host tensor_copy_host_to_device tensor_reference_or_clone_to_host""".split()),
    "before_call": frozenset("""
        diopi_call_failure dumpArg dumpOpArgLevel synchronizeIfEnable tensor_clone_to_host
        tensor_copy_host_to_device tensor_reference_or_clone_to_host""".split()),
    "before_return": frozenset({"synchronizeIfEnable"}),
}


def generated_names(sig: OpSignature, entry: CatalogEntry, key: tuple[str, str]) -> dict[str, str]:
    """The names the generated code declares in the scope that *entry*'s code text at *key*
    (("code", hook) or ("autograd", text)) is pasted into, besides the text's own, and the
    functions it calls unqualified after the text -> what each is: the wrapper's for a hook;
    for an autograd text, its forward's, its backward's or the wrapper's around the autograd
    function."""
    arguments = {p.name: f"an argument of {entry.op}" for p in sig.params}
    part, name = key
    if part == "code":
        allocated = {r.name: "a return the wrapper allocates (alloc:)" for r in sig.fresh_returns
                     if entry.alloc_for(r.name) is not None}
        return arguments | allocated | wrapper_locals(sig, entry) | _called_after_hook(entry, name)
    context = {"ctx": "the autograd context its forward and backward take"}
    if name == "forward_code":
        forward = entry.autograd.forward.value if entry.autograd.forward is not None else entry.op
        return arguments | context | {"g": INNER_LOCALS["g"],
                                      wrapper_name(forward): "the wrapper its autograd forward calls after the code"}
    if name == "wrapper_return":
        return arguments | {"result": INNER_LOCALS["result"]}
    saved = {n + "_": f"the value '{n}' its backward reads back" for n in entry.autograd.saved}
    backward = context | saved | {"grad_outputs": "the gradients its backward takes", "result": INNER_LOCALS["result"]}
    if name == "grad_code":
        backward[wrapper_name(entry.autograd.backward.value)] = "the wrapper its autograd backward calls after the code"
    return backward


def _called_after_hook(entry: CatalogEntry, hook: str) -> dict[str, str]:
    """The functions the wrapper of *entry* calls unqualified after its *hook* -> what each is."""
    called = {f: "a function its wrapper calls unqualified after the code" for f in CALLED_AFTER_HOOK[hook]}
    if hook != "before_return" and not entry.flag("dummy_call"):
        called[entry.call.function] = "the DIOPI function its wrapper calls after the code"
        if entry.flag("custom_fallback"):
            called["custom_fallback_" + wrapper_name(entry.op)] = "the custom fallback its wrapper calls after the code"
    return called


# Words that begin a statement or an expression, never a declaration's type.
_NOT_TYPES = frozenset("""
and and_eq bitand bitor break case catch co_await co_return co_yield compl continue default delete do else
const_cast dynamic_cast false for goto if new not not_eq nullptr or or_eq reinterpret_cast return sizeof
static_assert static_cast switch this throw true try typeid while xor xor_eq
""".split())
# What may follow the name a declaration declares: its initializer, its end, its parameters or
# its array bounds, or the next name it declares.
_DECLARATOR_ENDS = frozenset({"=", ";", "{", "(", "[", ","})
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
# Specifiers whose parenthesised operand belongs to no declarator: attributes, alignment.
_ATTRIBUTE_WORDS = frozenset({"__attribute__", "__declspec", "alignas"})
# Type specifiers whose parenthesised operand is an expression or a type.
_TYPEOF_WORDS = frozenset({"decltype", "__typeof__", "__typeof", "typeof"})
_CLASS_KEYS = frozenset({"struct", "class", "union", "enum"})
# Words that only a declaration begins with: after them a ( opens a parenthesised declarator
# (int (*f)(int)), where after another name it may open a call's arguments (f(x)).
_DECLARATION_WORDS = frozenset("""
auto bool char char8_t char16_t char32_t const constexpr decltype double extern float int long mutable register
short signed static struct thread_local unsigned void volatile wchar_t
""".split())
_OPENERS = {"(": ")", "[": "]", "{": "}"}


def top_level_declarations(text: str) -> list[cpplex.Token]:
    """The names *text*, code pasted into a function's scope, declares in that scope (not in a
    block nested in it, where declaring a name again is legal), read simply: at a statement's
    start, a type (names, ::, <...>, * and &, decltype(...), a class body, after attributes)
    then the name, plain, in parentheses or as a structured binding's [names], followed by
    = ; { ( [ or a comma; and each name after a comma of that declaration. Nothing for a text
    that cannot be read (which is reported as that)."""
    found: list[cpplex.Token] = []
    tokens = cpplex.tokens(text) or ()
    statement: list[str] | None = []      # the statement's tokens so far while they may be a type
    declaring = False                       # whether the statement declared a name
    class_head = False                      # whether the statement is at a class key, before its body
    k = 0
    while k < len(tokens):
        t = tokens[k].text
        following = tokens[k + 1].text if k + 1 < len(tokens) else ""
        if t in _ATTRIBUTE_WORDS and following == "(" or t == "[" and following == "[":
            k = _closing(tokens, k + 1) + (t == "[")
            if statement is not None:
                statement.append("[[")
        elif t in _TYPEOF_WORDS and following == "(" and statement is not None:
            statement.append("decltype")
            k = _closing(tokens, k + 1)
        elif t == "{" and class_head:
            k = _closing(tokens, k)
            statement, class_head = ["struct"], False
        elif t in _CLASS_KEYS and statement is not None:
            statement.append("struct")
            class_head = True
        elif class_head and t != ";":
            pass                                # the class's name and bases
        elif t in (";", "}") or t in ("{", ":") and not declaring:     # a statement's end, a block, a label
            k = _closing(tokens, k) if t == "{" else k
            declaring, statement, class_head = False, [], False
        elif statement is not None and _WORD.fullmatch(t) and t not in _DECLARATION_WORDS and _is_type(statement) \
                and _text_at(tokens, _after_attributes(tokens, k + 1)) in _DECLARATOR_ENDS:
            found.append(tokens[k])
            declaring, statement = True, None
        elif statement is not None and t == "[" and "auto" in statement and _is_type(statement):
            end = _closing(tokens, k)
            found += [tokens[j] for j in range(k + 1, end) if _WORD.fullmatch(tokens[j].text)]
            k, statement = end, None
        elif statement is not None and t == "(" and _is_type(statement) and _begins_declaration(statement) \
                and (name := _parenthesised_name(tokens, k)) is not None:
            found.append(name)
            k, declaring, statement = _closing(tokens, k), True, None
        elif t == "," and declaring:
            statement = [","]
        elif t in _OPENERS:
            k, statement = _closing(tokens, k), None
        elif statement is not None:
            statement = statement + [t] if _type_token(t) else None
        k += 1
    return found


def _closing(tokens: tuple[cpplex.Token, ...], k: int) -> int:
    """The index of the bracket that closes the one at *k* (the last token's where none does)."""
    depth = 0
    for j in range(k, len(tokens)):
        t = tokens[j].text
        depth += (t in _OPENERS) - (t in _OPENERS.values())
        if depth == 0:
            return j
    return len(tokens) - 1


def _text_at(tokens: tuple[cpplex.Token, ...], k: int) -> str:
    return tokens[k].text if k < len(tokens) else ""


def _after_attributes(tokens: tuple[cpplex.Token, ...], k: int) -> int:
    """The index of the first token from *k* on that is not in an attribute."""
    while _text_at(tokens, k) in _ATTRIBUTE_WORDS and _text_at(tokens, k + 1) == "(" \
            or _text_at(tokens, k) == "[" == _text_at(tokens, k + 1):
        k = _closing(tokens, k + 1) + (tokens[k].text == "[") + 1
    return k


def _begins_declaration(statement: list[str]) -> bool:
    """Whether *statement*, the tokens before a (, holds a word only a declaration begins with
    (outside a template's arguments, as in static_cast<int>(x)) or is a comma of a declaration."""
    angles = 0
    for t in statement:
        angles += (t == "<") - (t == ">")
        if t == "," and statement[0] == "," or not angles and t in _DECLARATION_WORDS:
            return True
    return False


def _parenthesised_name(tokens: tuple[cpplex.Token, ...], k: int) -> cpplex.Token | None:
    """The name a parenthesised declarator at *k* declares (int (*f)(int) = nullptr;), or None
    where the parentheses hold something else."""
    end = _closing(tokens, k)
    j = k + 1
    while j < end and tokens[j].text in ("*", "&", "(", "const", "volatile"):
        j += 1
    if j < end and _WORD.fullmatch(tokens[j].text) and tokens[j + 1].text in (")", "(", "[") \
            and _text_at(tokens, end + 1) in _DECLARATOR_ENDS:
        return tokens[j]
    return None


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
