/**
 * The simulator's messages checked against the protocol's generated tables
 * (`protocol.ts`, from `api/protocol.schema.json` by `clients/gen_protocol.py`): a known
 * `type`, every required field present, every known field of its type. A field the tables do
 * not know is ignored, so that a newer simulator may add fields without breaking this client.
 */

import { TO_EXEC_FIELDS, type JsonType, type Spec } from "./protocol.js";

const WORDS: Record<JsonType, string> = {
  integer: "an integer",
  number: "a number",
  string: "a string",
  boolean: "a boolean",
  null: "null",
  array: "a list",
  object: "an object",
};

function jsonType(value: unknown): JsonType | "other" {
  if (value === null) return "null";
  if (typeof value === "boolean") return "boolean";
  if (typeof value === "number") return Number.isSafeInteger(value) ? "integer" : "number";
  if (typeof value === "string") return "string";
  if (Array.isArray(value)) return "array";
  if (typeof value === "object") return "object";
  return "other";
}

/** Whether `value` is of `spec`; an object's unknown fields are ignored. */
export function matches(spec: Spec, value: unknown): boolean {
  const types = spec.types;
  if (types === undefined) return true;
  const kind = jsonType(value);
  if (kind === "other" || (!types.includes(kind) && !(kind === "integer" && types.includes("number")))) return false;
  if (spec.enum !== undefined && !spec.enum.includes(value as string | number | boolean | null)) return false;
  if (kind === "integer" || kind === "number") {
    const n = value as number;
    return (spec.min === undefined || n >= spec.min) && (spec.max === undefined || n <= spec.max);
  }
  if (kind === "array") {
    const items = value as unknown[];
    if (spec.tuple !== undefined) return items.length === spec.tuple.length && spec.tuple.every((s, i) => matches(s, items[i]));
    return spec.items === undefined || items.every((x) => matches(spec.items!, x));
  }
  if (kind === "object") {
    const obj = value as Record<string, unknown>;
    if (spec.values !== undefined && !Object.values(obj).every((x) => matches(spec.values!, x))) return false;
    for (const [name, field] of Object.entries(spec.fields ?? {})) {
      if (Object.hasOwn(obj, name)) {
        if (!matches(field.spec, obj[name])) return false;
      } else if (field.required) {
        return false;
      }
    }
  }
  return true;
}

/** `spec` in words, for an error message. */
export function describe(spec: Spec): string {
  if (spec.enum !== undefined) return `one of ${spec.enum.map(String).join(", ")}`;
  if (spec.types === undefined) return "any value";
  return spec.types
    .map((t) => {
      let word = WORDS[t];
      if ((t === "integer" || t === "number") && spec.min !== undefined) word += ` >= ${spec.min}`;
      if (t === "array" && spec.tuple !== undefined) word = `[${spec.tuple.map(describe).join(", ")}]`;
      else if (t === "array" && spec.items !== undefined) word += ` of ${describe(spec.items)}`;
      else if (t === "object" && spec.fields !== undefined) {
        const needed = Object.entries(spec.fields).filter(([, f]) => f.required);
        word += ` with ${needed.map(([n, f]) => `${n} (${describe(f.spec)})`).join(", ")}`;
      } else if (t === "object" && spec.values !== undefined) word += ` of ${describe(spec.values)}`;
      return word;
    })
    .join(" or ");
}

/** What is wrong with a message from the simulator, or `null`. */
export function toExecProblem(m: Record<string, unknown>, protocol: number): string | null {
  const kind = m.type;
  if (typeof kind !== "string") return "a message without a string `type`";
  const fields = Object.hasOwn(TO_EXEC_FIELDS, kind) ? TO_EXEC_FIELDS[kind] : undefined;
  if (fields === undefined) {
    return `unknown message type ${JSON.stringify(kind)} (protocol ${protocol} has ${Object.keys(TO_EXEC_FIELDS).sort().join(", ")})`;
  }
  for (const [name, field] of Object.entries(fields)) {
    if (!Object.hasOwn(m, name)) {
      if (field.required) return `\`${kind}\` lacks its field ${JSON.stringify(name)} (protocol ${protocol})`;
    } else if (!matches(field.spec, m[name])) {
      return `\`${kind}\`.${name} must be ${describe(field.spec)}, not ${JSON.stringify(m[name]).slice(0, 80)}`;
    }
  }
  return null;
}

/** Whether messages of `kind` carry `field` (the clock moves only with a known `now_ms`). */
export function carries(kind: string, field: string): boolean {
  return Object.hasOwn(TO_EXEC_FIELDS, kind) && Object.hasOwn(TO_EXEC_FIELDS[kind], field);
}
