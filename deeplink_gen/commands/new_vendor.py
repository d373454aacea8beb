"""`deeplink-gen new-vendor`: scaffold vendors/<name>.yaml (and optionally a
vendors/<name>/ folder for hand-written sources) with cookiecutter, from the
template in deeplink_gen/scaffold_template/.

Everything is checked before cookiecutter runs (names, the context against
the vendor schema), cookiecutter writes into a private temporary directory
(its replay files included), the result is validated like any vendor file,
and only then is it moved into the workspace: a failure writes nothing."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click
import jsonschema

from deeplink_gen import inputfile, output_paths, pipeline, yamlfile
from deeplink_gen.atomic import refuse_link_out, write_atomic
from deeplink_gen.commands import next_step, torch_choice
from deeplink_gen.commands.init import InitResult, ensure_layout
from deeplink_gen.errors import Diagnostic, UserError, display_path, excerpt
from deeplink_gen.interfaces.dipu import (
    COMM_FUNCTIONS, DEVICE_FUNCTIONS, UPSTREAM, UPSTREAM_DEVICE_TYPES, placeholder_names,
)
from deeplink_gen.load import schema
from deeplink_gen.load.workspace import Sources
from deeplink_gen.options import Options, Torch
from deeplink_gen.input_paths import example_vendors_dir, vendor_files
from deeplink_gen.request import Request
from deeplink_gen.plan.onboarding import plan_onboarding
from deeplink_gen.render.templating import render
from deeplink_gen.validate.names import C_KEYWORDS, length_problem, vendor_name_problem

TEMPLATE_DIR = Path(__file__).resolve().parent / "scaffold_template"
MODELINE = "# yaml-language-server: $schema=../schemas/vendor.schema.json"
RESERVED_ENUM = frozenset({"NULL", "EOF", "TRUE", "FALSE"})

ENUM_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
PREFIX_RE = re.compile(r"^[a-z][A-Za-z0-9]*$")


def refused(message: str) -> UserError:
    """Bad input to new-vendor: one line, printed as `error: <message>`."""
    return UserError([Diagnostic(None, None, message)])


@dataclass
class Result:
    name: str
    mode: str
    yaml_path: Path
    sources_dir: Path | None
    replaced: bool
    workspace: Path
    vendor: object = None               # the parsed model.Vendor
    like: str | None = None
    prefix: str | None = None


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def check_name(name: str) -> None:
    shown = repr(name)
    if not name:
        raise refused("the vendor name is empty")
    if name.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", name) \
            or "/" in name or "\\" in name or ".." in name or name in (".", "~"):
        raise refused(f"vendor name {shown} is a path; give a bare name such as acme "
                      "(the file is always vendors/<name>.yaml in the workspace, see -C)")
    problem = vendor_name_problem(name)
    if problem:
        raise refused(f"vendor name {shown} {problem}")


def check_device_type(device_type: str, name: str, others: dict[str, str]) -> None:
    shown = repr(device_type)
    if not ENUM_RE.match(device_type):
        raise refused(f"device type {shown} is not an upper-case C identifier "
                            "(A-Z, 0-9 and _, starting with a letter)")
    if device_type in RESERVED_ENUM:
        raise refused(f"device type {shown} is a standard C macro name")
    if device_type in others:
        raise refused(f"device type {shown} is already used by {others[device_type]}; "
                            "choose another with --device-type")
    owner = UPSTREAM_DEVICE_TYPES.get(device_type)
    if owner is not None and owner != name:
        raise refused(f"device type {shown} is upstream DIPU's enumerator for {owner}; "
                            "choose another with --device-type")


def check_prefix(prefix: str) -> None:
    if not PREFIX_RE.match(prefix) or prefix in C_KEYWORDS:
        raise refused(f"runtime prefix {excerpt(repr(prefix), 60)} is not a C identifier prefix such as tang or "
                      "cuda (a lower-case letter, then letters and digits)")
    too_long = length_problem(prefix)       # it names the toolkit, and the files and classes made from it
    if too_long is not None:
        raise refused(f"runtime prefix {excerpt(prefix, 60)} {too_long}")


def _other_device_types(root: Path, name: str) -> dict[str, str]:
    """device_type -> vendor file, for the workspace's other (loadable) vendor files."""
    out = {}
    for path in vendor_files(root):
        if path.stem == name:
            continue
        try:
            data = yamlfile.load(path).data
        except UserError:
            continue
        ident = data.get("vendor") if isinstance(data, dict) else None
        if isinstance(ident, dict) and isinstance(ident.get("device_type"), str):
            out.setdefault(ident["device_type"], display_path(str(path)))
    return out


# ---------------------------------------------------------------- --like: copy a vendor file

def _like_source(root: Path, like: str) -> Path:
    """vendors/<like>.yaml of the workspace, else the example of that name that ships with deeplink-gen."""
    own = root / "vendors" / f"{like}.yaml"
    if own.is_file():
        return own
    example = example_vendors_dir() / f"{like}.yaml"
    if example.is_file():
        return example
    available = sorted({p.stem for d in (root / "vendors", example_vendors_dir()) if d.is_dir()
                        for p in d.glob("*.yaml")})
    raise refused(f"--like {like}: no vendors/{like}.yaml in the workspace and no bundled example of that name "
                  f"(available: {', '.join(available) or 'none'})")


def _last_end(node) -> int:
    """Where the text of *node* ends: its last scalar, or a flow collection's closing bracket."""
    import yaml

    if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False) or not node.value:
        return node.end_mark.index
    last = node.value[-1]
    return _last_end(last[1] if isinstance(node, yaml.MappingNode) else last)


def _without_section(text: str, key_node, value_node) -> tuple[int, int]:
    """The span of a top-level section to remove: its lines, the comment lines right above
    it, and a blank line after it when one is also before it."""
    start = text.rfind("\n", 0, key_node.start_mark.index) + 1
    while start > 0:
        above = text.rfind("\n", 0, start - 1) + 1
        if not text[above:start].startswith("#"):
            break
        start = above
    end = text.find("\n", _last_end(value_node))
    end = len(text) if end < 0 else end + 1
    if text.startswith("\n", end) and text[:start].endswith("\n\n"):
        end += 1
    return start, end


def _like_text(path: Path, like: str, name: str, device_type: str) -> str:
    """The text of vendor file *path* with its identity changed, comments kept. Its
    adaptor section is left out: it lists what *like*'s DIOPI library defines (the
    adaptor would call impl::<like>:: functions the new vendor's library lacks)."""
    import yaml

    raw = inputfile.read(path)
    doc = yamlfile.loads(raw, str(path))            # file:line:col errors for a broken source
    problems = schema.check(doc, "vendor")
    if problems:
        raise UserError(problems)
    text = raw.decode("utf-8").lstrip("\ufeff")
    root_node = yaml.compose(text, Loader=yaml.SafeLoader)
    ident = next(v for k, v in root_node.value if k.value == "vendor")
    upstream = UPSTREAM.get(name)
    new = {
        "name": name,
        "device_type": device_type,
        "cmake_aliases": f"[{', '.join(upstream.cmake_aliases)}]" if upstream else f"[{name.upper()}, {name}]",
        "diopi_impl": upstream.diopi_impl if upstream else name,
        "description": json.dumps(f"{name} (scaffolded from the {like} vendor file)"),
    }
    edits = []
    for key_node, value_node in ident.value:
        if key_node.value in new:
            edits.append((value_node.start_mark.index, value_node.end_mark.index, new[key_node.value]))
    adaptor = next(((k, v) for k, v in root_node.value if k.value == "adaptor"), None)
    if adaptor is not None:
        edits.append((*_without_section(text, *adaptor), ""))
    for start, end, value in sorted(edits, reverse=True):
        text = text[:start] + value + text[end:]
    lines = text.splitlines(keepends=True)
    if lines and lines[0].startswith("# yaml-language-server:"):
        lines = lines[1:]
    note = (f"# {name}: scaffolded by `deeplink-gen new-vendor {name} --like {like}`; only the identity\n"
            f"# was changed, so the comments below may still speak of {like}.\n")
    if adaptor is not None:
        note += (f"# {like}'s adaptor section, the DIOPI functions {like}'s DIOPI library defines, was left out:\n"
                 f"# without one the adaptor wraps the functions {name}'s kernels call; `deeplink-gen import-dipu\n"
                 f"# --impl {name}=DIR` writes {name}'s from its DIOPI impl folder.\n")
    return MODELINE + "\n" + note + "".join(lines)


# ---------------------------------------------------------------- cookiecutter

def _template_keys() -> set[str]:
    return set(json.loads((TEMPLATE_DIR / "cookiecutter.json").read_text(encoding="utf-8")))


def check_context(context: dict) -> None:
    """cookiecutter silently drops top-level keys its cookiecutter.json does not
    have, and never checks values against our schema: do both here."""
    unknown = sorted(set(context) - _template_keys())
    if unknown:
        raise refused(f"internal: scaffold context keys not in cookiecutter.json: {', '.join(unknown)}")
    vendor_schema = schema.load_schema("vendor")
    identity = {"name": context["name"], "device_type": context["device_type"]}
    validator = jsonschema.Draft7Validator({**vendor_schema["definitions"]["identity"],
                                            "definitions": vendor_schema["definitions"]})
    for error in validator.iter_errors(identity):
        raise refused(f"vendor.{'.'.join(map(str, error.absolute_path))}: {error.message}")


def _cookiecutter(context: dict, tmp: Path) -> Path:
    from cookiecutter.exceptions import CookiecutterException
    from cookiecutter.main import cookiecutter
    from jinja2 import TemplateError

    check_context(context)
    config = tmp / "cookiecutter-config.yaml"
    # Keep replay files and template clones out of the user's home directory.
    config.write_text(f"replay_dir: {json.dumps(str(tmp / 'replay'))}\n"
                      f"cookiecutters_dir: {json.dumps(str(tmp / 'cookiecutters'))}\n", encoding="utf-8")
    try:
        out = cookiecutter(str(TEMPLATE_DIR), no_input=True, extra_context=context, output_dir=str(tmp / "out"),
                           config_file=str(config), accept_hooks=False)
    except (CookiecutterException, TemplateError, ValueError) as exc:
        raise refused(f"internal: the scaffold template failed: {exc}") from None
    return Path(out)


# ---------------------------------------------------------------- the command

def new_vendor(root: Path, name: str, *, like: str | None = None, device_type: str | None = None,
               runtime_prefix: str | None = None, with_sources: bool = False, force: bool = False) -> Result:
    check_name(name)
    if not root.is_dir():
        raise refused(f"workspace directory {display_path(str(root))} does not exist")
    if like is not None and runtime_prefix is not None:
        raise refused("--like and --runtime-prefix do not combine: --like copies that vendor's runtime")
    vendors = root / "vendors"
    target = vendors / f"{name}.yaml"
    if target.exists() and not force:
        raise refused(f"{display_path(str(target))} already exists; use --force to replace it")
    if target.exists() and not target.is_file():
        raise refused(f"{display_path(str(target))} exists and is not a file")
    folder = vendors / name
    if folder.exists() and not folder.is_dir():
        raise refused(f"{display_path(str(folder))} exists and is not a folder")
    # A vendor DIPU knows keeps DIPU's identity unless told otherwise, so that
    # DIPU's own lines for it need no change (see onboarding/dipu.patch).
    upstream = UPSTREAM.get(name)
    if device_type is None:
        device_type = upstream.device_type if upstream is not None else name.upper()
    check_device_type(device_type, name, _other_device_types(root, name))
    if runtime_prefix is not None:
        check_prefix(runtime_prefix)
    like_folder = like_path = None
    if like is not None:
        if like == name:
            raise refused(f"--like {like}: a vendor cannot be scaffolded from itself")
        like_path = _like_source(root, like)
        if like_path.with_suffix("").is_dir():
            like_folder = like_path.with_suffix("")
            with_sources = True
    mode = "like" if like is not None else "prefix" if runtime_prefix is not None else "stub"
    scaffold = {
        "upper": name.upper(),
        "cls": class_name(name),
        "toolkit": f"{runtime_prefix.capitalize()}RT" if runtime_prefix else f"{class_name(name)}Toolkit",
        "description": json.dumps(f"{name} accelerator"),
        "device_keys": [f.key for f in DEVICE_FUNCTIONS],
        "strong_device": [f.key for f in DEVICE_FUNCTIONS if f.strong],
        "weak_device": [f.key for f in DEVICE_FUNCTIONS if not f.strong],
        "strong_comm": [f.key for f in COMM_FUNCTIONS if f.strong],
        "placeholders": {f.key: " ".join(f"{{{n}}}" for n in placeholder_names(f)) or "none"
                         for f in DEVICE_FUNCTIONS + COMM_FUNCTIONS},
        "weak_comm": [f.key for f in COMM_FUNCTIONS if not f.strong],
        "aliases": ", ".join(upstream.cmake_aliases) if upstream is not None else f"{name.upper()}, {name}",
        "diopi_impl": upstream.diopi_impl if upstream is not None else name,
        "like_text": _like_text(like_path, like, name, device_type) if like_path is not None else "",
    }
    context = {"name": name, "device_type": device_type, "mode": mode, "runtime_prefix": runtime_prefix or "",
               "like": like or "", "with_sources": with_sources, "_scaffold": scaffold}

    tmp = Path(tempfile.mkdtemp(prefix=".deeplink-gen-new-vendor-", dir=root))
    try:
        out = _cookiecutter(context, tmp)
        made_yaml = out / "vendors" / f"{name}.yaml"
        made_folder = out / "vendors" / name
        if not with_sources:
            shutil.rmtree(made_folder)
        elif like_folder is not None:
            for src in sorted(like_folder.rglob("*")):
                rel = src.relative_to(like_folder)
                if src.is_file() and rel != Path("README.md"):
                    (made_folder / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, made_folder / rel)
        vendor = _validate(root, made_yaml, name)
        # --force on an existing folder: refresh the README, keep the vendor's own files.
        refreshed = [(src, folder / src.relative_to(made_folder)) for src in sorted(made_folder.rglob("*"))] \
            if with_sources and folder.is_dir() else []
        refreshed = [(src, dst) for src, dst in refreshed if src.is_file() and (src.name == "README.md" or not dst.exists())]
        for place in sorted({vendors, *([folder] if with_sources else []), *(dst.parent for _, dst in refreshed)}):
            refuse_link_out(root, place, display_path(str(place)))
        ensure_layout(root, InitResult(), settings=True)   # vendors/, the schemas the modeline names, the torch
        sources_dir = None
        if with_sources:
            sources_dir = folder
            if folder.is_dir():
                for src, dst in refreshed:          # a link there is replaced, not written through
                    write_atomic(dst, src.read_bytes(), within=root)
            else:
                made_folder.replace(folder)
        replaced = target.exists()
        made_yaml.replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Result(name, mode, target, sources_dir, replaced, root, vendor, like=like, prefix=runtime_prefix)


def _validate(root: Path, path: Path, name: str):
    """The scaffolded file at *path*, checked as `deeplink-gen validate --vendor NAME`
    checks it once it is vendors/NAME.yaml; only its own problems are reported
    (a broken catalog is validate's business, not the scaffold's)."""
    shown = root / "vendors" / f"{name}.yaml"
    sources = Sources(root, {shown: inputfile.read(path).decode("utf-8")})
    ws, problems = pipeline.examine(Request(root, (name,), Options()), _torch(root), sources=sources)
    own = [d for d in problems if d.is_error and d.loc is not None and d.loc.file == str(shown)]
    if own:
        raise UserError(own)
    return ws.vendor(name)


def _torch(root: Path) -> Torch:
    """The workspace's torch: deeplink-gen.yaml's, else DIPU's newest, which new-vendor writes
    there. A deeplink-gen.yaml torch without an op table is validate's business (it names
    that line): the scaffold is checked with DIPU's newest then."""
    from deeplink_gen.interfaces.dipu import SUPPORTED_TORCHS

    try:
        return torch_choice.choose(root, None, default=SUPPORTED_TORCHS[-1])
    except UserError:
        return torch_choice.of_version(SUPPORTED_TORCHS[-1])


# ---------------------------------------------------------------- what to do next

def next_steps(result: Result, prog: str) -> str:
    v = result.vendor
    build = v.build
    toolkit = build.toolkit if build is not None else None
    root_var = toolkit.root_vars[0] if toolkit is not None and toolkit.root_vars else "SDK_ROOT"
    return render("scaffold/next_steps.txt.j2", r=result, prog=prog, like=result.like, prefix=result.prefix,
                  yaml_path=display_path(str(result.yaml_path)),
                  sources_dir=display_path(str(result.sources_dir)) if result.sources_dir else None,
                  c=plan_onboarding(v, output_paths.kernels_cmake_from_csrc()), root_var=root_var,
                  alias=v.cmake_aliases[0], device_type=v.device_type)


def main(root: Path, name: str, **scaffold) -> None:
    """`new-vendor NAME`: the scaffold written, then what to do with it."""
    result = new_vendor(root, name, **scaffold)
    click.echo(next_steps(result, next_step.prog(root)), nl=False)
    _upstream_note(name, scaffold.get("like"))
    next_step.show(f"fill in vendors/{name}.yaml (step 1), then {next_step.prog(root)} validate --vendor {name}")


def _upstream_note(name: str, like: str | None) -> None:
    """A new vendor named as one DIPU has its own folder for: --into replaces DIPU's files there."""
    from deeplink_gen.interfaces.dipu import DIPU_COMMIT

    if name not in UPSTREAM or like is not None:
        return
    bundled = (example_vendors_dir() / f"{name}.yaml").is_file()
    click.echo(f"warning: DIPU {DIPU_COMMIT[:8]} has a vendor/{name}/ of its own: render --vendor {name} --into "
               f"replaces its vendorapi.h, deviceimpl.cpp and the other files this vendor renders with these, whose "
               f"runtime functions are `unsupported` until you fill them in, and leaves DIPU's other files there"
               + (f"; `new-vendor {name} --like {name} --force` starts from deeplink-gen's own {name} vendor instead"
                  if bundled else "; pick another name for a new device"), err=True)
