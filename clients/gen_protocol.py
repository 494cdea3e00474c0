#!/usr/bin/env python3
"""Generate the clients' protocol bindings from the protocol's JSON Schema.

The executor protocol has one source: the Rust message types (src/external), from which
``api/protocol.schema.json`` is derived (schemars, JSON Schema 2020-12). This script reads
that file and writes

- ``clients/python/retrylab/_protocol.py``: a ``TypedDict`` per message, the field tables the
  client validates the simulator's messages with, the error codes, the protocol version;
- ``clients/node/src/protocol.ts``: the same as TypeScript types and tables.

Both outputs are committed. ``--check`` writes nothing and exits 1 when a committed output
differs from what the schema generates (CI runs it), so the clients cannot drift from the
Rust types. Python 3.11 standard library only; the output is a function of the schema's
bytes alone (no time, no path, no hash order).

Usage::

    python3 clients/gen_protocol.py            # regenerate both files
    python3 clients/gen_protocol.py --check    # exit 1 on drift (CI)
    python3 clients/gen_protocol.py --root DIR # another tree (tests): DIR/api/..., DIR/clients/...

The field tables use one small, language-neutral description of a JSON value (a "spec"),
the schema's validation keywords reduced to what the protocol uses:

- ``types``: the JSON types allowed (``integer``, ``number``, ``string``, ``boolean``,
  ``null``, ``array``, ``object``); absent: any value;
- ``min``, ``max``: an integer's bounds (from ``minimum``/``maximum``, or the ``format``:
  ``uint32`` is 0..2^32-1);
- ``enum``: the values allowed (``enum``, ``const``, a ``oneOf`` of consts);
- ``items``: every element of an array; ``tuple``: an array of exactly these elements;
- ``values``: every value of an object used as a map (``additionalProperties``);
- ``fields``: an object with named fields, each ``{"required": bool, "spec": spec}``.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_PATH = "api/protocol.schema.json"
PYTHON_OUT = "clients/python/retrylab/_protocol.py"
TS_OUT = "clients/node/src/protocol.ts"
GENERATOR = "clients/gen_protocol.py"

#: The integer ranges of schemars' ``format`` values.
FORMAT_RANGES = {
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
    "uint64": (0, 2**64 - 1),
    "uint": (0, 2**64 - 1),
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "int": (-(2**63), 2**63 - 1),
}
#: The largest integer a JavaScript number holds exactly.
JS_MAX_SAFE = 2**53 - 1

JSON_TYPES = ("integer", "number", "string", "boolean", "null", "array", "object")
#: Keywords that only document: ignored wherever they appear.
ANNOTATIONS = {"description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"}
#: The directions, as the schema names them, and the names the outputs give their tables.
DIRECTIONS = (("ToExec", "TO_EXEC"), ("FromExec", "FROM_EXEC"))
ERROR_CODE_DEF = "ErrorCode"


class SchemaError(Exception):
    """The schema has a shape this generator does not translate (a new keyword, a variant
    without its ``type`` const...): fail loudly rather than generate a wrong table."""


# --- reading the schema ------------------------------------------------------------------------


@dataclass
class Field:
    name: str
    required: bool
    spec: dict[str, Any]
    description: str


@dataclass
class Message:
    kind: str  # the `type` const
    description: str
    fields: list[Field]  # without `type`

    @property
    def type_name(self) -> str:
        return pascal(self.kind) + "Message"


@dataclass
class Named:
    """A ``$defs`` entry the messages refer to: a struct or an enum, named in the types."""

    name: str
    description: str
    spec: dict[str, Any]
    fields: list[Field] = field(default_factory=list)


@dataclass
class Protocol:
    version: int
    title: str
    directions: dict[str, list[Message]]
    named: dict[str, Named]
    error_codes: list[tuple[int, str, str]]  # number, name, meaning


def pascal(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-\s]+", snake) if part)


def upper_snake(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_").upper()


def one_line(text: str) -> str:
    return " ".join(text.split())


class Reader:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.named: dict[str, Named] = {}

    def ref_name(self, ref: str) -> str:
        prefix = "#/$defs/"
        if not ref.startswith(prefix) or ref[len(prefix):] not in self.defs:
            raise SchemaError(f"unsupported or dangling $ref {ref!r} (only {prefix}NAME)")
        return ref[len(prefix):]

    def spec(self, node: Any, where: str, stack: tuple[str, ...] = ()) -> dict[str, Any]:
        """The spec of a schema node; named definitions are inlined (and noted in
        ``self.named`` for the types), recursion is refused."""
        if node is True or node == {}:
            return {}
        if not isinstance(node, dict):
            raise SchemaError(f"{where}: a schema is an object or true, not {node!r}")
        if "$ref" in node:
            name = self.ref_name(node["$ref"])
            if name in stack:
                raise SchemaError(f"{where}: recursive definition {name} (the clients' tables inline)")
            spec = self.spec(self.defs[name], f"$defs/{name}", stack + (name,))
            self.note_named(name, spec)
            extra = {k: v for k, v in node.items() if k != "$ref" and k not in ANNOTATIONS}
            if extra:
                raise SchemaError(f"{where}: $ref beside {sorted(extra)}")
            return dict(spec, **{"$name": name})
        unknown = set(node) - ANNOTATIONS - {
            "type", "format", "minimum", "maximum", "enum", "const", "oneOf", "anyOf", "items",
            "prefixItems", "minItems", "maxItems", "properties", "required", "additionalProperties",
            "$schema", "$defs", "x-protocol-version",
        }
        if unknown:
            raise SchemaError(f"{where}: unsupported keywords {sorted(unknown)}")
        alternatives = node.get("oneOf", node.get("anyOf"))
        if alternatives is not None:
            return self.union(node, alternatives, where, stack)
        spec: dict[str, Any] = {}
        types = node.get("type")
        if isinstance(types, str):
            types = [types]
        if "const" in node:
            spec["enum"] = [node["const"]]
        elif "enum" in node:
            spec["enum"] = list(node["enum"])
        if types is None and "enum" in spec:
            types = sorted({json_type(v) for v in spec["enum"]}, key=JSON_TYPES.index)
        if types is not None:
            for t in types:
                if t not in JSON_TYPES:
                    raise SchemaError(f"{where}: unknown type {t!r}")
            spec["types"] = list(types)
            if "integer" in types or "number" in types:
                low, high = FORMAT_RANGES.get(node.get("format", ""), (None, None))
                low = node.get("minimum", low)
                high = node.get("maximum", high)
                if low is not None:
                    spec["min"] = low
                if high is not None:
                    spec["max"] = high
            if "array" in types:
                if "prefixItems" in node:
                    spec["tuple"] = [self.spec(s, f"{where}[{i}]", stack) for i, s in enumerate(node["prefixItems"])]
                elif "items" in node:
                    spec["items"] = self.spec(node["items"], f"{where}[]", stack)
            if "object" in types:
                if "properties" in node:
                    required = set(node.get("required", []))
                    spec["fields"] = {
                        name: {"required": name in required, "spec": self.spec(s, f"{where}.{name}", stack)}
                        for name, s in node["properties"].items()
                    }
                    if node.get("additionalProperties") is False:
                        spec["closed"] = True
                else:
                    extra = node.get("additionalProperties", True)
                    if extra is not True:
                        spec["values"] = self.spec(extra, f"{where}{{}}", stack)
        return spec

    def union(self, node: dict[str, Any], alternatives: list[Any], where: str, stack: tuple[str, ...]) -> dict[str, Any]:
        """``oneOf``/``anyOf``: consts (an enum, as schemars writes a documented one or the
        error codes), or alternatives of distinct JSON types (``Option<T>``: T or null)."""
        outer = {k: v for k, v in node.items() if k not in ("oneOf", "anyOf")}
        branches = [self.spec(dict(outer, **b) if isinstance(b, dict) and "$ref" not in b else b, f"{where}|{i}", stack)
                    for i, b in enumerate(alternatives)]
        if all(set(b) - {"types", "min", "max", "$name"} == {"enum"} for b in branches):
            values = [v for b in branches for v in b["enum"]]
            types = sorted({json_type(v) for v in values}, key=JSON_TYPES.index)
            return {"types": types, "enum": values}
        merged: dict[str, Any] = {"types": []}
        for b in branches:
            if "types" not in b:
                return {}  # one alternative is any value
            for t in b["types"]:
                if t in merged["types"]:
                    raise SchemaError(f"{where}: alternatives overlap on type {t!r} (not translated)")
                merged["types"].append(t)
            for k, v in b.items():
                if k == "types":
                    continue
                if k in merged and merged[k] != v:
                    raise SchemaError(f"{where}: alternatives disagree on {k!r}")
                merged[k] = v
        merged["types"].sort(key=JSON_TYPES.index)
        return merged

    def note_named(self, name: str, spec: dict[str, Any]) -> None:
        if name in self.named:
            return
        node = self.defs[name]
        fields = []
        if "fields" in spec:
            fields = [
                Field(n, f["required"], f["spec"], one_line(node.get("properties", {}).get(n, {}).get("description", "")))
                for n, f in spec["fields"].items()
            ]
        self.named[name] = Named(name, one_line(node.get("description", "")), spec, fields)

    def messages(self, direction: str) -> list[Message]:
        node = self.defs.get(direction)
        if node is None or "oneOf" not in node:
            raise SchemaError(f"$defs/{direction} is missing or not a oneOf of messages")
        out: list[Message] = []
        for i, variant in enumerate(node["oneOf"]):
            where = f"$defs/{direction}/oneOf/{i}"
            if "$ref" in variant:
                variant = self.defs[self.ref_name(variant["$ref"])]
            tag = variant.get("properties", {}).get("type", {})
            kind = tag.get("const", (tag.get("enum") or [None])[0] if len(tag.get("enum", [])) == 1 else None)
            if not isinstance(kind, str):
                raise SchemaError(f"{where}: a message variant needs a `type` property with a string const")
            if "type" not in variant.get("required", []):
                raise SchemaError(f"{where} ({kind}): `type` is not required")
            spec = self.spec(variant, where)
            props = variant.get("properties", {})
            fields = [
                Field(name, f["required"], f["spec"], one_line(props[name].get("description", "")))
                for name, f in spec.get("fields", {}).items()
                if name != "type"
            ]
            if kind in {m.kind for m in out}:
                raise SchemaError(f"{where}: a second message of type {kind!r}")
            out.append(Message(kind, one_line(variant.get("description", "")), fields))
        return out

    def error_codes(self) -> list[tuple[int, str, str]]:
        node = self.defs.get(ERROR_CODE_DEF)
        if node is None:
            raise SchemaError(f"$defs/{ERROR_CODE_DEF} is missing: the clients name the error codes from it")
        codes = []
        for i, alt in enumerate(node.get("oneOf", [])):
            if not isinstance(alt.get("const"), int) or not isinstance(alt.get("title"), str):
                raise SchemaError(f"$defs/{ERROR_CODE_DEF}/oneOf/{i}: each code is an integer const with its name as title")
            codes.append((alt["const"], alt["title"], one_line(alt.get("description", ""))))
        if not codes:
            raise SchemaError(f"$defs/{ERROR_CODE_DEF} lists no codes (a oneOf of consts with titles)")
        return codes


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def read(schema: dict[str, Any]) -> Protocol:
    version = schema.get("x-protocol-version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SchemaError("the schema lacks an integer `x-protocol-version`")
    reader = Reader(schema)
    directions = {d: reader.messages(d) for d, _ in DIRECTIONS}
    codes = reader.error_codes()
    named = {n: reader.named[n] for n in sorted(reader.named)}
    return Protocol(version, str(schema.get("title", "")), directions, named, codes)


def strip_names(spec: Any) -> Any:
    """The spec as the tables hold it: no ``$name`` (a type-level detail)."""
    if isinstance(spec, dict):
        return {k: strip_names(v) for k, v in spec.items() if k != "$name"}
    if isinstance(spec, list):
        return [strip_names(v) for v in spec]
    return spec


def table(messages: list[Message]) -> dict[str, Any]:
    return {m.kind: {f.name: {"required": f.required, "spec": strip_names(f.spec)} for f in m.fields} for m in messages}


# --- writing literals ----------------------------------------------------------------------------


def literal(value: Any, lang: str, indent: int = 0, width: int = 110, lead: int = 0) -> str:
    """A deterministic literal: on one line when it fits (``lead``: the characters before it
    on its line after the indent), else one entry per line."""
    flat = flat_literal(value, lang)
    if indent + lead + len(flat) <= width or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 4)
    if isinstance(value, dict):
        items = []
        for k, v in value.items():
            key = json.dumps(k) + ": "
            items.append(pad + key + literal(v, lang, indent + 4, width, len(key) + 1))
    else:
        items = [pad + literal(v, lang, indent + 4, width, 1) for v in value]
    return ("{" if isinstance(value, dict) else "[") + "\n" + ",\n".join(items) + ",\n" + " " * indent + (
        "}" if isinstance(value, dict) else "]"
    )


def flat_literal(value: Any, lang: str) -> str:
    if value is True:
        return "True" if lang == "py" else "true"
    if value is False:
        return "False" if lang == "py" else "false"
    if value is None:
        return "None" if lang == "py" else "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(flat_literal(v, lang) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {flat_literal(v, lang)}" for k, v in value.items()) + "}"
    raise SchemaError(f"no literal for {value!r}")


def header(comment: str, schema_bytes: bytes, protocol: Protocol) -> str:
    digest = hashlib.sha256(schema_bytes).hexdigest()
    return (
        f"{comment} GENERATED by {GENERATOR} from {SCHEMA_PATH} (protocol {protocol.version}); do not edit.\n"
        f"{comment} Regenerate: python3 {GENERATOR}; CI checks it: python3 {GENERATOR} --check.\n"
        f"{comment} Schema sha256: {digest}\n"
    )


# --- Python ----------------------------------------------------------------------------------------


def py_type(spec: dict[str, Any], protocol: Protocol) -> str:
    name = spec.get("$name")
    if name == ERROR_CODE_DEF:
        return "int"
    if name is not None and name in protocol.named and ("enum" in spec or "fields" in spec):
        return name + (" | None" if "null" in spec.get("types", []) and "fields" in spec else "")
    if "types" not in spec:
        return "Any"
    if "enum" in spec:
        return "Literal[" + ", ".join(flat_literal(v, "py") for v in spec["enum"]) + "]"
    parts = []
    for t in spec["types"]:
        if t == "integer":
            parts.append("int")
        elif t == "number":
            parts.append("float")
        elif t == "string":
            parts.append("str")
        elif t == "boolean":
            parts.append("bool")
        elif t == "null":
            parts.append("None")
        elif t == "array":
            if "tuple" in spec:
                inner = sorted({py_type(s, protocol) for s in spec["tuple"]})
                parts.append(f"list[{' | '.join(inner)}]")
            else:
                parts.append(f"list[{py_type(spec['items'], protocol) if 'items' in spec else 'Any'}]")
        elif t == "object":
            parts.append(f"dict[str, {py_type(spec['values'], protocol) if 'values' in spec else 'Any'}]")
    return " | ".join(parts)


def py_comment(text: str, indent: str) -> list[str]:
    if not text:
        return []
    words, lines, line = text.split(), [], ""
    for w in words:
        if line and len(indent) + 2 + len(line) + 1 + len(w) > 100:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    return [f"{indent}#: {line}" if i == 0 else f"{indent}#  {line}" for i, line in enumerate(lines)]


def py_typed_dict(name: str, tag: str | None, fields: list[Field], description: str, protocol: Protocol) -> list[str]:
    out = py_comment(description, "")
    out.append(f'{name} = TypedDict("{name}", {{')
    if tag is not None:
        out.append(f'    "type": Literal[{json.dumps(tag)}],')
    for f in fields:
        out.extend(py_comment(f.description, "    "))
        t = py_type(f.spec, protocol)
        out.append(f"    {json.dumps(f.name)}: {t if f.required else f'NotRequired[{t}]'},")
    out.append("})")
    return out


def python_text(protocol: Protocol, schema_bytes: bytes) -> str:
    lines = [header("#", schema_bytes, protocol).rstrip("\n")]
    lines += [
        f'"""The executor protocol (version {protocol.version}) as Python types and tables, generated from',
        f"``{SCHEMA_PATH}``: a ``TypedDict`` per message, ``TO_EXEC_FIELDS`` (what the simulator",
        "sends; the client validates it) and ``FROM_EXEC_FIELDS`` (what the executor sends), the",
        "error codes. A field's ``spec`` is described in the generator's docstring.\"\"\"",
        "",
        "from __future__ import annotations",
        "",
        "import enum",
        "from typing import Any, Final, Literal, NotRequired, TypedDict, Union",
        "",
        f"PROTOCOL_VERSION: Final = {protocol.version}",
        "",
        "#: A JSON value's description (the generator's docstring says the keys).",
        "Spec = dict[str, Any]",
        "",
    ]
    for named in protocol.named.values():
        if named.name == ERROR_CODE_DEF:
            continue
        lines.append("")
        if "fields" in named.spec:
            lines += py_typed_dict(named.name, None, named.fields, named.description, protocol)
        elif "enum" in named.spec:
            lines += py_comment(named.description, "")
            lines.append(f"{named.name} = Literal[{', '.join(flat_literal(v, 'py') for v in named.spec['enum'])}]")
    for direction, _ in DIRECTIONS:
        for m in protocol.directions[direction]:
            lines.append("")
            lines += py_typed_dict(m.type_name, m.kind, m.fields, m.description, protocol)
        lines.append("")
        lines.append(f"#: Every message of `{direction}`.")
        lines.append(f"{direction} = Union[")
        lines += [f"    {m.type_name}," for m in protocol.directions[direction]]
        lines.append("]")
    lines.append("")
    for direction, prefix in DIRECTIONS:
        what = "the simulator sends (the client validates them)" if direction == "ToExec" else "the executor sends"
        lines.append("")
        lines.append(f"#: The messages {what}: type -> field -> {{required, spec}} (`type` left out).")
        lines.append(f"{prefix}_FIELDS: Final[dict[str, dict[str, dict[str, Any]]]] = "
                     + literal(table(protocol.directions[direction]), "py"))
    lines += ["", "", "class ErrorCode(enum.IntEnum):", '    """The codes of the simulator\'s `error` message."""', ""]
    for number, name, meaning in protocol.error_codes:
        lines += py_comment(meaning, "    ")
        lines.append(f"    {upper_snake(name)} = {number}")
    lines += ["", "", "#: An error code's number -> its name.", "ERROR_CODE_NAMES: Final[dict[int, str]] = {"]
    lines += [f"    {n}: {json.dumps(name)}," for n, name, _ in protocol.error_codes]
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- TypeScript ------------------------------------------------------------------------------------


def ts_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", name) else json.dumps(name)


def ts_type(spec: dict[str, Any], protocol: Protocol) -> str:
    name = spec.get("$name")
    if name is not None and name in protocol.named and ("enum" in spec or "fields" in spec):
        return name + (" | null" if "null" in spec.get("types", []) and "fields" in spec else "")
    if "types" not in spec:
        return "unknown"
    if "enum" in spec:
        return " | ".join(flat_literal(v, "ts") for v in spec["enum"])
    parts = []
    for t in spec["types"]:
        if t in ("integer", "number"):
            parts.append("number")
        elif t in ("string", "boolean", "null"):
            parts.append(t)
        elif t == "array":
            if "tuple" in spec:
                parts.append("[" + ", ".join(ts_type(s, protocol) for s in spec["tuple"]) + "]")
            else:
                inner = ts_type(spec["items"], protocol) if "items" in spec else "unknown"
                parts.append(f"({inner})[]" if " | " in inner else f"{inner}[]")
        elif t == "object":
            parts.append(f"Record<string, {ts_type(spec['values'], protocol) if 'values' in spec else 'unknown'}>")
    return " | ".join(parts)


def ts_doc(text: str, indent: str) -> list[str]:
    return [f"{indent}/** {text.replace('*/', '* /')} */"] if text else []


def ts_interface(name: str, tag: str | None, fields: list[Field], description: str, protocol: Protocol) -> list[str]:
    out = ts_doc(description, "")
    out.append(f"export interface {name} {{")
    if tag is not None:
        out.append(f"  type: {json.dumps(tag)};")
    for f in fields:
        out += ts_doc(f.description, "  ")
        out.append(f"  {ts_key(f.name)}{'' if f.required else '?'}: {ts_type(f.spec, protocol)};")
    out.append("}")
    return out


def ts_clamp(spec: Any) -> Any:
    """JavaScript numbers hold integers exactly up to 2^53 - 1: larger bounds are left out
    (the client checks ``Number.isSafeInteger``)."""
    if isinstance(spec, dict):
        return {k: ts_clamp(v) for k, v in spec.items() if not (k in ("min", "max") and abs(v) > JS_MAX_SAFE)}
    if isinstance(spec, list):
        return [ts_clamp(v) for v in spec]
    return spec


def ts_text(protocol: Protocol, schema_bytes: bytes) -> str:
    lines = [header("//", schema_bytes, protocol).rstrip("\n")]
    lines += [
        f"/**",
        f" * The executor protocol (version {protocol.version}) as TypeScript types and tables, generated",
        f" * from `{SCHEMA_PATH}`: an interface per message, `TO_EXEC_FIELDS` (what the simulator sends;",
        " * the client validates it) and `FROM_EXEC_FIELDS` (what the executor sends), the error codes.",
        " * A field's `spec` is described in the generator's docstring; integer bounds beyond 2^53 - 1",
        " * are left out (a JavaScript number cannot hold them).",
        " */",
        "",
        f"export const PROTOCOL_VERSION = {protocol.version};",
        "",
        "/** A JSON type, as JSON Schema names it. */",
        'export type JsonType = "integer" | "number" | "string" | "boolean" | "null" | "array" | "object";',
        "",
        "/** A JSON value's description (the generator's docstring says the keys). */",
        "export interface Spec {",
        "  readonly types?: readonly JsonType[];",
        "  readonly min?: number;",
        "  readonly max?: number;",
        "  readonly enum?: readonly (string | number | boolean | null)[];",
        "  readonly items?: Spec;",
        "  readonly tuple?: readonly Spec[];",
        "  readonly values?: Spec;",
        "  readonly fields?: Readonly<Record<string, FieldSpec>>;",
        "  readonly closed?: boolean;",
        "}",
        "",
        "/** A field of a message or an object: whether it is required, and its value. */",
        "export interface FieldSpec {",
        "  readonly required: boolean;",
        "  readonly spec: Spec;",
        "}",
    ]
    for named in protocol.named.values():
        if named.name == ERROR_CODE_DEF:
            continue
        lines.append("")
        if "fields" in named.spec:
            lines += ts_interface(named.name, None, named.fields, named.description, protocol)
        elif "enum" in named.spec:
            lines += ts_doc(named.description, "")
            lines.append(f"export type {named.name} = {' | '.join(flat_literal(v, 'ts') for v in named.spec['enum'])};")
    for direction, _ in DIRECTIONS:
        for m in protocol.directions[direction]:
            lines.append("")
            lines += ts_interface(m.type_name, m.kind, m.fields, m.description, protocol)
        lines.append("")
        lines.append(f"/** Every message of `{direction}`. */")
        lines.append(f"export type {direction} =")
        names = [m.type_name for m in protocol.directions[direction]]
        lines += [f"  | {n}{';' if i == len(names) - 1 else ''}" for i, n in enumerate(names)]
    for direction, prefix in DIRECTIONS:
        what = "the simulator sends (the client validates them)" if direction == "ToExec" else "the executor sends"
        lines.append("")
        lines.append(f"/** The messages {what}: type -> field -> {{required, spec}} (`type` left out). */")
        lines.append(f"export const {prefix}_FIELDS: Readonly<Record<string, Readonly<Record<string, FieldSpec>>>> = "
                     + literal(ts_clamp(table(protocol.directions[direction])), "ts") + ";")
    lines += ["", "/** The codes of the simulator's `error` message. */", "export const ErrorCode = {"]
    for number, name, meaning in protocol.error_codes:
        lines += ts_doc(meaning, "  ")
        lines.append(f"  {upper_snake(name)}: {number},")
    lines += ["} as const;", "/** An error code's number. */",
              "export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];", "",
              "/** An error code's number -> its name. */",
              "export const ERROR_CODE_NAMES: Readonly<Record<number, string>> = {"]
    lines += [f"  {n}: {json.dumps(name)}," for n, name, _ in protocol.error_codes]
    lines.append("};")
    return "\n".join(lines) + "\n"


# --- the command -----------------------------------------------------------------------------------


def generate(root: Path) -> dict[str, str]:
    """The outputs' paths (relative to ``root``) and texts."""
    schema_bytes = (root / SCHEMA_PATH).read_bytes()
    try:
        schema = json.loads(schema_bytes)
    except ValueError as e:
        raise SchemaError(f"{SCHEMA_PATH} is not JSON: {e}") from None
    protocol = read(schema)
    return {PYTHON_OUT: python_text(protocol, schema_bytes), TS_OUT: ts_text(protocol, schema_bytes)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a committed output differs")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository's root (default: this script's)")
    args = parser.parse_args(argv)
    try:
        outputs = generate(args.root)
    except (SchemaError, OSError) as e:
        print(f"gen_protocol: {e}", file=sys.stderr)
        return 2
    stale = []
    for rel, text in outputs.items():
        path = args.root / rel
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(rel)
            diff = difflib.unified_diff((current or "").splitlines(True), text.splitlines(True),
                                        f"{rel} (committed)", f"{rel} (from {SCHEMA_PATH})")
            sys.stderr.writelines(list(diff)[:40])
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"gen_protocol: wrote {rel}")
    if stale:
        print(
            f"gen_protocol: {', '.join(stale)} differ from what {SCHEMA_PATH} generates: the protocol "
            f"changed and the clients' bindings were not regenerated. Run `python3 {GENERATOR}` and "
            "commit the result.",
            file=sys.stderr,
        )
        return 1
    if args.check:
        print(f"gen_protocol: {', '.join(outputs)} are current with {SCHEMA_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
