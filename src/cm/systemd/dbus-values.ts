/**
 * How D-Bus values look in TypeScript, and the bounds both directions of marshalling share.
 *
 * Integers up to 32 bits and doubles are numbers, 64-bit integers (x, t) are bigints (a safe
 * integer number is accepted when marshalling), booleans are booleans, strings, object paths
 * and signatures are strings, arrays and structs are arrays, a dict entry is a [key, value]
 * pair (so a{sv} is an array of pairs), and a variant carries its signature: { sig: 't', value: 1n }.
 */
export type DBusValue = number | bigint | boolean | string | DBusVariant | DBusValue[];

export interface DBusVariant {
  sig: string;
  value: DBusValue;
}

/** Spec, "Valid Signatures" / "Marshaling": a message is at most 128 MiB, an array 64 MiB. */
export const MAX_MESSAGE_BYTES = 128 * 1024 * 1024;
export const MAX_ARRAY_BYTES = 64 * 1024 * 1024;
/** Containers (arrays, structs, dict entries, variants) around a value, variants included: libdbus's 2 × 32. */
export const MAX_CONTAINER_DEPTH = 64;

export function variant(sig: string, value: DBusValue): DBusVariant {
  return { sig, value };
}

export function isVariant(v: unknown): v is DBusVariant {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    typeof (v as DBusVariant).sig === 'string' &&
    'value' in v
  );
}

/** Spec, "Valid Object Paths": "/" or "/" joined non-empty elements of [A-Za-z0-9_]. */
export function isObjectPath(p: string): boolean {
  return p === '/' || /^(\/[A-Za-z0-9_]+)+$/.test(p);
}
