// The schema of the CRD editor's own documents (CustomResourceDefinition itself), for hover and completion
// there. It is the engine's OpenAPI v3 document of apiextensions.k8s.io/v1 (generated from upstream's
// apiextensions-apiserver types), read as the page's Schema shape. That document is a graph, not a tree:
// JSONSchemaProps refers to itself (openAPIV3Schema.properties.<name> is JSONSchemaProps again), so nothing
// here walks it. Each component is converted once, and the children of a node (properties, items,
// additionalProperties) are converted only when something reads them: a hover or a completion follows one
// path, and only that path is ever converted.
import type { KindSchema, Schema } from './schema';

type Raw = Record<string, any>;

const REF_PREFIX = '#/components/schemas/';

/** The fields of an OpenAPI schema object copied as they are (the page's Schema uses the same names). */
const PLAIN_FIELDS = [
  'type', 'format', 'description', 'default', 'enum', 'required', 'nullable', 'minimum', 'maximum', 'exclusiveMinimum',
  'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'pattern',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type',
] as const;

/**
 * The kinds of group/version an OpenAPI v3 document defines (components with x-kubernetes-group-version-kind),
 * each with its schema. plural and scope are left empty: the editors read kind, version and schema only.
 */
export function openAPIKinds(doc: unknown, group: string, version: string): KindSchema[] {
  const components: Record<string, Raw> = (doc as any)?.components?.schemas ?? {};
  const r = new Resolver(components);
  const out: KindSchema[] = [];
  for (const [name, raw] of Object.entries(components)) {
    for (const gvk of raw?.['x-kubernetes-group-version-kind'] ?? []) {
      if (gvk?.group !== group || gvk?.version !== version || typeof gvk.kind !== 'string') continue;
      out.push({ group, version, kind: gvk.kind, plural: '', scope: '', schema: r.component(name) });
    }
  }
  return out;
}

/** Defines a property computed on first read (and kept), enumerable like a plain one. */
function lazy<K extends keyof Schema>(s: Schema, key: K, compute: () => Schema[K]): void {
  let done = false;
  let value: Schema[K];
  Object.defineProperty(s, key, {
    enumerable: true,
    configurable: true,
    get() {
      if (!done) {
        value = compute();
        done = true;
      }
      return value;
    },
  });
}

/** A schema with base's fields (getters shared, so still lazy), then over's on top. */
function overlay(base: Schema, over: Schema): Schema {
  const out: Schema = {};
  Object.defineProperties(out, Object.getOwnPropertyDescriptors(base));
  Object.defineProperties(out, Object.getOwnPropertyDescriptors(over));
  return out;
}

class Resolver {
  private memo = new Map<string, Schema>();
  private resolving = new Set<string>();

  constructor(private components: Record<string, Raw>) {}

  /** The schema of components/schemas/<name>, converted once. */
  component(name: string): Schema {
    const known = this.memo.get(name);
    if (known) return known;
    // A chain of bare references that comes back to itself has no fields to offer.
    if (this.resolving.has(name)) return {};
    this.resolving.add(name);
    try {
      const raw = this.components[name] ?? {};
      let s = this.node(raw);
      const union = unionOf(name, raw, this.components);
      if (union) s = overlay(this.component(union), s);
      // kubectl explain names a referenced type when it is an object (or untyped): <ObjectMeta>,
      // <[]CustomResourceDefinitionVersion>, <map[string]JSONSchemaProps>; a scalar one (Time) by its type.
      if (raw.type === undefined || raw.type === 'object') s = overlay(s, { refName: name.split('.').pop() });
      this.memo.set(name, s);
      return s;
    } finally {
      this.resolving.delete(name);
    }
  }

  /** One schema object: {$ref}, or upstream's {allOf: [{$ref}], description, default} wrapper, or inline. */
  node(raw: Raw): Schema {
    if (!raw || typeof raw !== 'object') return {};
    const ref = typeof raw.$ref === 'string' ? raw.$ref
      : Array.isArray(raw.allOf) && raw.allOf.length === 1 && typeof raw.allOf[0]?.$ref === 'string' ? raw.allOf[0].$ref : undefined;
    if (ref?.startsWith(REF_PREFIX)) {
      const base = this.component(ref.slice(REF_PREFIX.length));
      const { $ref: _r, allOf: _a, ...beside } = raw;
      // What is written beside the reference (the field's own description, its default) is the field's.
      return Object.keys(beside).length ? overlay(base, this.node(beside)) : base;
    }
    const s: Schema = {};
    for (const k of PLAIN_FIELDS) if (raw[k] !== undefined) (s as Record<string, unknown>)[k] = raw[k];
    const props = raw.properties;
    if (props && typeof props === 'object') {
      lazy(s, 'properties', () => Object.fromEntries(Object.entries<Raw>(props).map(([k, v]) => [k, this.node(v)])));
    }
    if (raw.items && typeof raw.items === 'object' && !Array.isArray(raw.items)) lazy(s, 'items', () => this.node(raw.items));
    const ap = raw.additionalProperties;
    if (typeof ap === 'boolean') s.additionalProperties = ap;
    else if (ap && typeof ap === 'object') lazy(s, 'additionalProperties', () => this.node(ap));
    return s;
  }
}

/**
 * The component a custom-serialized union is written as in a CRD. Upstream's OpenAPI leaves
 * JSONSchemaPropsOrArray, JSONSchemaPropsOrBool and JSONSchemaPropsOrStringArray untyped (their Go types
 * marshal themselves as one form or the other), with only a description: "represents a value that can either
 * be a JSONSchemaProps or ...". In a CRD they are nearly always written in the first form (items: {...},
 * additionalProperties: {...}), so a component named <A>Or<B> with no fields of its own is read as <A>, which
 * keeps hover and completion working deep inside nested schemas. Returns undefined for anything else.
 */
function unionOf(name: string, raw: Raw, components: Record<string, Raw>): string | undefined {
  if (raw.type !== undefined || raw.properties || raw.items || raw.additionalProperties || raw.allOf || raw.$ref) return undefined;
  const m = /^(.+)Or[A-Z][A-Za-z]*$/.exec(name);
  return m && m[1] in components ? m[1] : undefined;
}
