"""A DIPU check macro as a checker: `#define M(Expr) { T ret = Expr;
TORCH_CHECK(ret == OK, ...); }` and its do-while, if-throw and print-and-throw
variants say everything a checker says: the status type, the success values,
the function that turns a status into text, and what a failure does. A macro
whose condition says more than its success values (ret != X in TORCH_CHECK, an
|| getenv(...)), that tests or changes its status again, fails only under a
further condition, calls anything but a print, or whose failure does anything
else (returns a status, aborts, exits), has no checker form and stays C++."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen.commands.import_dipu.runtime.cxx import Item, SourceFile

_DECL = re.compile(r"(?:^|[{;\s])((?:::)?[A-Za-z_][\w:]*)\s+(?:C10_UNUSED\s+)?([A-Za-z_]\w*)\s*(?:C10_UNUSED\s*)?=\s*\(?\s*(\w+)\s*\)?\s*;")
_FAILS = ("TORCH_CHECK", "AT_ERROR", "TORCH_INTERNAL_ASSERT")
_MESSAGE_FREE = frozenset(("TORCH_CHECK", "AT_ERROR", "printf", "fprintf", "fflush", "to_string", "string",
                           "c_str", "runtime_error", "abort", "TORCH_INTERNAL_ASSERT", "TORCH_WARN"))


@dataclass(frozen=True)
class Macro:
    name: str
    file: SourceFile
    item: Item
    checker: dict | None         # the checker's entry, or None when the macro has no checker form
    why: str = ""                # why not, for the report

    @property
    def text(self) -> str:
        return self.file.slice(self.item)


def _strip(value: str) -> str:
    return value.removeprefix("::")


def read_macro(file: SourceFile, item: Item) -> Macro:
    """What the #define *item* of *file* is as a checker, if it is one."""
    name = item.name
    params = item.macro_params or ()
    code = file.code[item.start:item.end].replace("\\\n", " \n")
    body = code[code.index(")", code.index(name)) + 1:] if item.macro_params is not None else ""
    if len(params) != 1:
        return Macro(name, file, item, None, "it does not take one expression")
    decl = next((m for m in _DECL.finditer(body) if m.group(3) == params[0]), None)
    if decl is None:
        return Macro(name, file, item, None, "it does not keep the expression's status in a variable")
    status, var = _strip(decl.group(1)), decl.group(2)
    if status == "auto":
        return Macro(name, file, item, None, "its status type is auto")
    why = _more_than_a_check(body, var, decl.end())
    if why is not None:
        return Macro(name, file, item, None, why)
    success = _success_values(body, var)
    if success is None:
        return Macro(name, file, item, None, (
            f"it does not test its status as a checker does: TORCH_CHECK({var} == OK || {var} == ...) or "
            f"if ({var} != OK && {var} != ...) {{ the failure }}, and nothing else in the condition"))
    if re.search(r"\breturn\b", body):
        return Macro(name, file, item, None, "a failure returns from the calling function")
    if re.search(r"\babort\s*\(", body):
        return Macro(name, file, item, None, "a failure aborts the process")
    if re.search(r"\b(?:exit|_Exit|quick_exit|terminate)\s*\(", body):
        return Macro(name, file, item, None, "a failure ends the process")
    if any(f"{word}" in body for word in _FAILS):
        on_failure = "torch_check"
    elif re.search(r"\bthrow\b", body):
        on_failure = "throw"
    else:
        on_failure = "print"
    entry: dict = {"macro": name, "status": status, "success": list(dict.fromkeys(success))}
    message = next((c for c in re.finditer(rf"((?:::)?[A-Za-z_]\w*)\s*\(\s*{var}\s*\)", body)
                    if _strip(c.group(1)) not in _MESSAGE_FREE and not _is_statement(body, c)), None)
    if message is not None:
        entry["message_function"] = _strip(message.group(1))
    if on_failure != "torch_check":
        entry["on_failure"] = on_failure
    return Macro(name, file, item, entry)


# A call standing as a statement of its own: `name(...);` after a `;`, `{` or `}`.
_STATEMENT_CALL = re.compile(r"(?:^|[;{}])\s*((?:::)?[A-Za-z_][\w:]*)\s*\(")
_PRINTS = frozenset(("printf", "fprintf", "fflush", "puts", "fputs", "TORCH_CHECK", "AT_ERROR", "TORCH_WARN",
                     "TORCH_INTERNAL_ASSERT", "if", "while", "for", "switch", "return", "throw"))


def _is_statement(body: str, call: re.Match) -> bool:
    """Whether the call *call* found in *body* stands as a statement of its own (its value unused)."""
    before = body[:call.start()].rstrip()
    return (not before or before[-1] in ";{}") and body[call.end():].lstrip().startswith(";")


def _more_than_a_check(body: str, var: str, after_decl: int) -> str | None:
    """Why the macro whose status is *var* (declared before *after_decl* of *body*) does more than
    a checker says, or None: it tests its status twice (a retry, a second check), changes it, fails
    only under a further condition, or runs a function a checker would drop."""
    rest = body[after_decl:]
    tests = [m for m in re.finditer(r"\b(?:if|TORCH_CHECK|while)\s*\(", rest)
             if re.search(rf"\b{var}\b", _first_argument(rest, m.end()))]
    if len(tests) > 1:
        return f"it tests its status {var} more than once (a retry or a second check), which a checker cannot say"
    if re.search(rf"\b{var}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)", rest):
        return f"it changes its status {var} after the call, which a checker cannot say"
    for m in re.finditer(r"\bif\s*\(", rest):
        if tests and m.start() == tests[0].start():
            continue
        close = _block_end(rest, m.end() + len(_first_argument(rest, m.end())) + 1)
        if not re.match(r"\s*else\b", rest[close:]):
            return "a failure happens only under a further condition (an if without else), which a checker cannot say"
    for call in _STATEMENT_CALL.finditer(rest):
        callee = _strip(call.group(1))
        if callee not in _PRINTS and not callee.startswith("std::") and "<<" not in rest[call.start():call.end()]:
            return f"it calls {callee}(...), which a checker would drop"
    return None


def _block_end(text: str, start: int) -> int:
    """Past the statement or {...} block that begins at *start*."""
    i = len(text) - len(text[start:].lstrip())
    if text.startswith("{", i):
        depth = 0
        for j in range(i, len(text)):
            depth += (text[j] == "{") - (text[j] == "}")
            if depth == 0:
                return j + 1
        return len(text)
    end = text.find(";", i)
    return len(text) if end < 0 else end + 1


_VALUE = r"\(?\s*(?:::)?[A-Za-z_]\w*(?:::\w+)*\s*\)?"


def _success_values(body: str, var: str) -> list[str] | None:
    """The success values of a macro whose status is *var*, from the one condition that decides a
    failure: the first TORCH_CHECK's that tests *var* (var == A || var == B: it holds on success),
    else the first if's (var != A && var != B: it holds on failure; a TORCH_CHECK(false, ...) in
    its block fails). None when that condition says more or otherwise, which a checker cannot say."""
    def first(keyword: str) -> str | None:
        return next((condition for m in re.finditer(rf"\b{keyword}\s*\(", body)
                     if re.search(rf"\b{var}\b", condition := _first_argument(body, m.end()))), None)

    if (condition := first("TORCH_CHECK")) is not None:
        equal, join = "==", "||"
    elif (condition := first("if")) is not None:
        equal, join = "!=", "&&"
    else:
        return None
    values = []
    for term in _unparenthesised(condition).split(join):
        found = (re.fullmatch(rf"\s*\(?\s*{var}\s*{equal}\s*({_VALUE})\s*\)?\s*", term)
                 or re.fullmatch(rf"\s*\(?\s*({_VALUE})\s*{equal}\s*{var}\s*\)?\s*", term))
        if found is None:
            return None
        values.append(_strip(found.group(1).strip("() \t\n")))
    return list(dict.fromkeys(values))


def _first_argument(text: str, start: int) -> str:
    """The text from *start*, just inside a '(', to the ',' or ')' that ends its first argument."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}" and depth:
            depth -= 1
        elif ch in ",)" and not depth:
            return text[start:i]
    return text[start:]


def _unparenthesised(condition: str) -> str:
    """*condition* without parentheses around the whole of it."""
    condition = condition.strip()
    while condition.startswith("(") and _first_argument(condition, 1) == condition[1:-1]:
        condition = condition[1:-1].strip()
    return condition


def checker_name(macro: str, taken: set[str]) -> str:
    """A checker's name from its macro's: DIPU_CALLCUDA -> cuda, NCCL_THROW -> nccl."""
    words = [w for w in macro.lower().split("_") if w not in ("dipu", "call", "check", "throw", "ret", "assert", "")]
    base = "_".join(words) or macro.lower()
    base = re.sub(r"^call", "", base) or base
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name

