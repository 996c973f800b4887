// The structural schemas of the CRDs in the editor, for hover, completion and the explain tree. They are read
// from the CRD text itself (not from the engine), so that hover and completion work before the engine has
// arrived and while the CRD is still invalid.
import { writtenAs, yamlScalar, type Segment } from './yaml';

/**
 * The part of an OpenAPI v3 schema object the page reads. Schemas read from an OpenAPI document (openapi.ts)
 * are graphs with cycles (JSONSchemaProps holds JSONSchemaProps) and lazy children: follow a path with at(),
 * never walk one whole without a bound.
 */
export interface Schema {
  type?: string;
  format?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  required?: string[];
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  pattern?: string;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: { rule: string; message?: string; messageExpression?: string; reason?: string; fieldPath?: string; optionalOldSelf?: boolean }[];
  anyOf?: Schema[];
  allOf?: Schema[];
  oneOf?: Schema[];
  not?: Schema;
  /** The OpenAPI component this schema is, when it is an object (ObjectMeta, JSONSchemaProps): kubectl explain
   * prints that name as the type. Only schemas read from an OpenAPI document (openapi.ts) have it. */
  refName?: string;
}

/** One served version of a kind: what an object's apiVersion/kind select. */
export interface KindSchema {
  group: string;
  version: string;
  kind: string;
  plural: string;
  scope: string;
  schema: Schema;
}

/** Reads the kinds and their schemas from CRD values (parsed documents of the CRD editor). */
export function kindSchemas(crds: unknown[]): KindSchema[] {
  const out: KindSchema[] = [];
  for (const c of crds) {
    const crd = c as { kind?: string; spec?: any };
    if (crd?.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
    const spec = crd.spec;
    for (const v of spec.versions ?? []) {
      const schema = v?.schema?.openAPIV3Schema ?? spec.validation?.openAPIV3Schema;
      if (!schema) continue;
      out.push({
        group: spec.group ?? '', version: v.name ?? '', kind: spec.names?.kind ?? '', plural: spec.names?.plural ?? '',
        scope: spec.scope ?? 'Namespaced', schema: withMetadata(schema),
      });
    }
  }
  return out;
}

/** The schema the API server uses for an object: the CRD's, with apiVersion, kind and metadata described. */
function withMetadata(s: Schema): Schema {
  const props = { ...(s.properties ?? {}) };
  props.apiVersion ??= { type: 'string', description: 'APIVersion defines the versioned schema of this representation of an object.' };
  props.kind ??= { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' };
  props.metadata = {
    type: 'object',
    description: "Standard object's metadata (ObjectMeta).",
    ...(props.metadata ?? {}),
    properties: {
      name: { type: 'string', description: 'Name must be unique within a namespace.' },
      namespace: { type: 'string', description: 'Namespace defines the space within which each name must be unique.' },
      labels: { type: 'object', additionalProperties: { type: 'string' }, description: 'Map of string keys and values for organizing and categorizing objects.' },
      annotations: { type: 'object', additionalProperties: { type: 'string' }, description: 'Unstructured key value map stored with a resource.' },
      generateName: { type: 'string', description: 'Optional prefix used by the server to generate a unique name.' },
      finalizers: { type: 'array', items: { type: 'string' }, description: 'Must be empty before the object is deleted from the registry.' },
      ...(props.metadata?.properties ?? {}),
    },
  };
  return { ...s, properties: props };
}

/** The kind schema for an object value (by apiVersion and kind). */
export function schemaFor(kinds: KindSchema[], obj: unknown): KindSchema | undefined {
  const o = obj as { apiVersion?: string; kind?: string } | null;
  if (!o || typeof o !== 'object') return undefined;
  return kinds.find((k) => `${k.group}/${k.version}` === o.apiVersion && k.kind === o.kind)
    ?? kinds.find((k) => k.kind === o.kind);
}

/** The schema node at a path, following properties, items and additionalProperties. */
export function at(schema: Schema, path: Segment[]): Schema | undefined {
  let s: Schema | undefined = schema;
  for (const seg of path) {
    if (!s) return undefined;
    if (typeof seg === 'number') s = s.items;
    else if (s.properties && seg in s.properties) s = s.properties[seg];
    else if (typeof s.additionalProperties === 'object') s = s.additionalProperties;
    else if (s.items && /^\d+$/.test(seg)) s = s.items;
    else return undefined;
  }
  return s;
}

/** The short type of a schema as kubectl explain prints it: <string>, <[]Object>, <map[string]string>... */
export function typeName(s: Schema | undefined): string {
  if (!s) return '<unknown>';
  if (s['x-kubernetes-int-or-string']) return '<IntOrString>';
  if (s.refName) return `<${s.refName}>`;
  switch (s.type) {
    case 'array':
      return `<[]${typeName(s.items).slice(1, -1)}>`;
    case 'object':
      if (typeof s.additionalProperties === 'object' && !s.properties) return `<map[string]${typeName(s.additionalProperties).slice(1, -1)}>`;
      return '<Object>';
    case undefined:
      return s['x-kubernetes-preserve-unknown-fields'] ? '<Object>' : '<unknown>';
    default:
      return `<${s.type}>`;
  }
}

/** Lines describing a schema node: type, description, default, enum and validations. */
export function describe(name: string, s: Schema, required = false): string[] {
  const out = [`${name} ${typeName(s)}${required ? ' -required-' : ''}`];
  if (s.description) out.push(s.description);
  const facts: string[] = [];
  if (s.format) facts.push(`format: ${s.format}`);
  // Values as the CRD's YAML writes them (the same quotes and escapes), or as YAML would write them when they
  // come from elsewhere (the engine's OpenAPI document).
  const shown = (container: object, key: string | number, v: unknown) => writtenAs(container, key) ?? yamlScalar(v);
  if (s.default !== undefined) facts.push(`default: ${shown(s, 'default', s.default)}`);
  if (s.enum) facts.push(`enum: ${s.enum.map((e, i) => shown(s.enum!, i, e)).join(', ')}`);
  if (s.nullable) facts.push('nullable');
  for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'pattern'] as const) {
    if (s[k] !== undefined) facts.push(`${k}: ${shown(s, k, s[k])}`);
  }
  if (s['x-kubernetes-preserve-unknown-fields']) facts.push('x-kubernetes-preserve-unknown-fields');
  if (s['x-kubernetes-list-type']) facts.push(`list-type: ${s['x-kubernetes-list-type']}`);
  if (s['x-kubernetes-list-map-keys']) facts.push(`list-map-keys: ${s['x-kubernetes-list-map-keys'].join(', ')}`);
  if (s['x-kubernetes-map-type']) facts.push(`map-type: ${s['x-kubernetes-map-type']}`);
  if (s.required?.length) facts.push(`required: ${s.required.join(', ')}`);
  if (facts.length) out.push(facts.join(' · '));
  for (const v of s['x-kubernetes-validations'] ?? []) {
    out.push(`rule: ${v.rule}${v.message ? ` (message: ${v.message})` : ''}`);
  }
  return out;
}

/** Keys a mapping at this schema node may have, with their schemas. */
export function keysOf(s: Schema | undefined): [string, Schema][] {
  if (!s?.properties) return [];
  return Object.entries(s.properties);
}

/** Every x-kubernetes-validations rule of a schema, with the path of the node that holds it. */
export function rules(s: Schema, path = ''): { path: string; rule: string; message?: string }[] {
  const out: { path: string; rule: string; message?: string }[] = [];
  for (const v of s['x-kubernetes-validations'] ?? []) out.push({ path: path || '<root>', rule: v.rule, message: v.message ?? v.messageExpression });
  for (const [k, p] of Object.entries(s.properties ?? {})) out.push(...rules(p, path ? `${path}.${k}` : k));
  if (s.items) out.push(...rules(s.items, `${path}[*]`));
  if (typeof s.additionalProperties === 'object') out.push(...rules(s.additionalProperties, `${path}[*]`));
  return out;
}

/** The explain tree as kubectl explain --recursive prints it, one line per field. */
export function explainTree(s: Schema, indent = 0, out: string[] = [], depth = 0): string[] {
  if (depth > 30) return out;
  const req = new Set(s.required ?? []);
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    out.push(`${'  '.repeat(indent)}${k}\t${typeName(p)}${req.has(k) ? ' -required-' : ''}`);
    const inner = p.type === 'array' ? p.items : (typeof p.additionalProperties === 'object' && !p.properties ? p.additionalProperties : p);
    if (inner?.properties) explainTree(inner, indent + 1, out, depth + 1);
  }
  return out;
}
