/**
 * @module util/field-checks
 * Checks of JSON read off the wire: an object, a list of strings, an object whose fields have the
 * given JSON types. The SDK reads every frame with these, and each channel's check of its `data`
 * (channels/) is written with them. Node-free.
 */

/** A JSON object's fields, not yet checked. */
export type Fields = Record<string, unknown>;

/** Field name -> the `typeof` its value must have. */
export type FieldTypes = Readonly<Record<string, 'string' | 'number'>>;

export function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

export function hasFields(value: unknown, types: FieldTypes): value is Fields {
  return isObject(value) && Object.entries(types).every(([field, type]) => typeof value[field] === type);
}

export function isListOf(value: unknown, types: FieldTypes): boolean {
  return Array.isArray(value) && value.every((item) => hasFields(item, types));
}
