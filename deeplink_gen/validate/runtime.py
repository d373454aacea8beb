"""Checks of a vendor's runtime section: every strong DIPU symbol is
defined, every checker named is declared, every call template names only
names the function provides, and each pattern fits its function (by its row
of model/patterns.py's table)."""

from __future__ import annotations

import re

from deeplink_gen import cpplex
from deeplink_gen.errors import Diagnostics, Suggestion, did_you_mean
from deeplink_gen.interfaces.dipu import (
    COMM_FUNCTIONS, DEVICE_FUNCTIONS, DIOPI_TEST_SOURCES, FUNCTIONS, MEMCPY_KIND, STRUCT_FIELDS, SUCCESS_RETURN,
    placeholders,
)
from deeplink_gen.load.prune import gone
from deeplink_gen.model import CallTemplate, Checker, Impl, Located, RuntimeSpec
from deeplink_gen.model.patterns import PATTERNS, Part, PatternRule
from deeplink_gen.model.runtime import ImplKind
from deeplink_gen.validate.names import (
    C_KEYWORDS, DIPU_MACROS, STANDARD_MACROS, macro_name_problem, reserved_name_problem,
)

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
QUALIFIED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$")
C_TYPE = re.compile(r"^(const\s+)?((unsigned|signed|long|short)\s+)*[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*(\s*\*)*$")
_CALL = re.compile(r"^\s*([^\s(]+)\s*\((.*)\)\s*$", re.S)
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The keywords a C type name of runtime.types may be spelled with (void only as a pointer).
_TYPE_WORDS = frozenset("""bool char char8_t char16_t char32_t const double float int long short signed unsigned
                           void wchar_t""".split())
_HANDLE_TYPES = ("stream", "event", "comm", "unique_id", "handle")
# The C++ names of DIPU's device and communicator functions: deviceimpl.cpp and
# communicatorimpl.cpp define them after including vendorapi.h, so a checker macro named like
# one (a function-like macro) would expand their definitions and DIPU's declarations.
_DIPU_FUNCTION_FILES = {**{f.name: "deviceimpl.cpp" for f in DEVICE_FUNCTIONS},
                        **{f.name: "communicatorimpl.cpp" for f in COMM_FUNCTIONS}}
# A custom body is read for its comments, outside string and character literals (raw strings
# first, then names and pp-numbers, whose ' is a digit separator, no quote).
_CODE_TOKEN = re.compile(r"""(?:u8|u|U|L)?R"(?P<delim>[^()\\\s"]{0,16})\(.*?\)(?P=delim)"|"""
                         r"""[A-Za-z_$][\w$]*|\.?[0-9](?:[eEpP][+-]|[\w.]|'(?=\w))*|"""
                         r"""(?P<comment>//[^\n]*|/\*.*?\*/)|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)
# What is left of a body that does nothing: blanks, null statements and empty blocks.
_NO_CODE = re.compile(r"[\s;{}]*")
_LINE_JOIN = re.compile(r"\\[ \t\f\v]*(?:\r\n|\r|\n)")


def template_problems(t: CallTemplate, allowed: set[str]) -> list[str]:
    """Why *t* is not acceptable, given the placeholder names it may use."""
    out = []
    stripped = t.without_holes()
    depth = 0
    for ch in stripped:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            break
    if depth != 0:
        out.append(f"unbalanced parentheses in '{t.text}'")
    if "{" in stripped or "}" in stripped:
        out.append(f"stray brace in '{t.text}' (write {{{{ or }}}} for a literal brace)")
    # Read as rendered: {{ and }} are braces there (each placeholder stands for a name).
    lexical = cpplex.problem(t.expand({n: "x" for n in t.placeholders()}), expression=True) if not out else None
    if lexical is not None:
        out.append(f"'{t.text}' cannot stand as one expression: {lexical}")
    elif not t.is_call and not out and not _COMMENT.sub("", t.without_holes()).strip():
        out.append(f"an expression is required ('{t.text}' has none): write the C++ value it stands for")
    if t.is_call and not out:
        m = _CALL.match(t.text)
        if not m:
            out.append(f"'{t.text}' is not a call (expected name(arguments))")
        elif not QUALIFIED.match(m.group(1)):
            out.append(f"call name '{m.group(1)}' is not a C identifier")
        elif cpplex.problem(_CALL.match(stripped).group(2)) is not None:
            out.append(f"'{t.text}' is not one call: its first parenthesis closes before its end")
    for name in t.placeholders():
        if not IDENT.match(name):
            out.append(f"'{{{name}}}' is not a placeholder (placeholders are C identifiers)")
        elif name not in allowed:
            out.append(f"unknown parameter '{{{name}}}'{did_you_mean(name, allowed)}"
                       f" (available: {', '.join(sorted(allowed)) or 'none'})")
    return out


def _where(impl: Impl) -> tuple:
    return ("runtime", impl.function.section, "functions", impl.function.key)


def pasted_code(spec: RuntimeSpec) -> list[tuple[tuple, Located[str]]]:
    """(key path, text) of each piece of C++ the runtime section pastes as it is."""
    texts = [(("runtime", "device", "prelude"), spec.device_prelude), (("runtime", "comm", "prelude"), spec.comm.prelude),
             (("runtime", "generator", "code"), spec.generator.code), (("runtime", "vendorapi", "code"), spec.vendorapi.code)]
    texts += [(_where(impl) + ("custom",), impl.custom) for impl in spec.device_impls + spec.comm.impls]
    return [(path, text) for path, text in texts if text is not None]


def check_runtime(spec: RuntimeSpec, diags: Diagnostics, rejected: frozenset = frozenset()) -> None:
    """*rejected*: the paths the schema rejected, whose absence is not another mistake."""
    for path, text in pasted_code(spec):
        why = cpplex.problem(text.value, directives=True)     # the vendor's own files: its macros are its own
        if why is not None:
            diags.add(text.loc, path, f"this C++ cannot be pasted as it is: {why} (counted from its first line)")
    checker_names = [c.name for c in spec.checkers]
    _check_types(spec, diags)
    _check_macros(spec, diags)

    def check_ref(named: Located[str | None] | None, path: tuple) -> None:
        """A checker named where *named* was written; one not written is its section's, checked there."""
        name = named.value if named is not None else None
        if name is not None and spec.checker(name) is None and not gone(("runtime", "checkers", name), rejected):
            diags.add(named.loc, path, f"checker '{name}' is not defined under runtime.checkers",
                      Suggestion(name, checker_names))

    check_ref(spec.device_checker, ("runtime", "device", "checker"))
    check_ref(spec.comm.checker, ("runtime", "comm", "checker"))
    check_ref(spec.diopi_test.checker, ("runtime", "diopi_test", "checker"))
    for section, functions, impls, loc in (
        ("device", DEVICE_FUNCTIONS, spec.device_impls, spec.device_functions_loc),
        ("comm", COMM_FUNCTIONS, spec.comm.impls, spec.comm.functions_loc),
    ):
        have = {i.function.key for i in impls}
        for fn in functions:
            if fn.strong and fn.key not in have and not gone(("runtime", section, "functions", fn.key), rejected):
                diags.add(loc, ("runtime", section, "functions"),
                          f"strong DIPU function '{fn.key}' ({fn.signature()}) is not defined; "
                          f"write '{fn.key}: unsupported' to stub it")
    for c in spec.checkers:
        if c.message_call is not None:
            for msg in template_problems(c.message_call, set()):
                diags.add(c.message_call.loc, ("runtime", "checkers", c.name, "message_call"), msg)
    for impl in spec.device_impls + spec.comm.impls:
        _check_impl(spec, impl, diags, check_ref)
    kinds = dict(spec.memcpy_kinds)
    for impl in spec.device_impls:
        direction = MEMCPY_KIND.get(impl.function.key)
        if direction and direction not in kinds and any("kind" in t.placeholders() for t in impl.all_templates()) \
                and not gone(("runtime", "device", "memcpy_kinds", direction), rejected):
            diags.add(impl.loc, _where(impl), f"uses {{kind}} but runtime.device.memcpy_kinds has no {direction}")
    for t in spec.diopi_test.init + spec.diopi_test.finalize:
        for msg in template_problems(t, set()):
            diags.add(t.loc, "runtime.diopi_test", msg)
    for name, t in spec.diopi_test.overrides:
        fn = FUNCTIONS[DIOPI_TEST_SOURCES[name]]
        for msg in template_problems(t, placeholders(fn)):
            diags.add(t.loc, ("runtime", "diopi_test", "functions", name), msg)


def _check_types(spec: RuntimeSpec, diags: Diagnostics) -> None:
    """The handle types become `using deviceStream_t = <type>;` and the default stream
    `#define deviceDefaultStreamLiteral <constant>` (the schema has checked their spelling)."""
    types = spec.types
    for key in _HANDLE_TYPES:
        ctype = getattr(types, key)
        if ctype is None:
            continue
        words = _WORD.findall(ctype)
        keyword = next((w for w in words if w in C_KEYWORDS and w not in _TYPE_WORDS), None)
        taken = next(((w, why) for w in words if (why := _type_word_problem(w)) is not None), None)
        if keyword is not None:
            diags.add(types.loc_of(key), ("runtime", "types", key),
                      f"'{keyword}' in '{ctype}' is a C++ keyword, not a type name: write the SDK's {key} type")
        elif taken is not None:
            diags.add(types.loc_of(key), ("runtime", "types", key),
                      f"'{taken[0]}' in '{ctype}' {taken[1]}, not a type name of the SDK's: write the SDK's {key} type")
        elif "*" not in ctype and words[-1] == "void":
            diags.add(types.loc_of(key), ("runtime", "types", key),
                      f"'{ctype}' is no handle type (no value has type void): write the SDK's {key} type, "
                      "or void* for an opaque pointer")
    keyword = next((w for w in types.default_stream.split("::") if w in C_KEYWORDS and w != "nullptr"), None)
    if keyword is not None:
        diags.add(types.loc_of("default_stream"), ("runtime", "types", "default_stream"),
                  f"'{keyword}' is a C++ keyword, not an expression: write the SDK's default stream "
                  "(a constant or enumerator), or nullptr")


def _type_word_problem(word: str) -> str | None:
    """Why *word*, one name of a handle type, stands for something else than the SDK's type
    there (a phrase), or None: a macro of the standard headers or DIPU's is replaced by its
    value (`using deviceStream_t = NULL;`), and a reserved identifier is the compiler's."""
    if word in STANDARD_MACROS:
        return "is a standard C macro name"
    if word in DIPU_MACROS:
        return "is a macro DIPU defines itself"
    return reserved_name_problem(word)


def _check_macros(spec: RuntimeSpec, diags: Diagnostics) -> None:
    """Each checker defines its macro in vendorapi.h, which every runtime file includes beside
    torch's and DIPU's headers."""
    owners: dict[str, Checker] = {}
    for c in spec.checkers:     # sorted by name: the first of two with one macro keeps it
        where = ("runtime", "checkers", c.name, "macro")
        problem = macro_name_problem(c.macro)
        if problem is None and c.macro in _DIPU_FUNCTION_FILES:
            problem = (f"is the name of DIPU's runtime function {c.macro}, which the rendered "
                       f"{_DIPU_FUNCTION_FILES[c.macro]} defines after including vendorapi.h (the macro would expand it)")
        if problem is not None:
            diags.add(c.macro_loc, where, f"macro '{c.macro}' {problem}: name the checker's macro after the vendor "
                                    "(DIPU_CALL<VENDOR>)")
        elif c.macro in owners:
            diags.add(c.macro_loc, where, f"macro '{c.macro}' is also the macro of checker '{owners[c.macro].name}' "
                                    f"({owners[c.macro].loc}): each checker defines its own; rename one")
        owners.setdefault(c.macro, c)


def _check_impl(spec: RuntimeSpec, impl: Impl, diags: Diagnostics, check_ref) -> None:
    fn = impl.function
    where = _where(impl)
    check_ref(impl.checker, where + ("checker",))
    allowed = placeholders(fn)
    for name, ctype in impl.locals:
        if not IDENT.match(name):
            diags.add(impl.loc, where + ("locals", name), f"'{name}' is not a C identifier")
        elif name in allowed:
            diags.add(impl.loc, where + ("locals", name), f"local '{name}' shadows a parameter")
        if not C_TYPE.match(ctype):
            diags.add(impl.loc, where + ("locals", name), f"'{ctype}' is not a C type name")
        allowed.add(name)
    if impl.pattern is not None:
        allowed |= set(PATTERNS[impl.pattern].declares)
    # Each expression at its own key; the calls (and a pattern's call parts) at the function's.
    keyed = {t: ("fields", name) for name, t in impl.fields}
    keyed |= {t: ("set", target) for target, t in impl.sets}
    keyed |= {t: (key,) for key, t in (("return", impl.ret), ("guard", impl.guard)) if t is not None}
    for t in impl.all_templates():
        for msg in template_problems(t, allowed):
            diags.add(t.loc, where + keyed.get(t, ()), msg)
    if impl.kind is ImplKind.CUSTOM and impl.custom is not None and fn.returns != "void" \
            and cpplex.problem(impl.custom.value, directives=True) is None and not _has_code(impl.custom.value):
        diags.add(impl.custom.loc, where + ("custom",),
                  f"{fn.name} returns {fn.returns}, but this custom body is empty (or only comments): it would "
                  f"flow off its end; write its code, ending in return <{fn.returns} value>;, or use noop or unsupported")
    if impl.kind is ImplKind.CALL and impl.ret is None and fn.returns not in SUCCESS_RETURN:
        diags.add(impl.loc, where, f"{fn.name} returns {fn.returns}: add return: <expression> (or use a pattern)")
    if impl.pattern is not None:
        _check_pattern(spec, impl, PATTERNS[impl.pattern], diags)


def _has_code(body: str) -> bool:
    """Whether the C++ *body* holds anything but comments, blanks, null statements and empty
    blocks: a function returning a value whose body holds nothing flows off its end (undefined
    behaviour when DIPU calls it). Only that is refused: a body without the word return may
    still return through a macro of the vendor's (DIPU's supa SUCCL_CALL returns DICL_SUCCESS),
    or throw, and whether every path returns is the compiler's to tell (-Wreturn-type)."""
    code = _CODE_TOKEN.sub(lambda m: " " if m.group("comment") else m.group(), _LINE_JOIN.sub("", body))
    return not _NO_CODE.fullmatch(code)


def _written(impl: Impl, part: Part) -> bool:
    if part is Part.CALL:
        return bool(impl.calls)
    if part is Part.FIELDS:
        return bool(impl.fields)
    if part is Part.CALL_OR_FIELDS:
        return bool(impl.calls or impl.fields)
    return impl.template(part) is not None


def _check_pattern(spec: RuntimeSpec, impl: Impl, rule: PatternRule, diags: Diagnostics) -> None:
    """*impl* against its pattern's row of the table."""
    fn, tag = impl.function, impl.pattern.value
    where = _where(impl)
    if fn.key not in rule.functions:
        diags.add(impl.loc, where + ("pattern",), f"pattern '{tag}' applies to {', '.join(rule.functions)}, not {fn.key}")
        return
    if rule.needs is not None and not _written(impl, rule.needs):
        diags.add(impl.loc, where, f"pattern '{tag}' needs '{rule.needs.value}'")
    name = spec.checker_name(impl)
    checker = spec.checker(name)
    if rule.checker is not None:
        if checker is None and name is None:
            diags.add(impl.loc, where, f"pattern '{tag}' needs a checker")
        elif checker is not None and not getattr(checker, rule.checker.attribute):
            diags.add(checker.loc, ("runtime", "checkers", checker.name),
                      f"pattern '{tag}' (in {fn.key}) needs {rule.checker.said} on this checker")
        # a checker name that is not defined: reported where it is named
    if rule.status:
        if not impl.status_type or not C_TYPE.match(impl.status_type):
            diags.add(impl.loc, where + ("status_type",), f"{tag} needs status_type: a C type name")
        if not impl.ready:
            diags.add(impl.loc, where, f"{tag} needs ready: [status values meaning done]")
    _check_own_keys(impl, rule, diags)
    local_names = [name for name, _ in impl.locals]
    for target, value in impl.sets:
        local = target.split(".", 1)[0]
        if local not in local_names:
            diags.add(value.loc, where + ("set", target), f"'{local}' is not a local of {fn.key}",
                      Suggestion(local, local_names, " (declare it under locals:)"))
    if rule.fields is not None:
        fields = rule.fields.names or STRUCT_FIELDS[fn.returns]
        owner = rule.fields.owner or fn.returns
        for name, t in impl.fields:
            if name not in fields:
                diags.add(t.loc, where + ("fields", name), f"{owner} has no field '{name}'",
                          Suggestion(name, fields, f" (fields: {', '.join(fields)})"))
    for name in impl.sentinels + impl.ready:
        if not QUALIFIED.match(name):
            diags.add(impl.loc, where, f"'{name}' is not a C identifier")


# Each key that only one pattern reads, and that pattern.
_OWNERS = {key: pattern for pattern, rule in PATTERNS.items() for key in rule.own_keys}


def _check_own_keys(impl: Impl, rule: PatternRule, diags: Diagnostics) -> None:
    """A key another pattern reads would be ignored here."""
    written = {"set": impl.sets, "sentinels": impl.sentinels, "ready": impl.ready, "status_type": impl.status_type}
    for key, value in written.items():
        if value and key not in rule.own_keys:
            loc = impl.sets[0][1].loc if key == "set" else impl.loc
            diags.add(loc, _where(impl) + (key,), f"{key}: belongs to the {_OWNERS[key].value} pattern")
