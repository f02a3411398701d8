/**
 * Enforcement of a custom resource's OpenAPI v3 schema (a structural subset):
 * pruning of unknown fields, then validation with kube-apiserver's causes (07i).
 */
import { isPlainObject } from './json.ts';
import type { StatusCause } from './status.ts';
import type { JsonSchema } from './types.ts';

const ROOT_KEEP = new Set(['apiVersion', 'kind', 'metadata']);

/** Drops fields the schema does not know (unless x-kubernetes-preserve-unknown-fields). Returns a new value. */
export function prune(schema: JsonSchema | undefined, value: unknown, root = false): unknown {
  if (!schema || (schema['x-kubernetes-preserve-unknown-fields'] === true && !schema.properties)) return value;
  if (Array.isArray(value)) return schema.items ? value.map((v) => prune(schema.items, v)) : value;
  if (!isPlainObject(value)) return value;
  if (schema.type !== 'object' && !schema.properties && schema.additionalProperties === undefined) {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (root && ROOT_KEEP.has(k)) out[k] = v;
    else if (schema.properties && k in schema.properties) out[k] = prune(schema.properties[k], v);
    else if (isPlainObject(schema.additionalProperties)) out[k] = prune(schema.additionalProperties, v);
    else if (schema.additionalProperties === true || schema['x-kubernetes-preserve-unknown-fields'] === true) out[k] = v;
  }
  return out;
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? 'null');
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(schema: JsonSchema, v: unknown): boolean {
  if (schema['x-kubernetes-int-or-string']) return typeof v === 'string' || Number.isInteger(v);
  switch (schema.type) {
    case undefined:
      return true;
    case 'object':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

function validateValue(schema: JsonSchema, v: unknown, field: string, causes: StatusCause[]): void {
  if (v === null) {
    if (!schema.nullable && schema.type !== undefined) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: "null": ${field} in body must be of type ${schema.type}: "null"`,
        field,
      });
    }
    return;
  }
  if (!typeMatches(schema, v)) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: "${typeOf(v)}": ${field} in body must be of type ${schema.type}: "${typeOf(v)}"`,
      field,
    });
    return;
  }
  const invalid = (detail: string): void => {
    causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: ${show(v)}: ${field} in body ${detail}`, field });
  };
  if (typeof v === 'number') {
    if (schema.minimum !== undefined) {
      if (schema.exclusiveMinimum ? !(v > schema.minimum) : !(v >= schema.minimum)) {
        invalid(`should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`);
      }
    }
    if (schema.maximum !== undefined) {
      if (schema.exclusiveMaximum ? !(v < schema.maximum) : !(v <= schema.maximum)) {
        invalid(`should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`);
      }
    }
  }
  if (typeof v === 'string') {
    if (schema.minLength !== undefined && [...v].length < schema.minLength) {
      invalid(`should be at least ${schema.minLength} chars long`);
    }
    if (schema.maxLength !== undefined && [...v].length > schema.maxLength) {
      invalid(`should be at most ${schema.maxLength} chars long`);
    }
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(v)) invalid(`should match '${schema.pattern}'`);
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems) invalid(`should have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && v.length > schema.maxItems) invalid(`should have at most ${schema.maxItems} items`);
    if (schema.items) v.forEach((item, i) => validateValue(schema.items!, item, `${field}[${i}]`, causes));
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${show(v)}: supported values: ${schema.enum.map(show).join(', ')}`,
      field,
    });
  }
  if (isPlainObject(v)) validateObject(schema, v, field, causes);
}

function validateObject(schema: JsonSchema, obj: Record<string, unknown>, prefix: string, causes: StatusCause[]): void {
  const join = (k: string): string => (prefix ? `${prefix}.${k}` : k);
  if (schema.properties) {
    for (const k of Object.keys(schema.properties).sort()) {
      if (prefix === '' && ROOT_KEEP.has(k)) continue;
      if (obj[k] !== undefined) validateValue(schema.properties[k]!, obj[k], join(k), causes);
    }
  }
  if (isPlainObject(schema.additionalProperties)) {
    for (const k of Object.keys(obj).sort()) {
      if (schema.properties && k in schema.properties) continue;
      if (prefix === '' && ROOT_KEEP.has(k)) continue;
      validateValue(schema.additionalProperties, obj[k], join(k), causes);
    }
  }
  for (const r of schema.required ?? []) {
    if (obj[r] === undefined) causes.push({ reason: 'FieldValueRequired', message: 'Required value', field: join(r) });
  }
}

/** Validates an object against the root schema; returns the causes (empty when valid). */
export function validate(schema: JsonSchema | undefined, obj: Record<string, unknown>): StatusCause[] {
  if (!schema) return [];
  const causes: StatusCause[] = [];
  validateObject(schema, obj, '', causes);
  return causes;
}
