// Types of crdplay's browser API, written by hand from wasm/main_js.go (the engine's bridge) and client.js (its
// proxy in the page). Keep the three in step: a change of shape there is a change here. The types of
// crdplay.evaluate's input and result are checked against their Go types (playground/types.go) by
// web/dts_test.go: each Go struct is an interface here, with the same JSON fields, optional where Go omits
// them when empty.
//
// The same Crdplay interface is globalThis.crdplay in two places: in the worker that runs crdplay.wasm it is
// the engine itself; in the page it is a CrdplayClient that forwards each call to that worker.

/** One API request, as an HTTP client would send it. */
export interface CrdplayRequest {
  /** HTTP method, upper-cased by the engine. Default "GET". */
  method?: string;
  /** Absolute path with the query, e.g. "/apis/stable.example.com/v1/namespaces/default/crontabs?limit=5". */
  path: string;
  /**
   * Request headers, e.g. {"Content-Type": "application/yaml"}. None are added: send Content-Type with a body
   * (without Accept the engine answers JSON). An array sends the name once per value.
   */
  headers?: Record<string, string | string[]>;
  /** Request body: JSON or YAML text. */
  body?: string | null;
}

/** The engine's answer, whole. */
export interface CrdplayResponse {
  /** HTTP status code. Errors are Kubernetes Status objects in body, with the same code. */
  status: number;
  /**
   * Response headers by canonical name ("Content-Type", "Warning"): a string, or an array when the name repeats
   * (several Warning headers, typically).
   */
  headers: Record<string, string | string[]>;
  /** Response body as text: JSON for the API's objects and Status errors. */
  body: string;
}

/**
 * What a rejected Promise carries when the bridge cannot serve a request: a malformed request object (not an
 * object, a path that is not a string...), a panic (with the Go stack), an engine that exited or never
 * started. The API's own errors (404, 409, 422 and the rest) are CrdplayResponses, not this.
 */
export interface CrdplayError {
  error: string;
  /** Go stack of a panic, or a JavaScript stack. */
  stack?: string;
}

export interface CrdplayVersion {
  /** Git commit the wasm was built from; empty when the build had no VCS information. */
  revision: string;
  /** The build had uncommitted changes. */
  modified: boolean;
  /** Go version that built the wasm, e.g. "go1.26.8". */
  go: string;
  /** Kubernetes version the engine answers as (its /version gitVersion), e.g. "v1.37.2". */
  kubernetes: string;
  /** The minor it emulates, from /version's emulationMajor and emulationMinor ("1.35"; the newest when the
   * engine was not asked to emulate an older one). */
  emulated: string;
  /** The minors the engine can emulate, oldest first ("1.34" ... "1.37"). */
  emulatedVersions: string[];
}

/**
 * A conversion webhook implemented by the page. It gets the ConversionReview the engine would POST (JSON text)
 * and the CRD's spec.conversion.webhook.clientConfig (JSON text), and returns the response ConversionReview as
 * JSON text. A thrown or rejected Error makes the call fail with error.message as the transport error, which
 * the engine reports as kube-apiserver reports an unreachable webhook.
 */
export type CrdplayWebhook = (review: string, clientConfig: string) => string | Promise<string>;

/** The engine's API: globalThis.crdplay. */
export interface Crdplay {
  /**
   * Serves one request. A watch (?watch=true, or a /watch/ path) is answered only with ?timeoutSeconds=N: the
   * response then holds the events of those N seconds, one JSON WatchEvent per line. Without it the answer is
   * a 400 Status, since a watch never ends by itself. Rejects with a CrdplayError only for a bridge fault.
   */
  request(req: CrdplayRequest): Promise<CrdplayResponse>;
  /** Replaces the store with an empty one. Requests in flight finish on the old store. */
  reset(): Promise<void>;
  /** Where the engine comes from. In the page, it throws until the client is ready. */
  version(): CrdplayVersion;
  /**
   * Sets the page's conversion webhook, used for every CRD with spec.conversion.strategy Webhook whatever its
   * URL; null removes it (webhook calls then fail as unreachable). Returns a CrdplayError, rather than
   * throwing, for anything but a function or null.
   */
  setWebhook(fn: CrdplayWebhook | null): CrdplayError | undefined;
}

/** Detail of the client's 'progress' event: bytes of the wasm received so far, of total (0 when unknown). */
export interface CrdplayProgress {
  loaded: number;
  total: number;
}

/** Detail of the client's 'ready' event and value of its ready Promise. */
export interface CrdplayReady {
  version: CrdplayVersion;
  /** Milliseconds since the page's navigation started (performance.now() of the page). */
  timings: {
    /** The wasm's response headers arrived. */
    fetched: number;
    /** The wasm was downloaded, compiled and instantiated. */
    compiled: number;
    /** The engine's main had run and globalThis.crdplay was set, in the worker. */
    ready: number;
    /** The page learnt that the engine was ready. */
    page: number;
  };
}

export interface CrdplayClientOptions {
  /** URL of worker.js. Default: next to client.js. */
  workerURL?: string | URL;
  /** URL of crdplay.wasm. Default: next to client.js. */
  wasmURL?: string | URL;
  /** URL of wasm_exec.js (from the Go toolchain that built the wasm). Default: next to client.js. */
  wasmExecURL?: string | URL;
  /** The Kubernetes minor the engine emulates ("1.35"), as kube-apiserver's --emulated-version; absent: the
   * newest. One worker serves one version (upstream keeps emulation process-wide). A version the engine
   * cannot emulate fails ready with the engine's message, which names the versions it can. */
  emulatedVersion?: string;
}

export interface CrdplayClientEventMap {
  progress: CustomEvent<CrdplayProgress>;
  ready: CustomEvent<CrdplayReady>;
  failed: CustomEvent<CrdplayError>;
  exit: CustomEvent<{ code: number | null }>;
}

/** The page's crdplay (client.js): the engine's API, proxied to the worker, plus loading state. */
export interface CrdplayClient extends Crdplay, EventTarget {
  /** Resolves once the engine serves; rejects with a CrdplayError if it cannot start. */
  readonly ready: Promise<CrdplayReady>;
  /** The latest 'progress' event's detail (null before the first), for listeners added late. */
  readonly lastProgress: CrdplayProgress | null;
  /** Stops the worker; every later call rejects. */
  terminate(): void;
  /** The minor the worker was asked to emulate (CrdplayClientOptions.emulatedVersion); "" for the newest. */
  readonly emulatedVersion?: string;
  /**
   * Calls another function of the engine's bridge (evaluate, kubectl, ... as the wasm provides them) with one
   * structured-cloneable argument; rejects with a CrdplayError when there is no such function.
   */
  call(method: string, arg?: unknown): Promise<any>;
  /** Whether the engine has the function (false until ready). */
  has(method: string): boolean;
  addEventListener<K extends keyof CrdplayClientEventMap>(
    type: K,
    listener: (ev: CrdplayClientEventMap[K]) => void,
    options?: boolean | AddEventListenerOptions,
  ): void;
  addEventListener(
    type: string,
    listener: EventListenerOrEventListenerObject | null,
    options?: boolean | AddEventListenerOptions,
  ): void;
}

// ---------------------------------------------------------------------------------------------------------
// crdplay.evaluate: the playground's results (Go package crdplay/playground, bridged in wasm/main_js.go).
//
// In the worker the engine's global has evaluate(inputJSON): Promise<resultJSON>; the page reaches it through
// the client as crdplay.call('evaluate', JSON.stringify(input)). Strings both ways: JSON.parse of the answer
// is much faster than copying a deep tree across the bridge. Every answer in a result (statuses, bodies,
// causes, warnings, tables, objects in other versions) is what the engine's REST API returned; positions,
// marks, costs and schema trees are computed around those answers. The evaluation runs on an engine of its
// own: it never touches the store that request() serves. A malformed input (not a string, not JSON, an
// unknown mode) rejects with a CrdplayError; problems with the texts are diagnostics in the result.

/** Operation on the objects: create (POST); update (old objects created, new ones PUT over them with their
 * resourceVersion, like kubectl replace); status (PUT /status over the old object, or over the object itself
 * created first); scale (create, then GET /scale or PUT replicas); delete (create, then DELETE); upgrade (the
 * CRD created from oldCrds, the objects stored under it, crds PUT over it, then each object read, updated and
 * its status updated in every served version: the result's upgrade). */
export type CrdplayMode = 'create' | 'update' | 'status' | 'scale' | 'delete' | 'upgrade';

export interface CrdplayEvaluateInput {
  /** The CRD editor: CRDs as YAML or JSON documents separated by "---" lines. Omit it to keep the text of the
   * previous evaluation (the CRDs then stay installed and only the objects run: the fast path). */
  crds?: string;
  /** The object editor: custom resources, one per document; a List document (kind List, CronTabList...) stands
   * for its items, as with kubectl create -f. */
  objects: string;
  /** The old-object editor, for 'update' and 'status'. */
  oldObjects?: string;
  /** The old-CRD editor, for 'upgrade' (crds is then the new CRD). Omit it to keep the previous text. */
  oldCrds?: string;
  /** Default 'create'. */
  mode?: CrdplayMode;
  /** fieldValidation of the writes; omitted, the API behaves as for Warn (kubectl sends Strict). */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** For namespaced objects without metadata.namespace; default "default". */
  namespace?: string;
  /** Written to /scale in 'scale' mode; omitted, /scale is only read. */
  replicas?: number;
  /** The crdRevision of a result the page still holds: when current, schema trees are left out
   * (schemasOmitted) since they are the same. */
  knownCRDRevision?: string;
  /** Return every HTTP exchange in exchanges. */
  trace?: boolean;
  /** Leave out tables (and the requests that make them). */
  skipTables?: boolean;
  /** Leave the playground's analysis of newly installed CRDs (cost reports, compat, explain trees, objects'
   * runtime costs) for the next evaluation without it; the result says analysisPending. */
  deferAnalysis?: boolean;
  /** 'upgrade': the CRD texts of earlier releases, oldest first. The first is created and each later one (then
   * oldCrds) applied over what the one before left, as a cluster that followed those releases holds them
   * (status.storedVersions accumulate). Their diagnostics have source 'history' and the text's index in text. */
  history?: string[];
  /** 'upgrade': the old CRDs' status.storedVersions by CRD name, as a cluster holds them, written through the
   * API's /status before any object is stored. An old CRD document that carries status.storedVersions (as
   * kubectl get crd -o yaml exports it) gives its own unless named here. */
  storedVersions?: Record<string, string[]>;
  /** 'upgrade': keep static findings errors even when no stored object shows them biting (crdify's
   * defaults); otherwise such findings are warnings. */
  strict?: boolean;
  /** 'upgrade': run the storage migration the API's refusal of a new CRD asks for when a version it drops is
   * still in status.storedVersions (every stored object read and written back, status.storedVersions set to
   * the storage version, the new CRD sent again), all through the API: the report's migrations. */
  migrate?: boolean;
  /** Send each object document as kubectl v1.37 does: converted to JSON on the client (a key given twice
   * keeps its last value), instead of the document as written, which the API decodes strictly. */
  clientJSON?: boolean;
}

/** A range of an editor's text: 1-based lines, 1-based columns in UTF-16 code units (as JavaScript and
 * CodeMirror count), exclusive end. */
export interface CrdplaySpan {
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

/** The editors; 'history' is one of the input's history texts ('upgrade'), which no editor shows (the page
 * never sends any). */
export type CrdplaySource = 'crds' | 'objects' | 'oldObjects' | 'oldCrds' | 'history';

/** An error, warning or note placed at the field it names. */
export interface CrdplayDiagnostic extends CrdplaySpan {
  source: CrdplaySource;
  /** Index among the editor's non-empty documents; -1 for a bad "---" separator line. */
  document: number;
  /** 1 + the index of the object among the items of a List document (kind List, CronTabList...); absent when
   * the document is the object. */
  item?: number;
  /** The field path as the API reported it (spec.replicas, spec.validation.openAPIV3Schema.properties[spec]...). */
  field?: string;
  /** The cause's type (FieldValueInvalid...), the Status reason without causes (BadRequest...), "Warning",
   * "YAMLSyntax", "NoKindMatch", "MissingKind", "NotAnObject", "NamesAccepted:<reason>", "Seeded", ... */
  type: string;
  /** Upstream's message, in the words a person reads: the API's or go-yaml's, except where the API speaks of the
   * document it was sent (its line numbers, the hex of a body it could not decode) or of Go types; detail then
   * has the API's whole message. */
  message: string;
  severity: 'error' | 'warning' | 'info';
  /** The API's whole message when message says it otherwise; for a document that is not YAML, the API's answer. */
  detail?: string;
  /** The causes of the same answer that follow from this problem (the CEL rules not checked because of it, the
   * scale subresource reading the same value): not problems of their own, and not counted. */
  notes?: CrdplayNote[];
  /** False when the field is not in the text and the span is its nearest ancestor (a missing required field,
   * a path of upstream's internal CRD layout). */
  exact: boolean;
  /** The index in the input's history of the text a 'history' diagnostic is in; absent (0) otherwise. */
  text?: number;
  /** The next step that resolves the problem, in upstream's terms, where there is one ('upgrade': the storage
   * migration for a stored version removed, a default for a new required field, ...). */
  fix?: string;
}

/** A cause of the API's answer that follows from a diagnostic's problem: field, type and message as the API gave them. */
export interface CrdplayNote {
  field?: string;
  type: string;
  message: string;
  /** Where the note applies when elsewhere in the document: for the rules not checked, the first field with rules. */
  span?: CrdplaySpan;
}

export interface CrdplayCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface CrdplayCELLimits {
  /** Estimated cost x cardinality allowed per rule at CRD creation (10,000,000). */
  perExpression: number;
  /** Sum of a version's estimated costs (100,000,000). */
  perCRD: number;
  /** Runtime cost of one evaluation of one rule (1,000,000). */
  perCall: number;
  /** Runtime cost of all rules on one object (10,000,000). */
  runtimeBudget: number;
}

/** A CEL rule and its estimated cost, as CRD validation computes it. */
export interface CrdplayRuleCost {
  /** spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule */
  field: string;
  /** Object path the rule runs at ("self"): "" for the root, "spec", "spec.tags[*]". */
  self: string;
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  /** Uses oldSelf: runs on updates only (unless optionalOldSelf). */
  transition: boolean;
  optionalOldSelf?: boolean;
  /** CEL's worst-case cost of one evaluation. */
  maxCost: number;
  /** How many times it can run per object. */
  cardinality: number;
  /** cardinality from maxItems/maxProperties (true) or CEL's size estimate (false). */
  cardinalityBounded: boolean;
  /** maxCost x cardinality, compared with perExpression. NB: may exceed 2^53 (saturates at 2^64-1). */
  cost: number;
  messageExpressionCost?: number;
  exceedsLimit: boolean;
  /** Compile error. */
  error?: string;
  /** Where the rule is in the CRD text. */
  span?: CrdplaySpan;
}

export interface CrdplayVersionCost {
  version: string;
  rules: CrdplayRuleCost[];
  /** Sum of rules' and messageExpressions' costs, compared with perCRD. */
  total: number;
  exceedsLimit: boolean;
  /** Why there is no report (a schema that is not structural). */
  skipped?: string;
}

/** A node of a version's explain tree (kubectl explain), for the explain pane, hover and completion. */
export interface CrdplaySchemaNode {
  /** Field name; "[*]" for list items and map values; "" for the root. */
  name: string;
  /** Object path: "spec.containers[*].name". */
  path: string;
  type?: string;
  /** As kubectl explain prints it: "Object", "[]string", "map[string]Object", "IntOrString". */
  explain: string;
  format?: string;
  description?: string;
  required?: boolean;
  nullable?: boolean;
  default?: unknown;
  enum?: unknown[];
  validations?: CrdplaySchemaValidations;
  rules?: CrdplaySchemaRule[];
  intOrString?: boolean;
  preserveUnknownFields?: boolean;
  embeddedResource?: boolean;
  listType?: string;
  listMapKeys?: string[];
  mapType?: string;
  combinators?: CrdplaySchemaCombinators;
  /** Where this node's schema is in the CRD text. */
  span?: CrdplaySpan;
  /** apiVersion, kind and metadata (ObjectMeta's fields) added where the schema leaves them out, as kubectl
   * explain shows them; they have no span. */
  builtin?: boolean;
  properties?: CrdplaySchemaNode[];
  items?: CrdplaySchemaNode;
  additionalProperties?: CrdplaySchemaNode;
}

/** A schema node's value validations, as the CRD's schema has them. */
export interface CrdplaySchemaValidations {
  minimum?: number;
  exclusiveMinimum?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
}

/** An x-kubernetes-validations rule of a schema node. */
export interface CrdplaySchemaRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** How many allOf, anyOf and oneOf schemas a node has, and whether it has a not. */
export interface CrdplaySchemaCombinators {
  allOf?: number;
  anyOf?: number;
  oneOf?: number;
  not?: boolean;
}

/** An additionalPrinterColumns entry. */
export interface CrdplayPrinterColumn {
  name: string;
  type: string;
  jsonPath: string;
  priority?: number;
}

export interface CrdplayVersionInfo {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  statusSubresource?: boolean;
  scaleSubresource?: boolean;
  columns?: CrdplayPrinterColumn[];
  cel: CrdplayVersionCost;
  /** Absent without a schema, or when schemasOmitted. */
  schema?: CrdplaySchemaNode;
}

/** A CRD's status.acceptedNames. */
export interface CrdplayNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

/** The API's answer to one CRD document. */
export interface CrdplayCRDResult {
  document: number;
  startLine: number;
  endLine: number;
  name?: string;
  /** HTTP status of the POST (201 created). */
  status: number;
  accepted: boolean;
  /** The Status body when refused: the exact 4xx. */
  error?: any;
  warnings: string[];
  established: boolean;
  acceptedNames?: CrdplayNames;
  conditions?: CrdplayCondition[];
  group?: string;
  scope?: string;
  /** Versions served once established. */
  served: string[];
  storage?: string;
  /** Discovery's preferred version (kubectl get lists in it). */
  preferred?: string;
  /** "None" or "Webhook". */
  conversion?: string;
  /** The versions as the text declares them, also when refused. */
  versions: CrdplayVersionInfo[];
  /** The oldest Kubernetes minor version that accepts the CRD as written; absent when the document is not a CRD. */
  compat?: CrdplayCompatReport;
}

/** The Kubernetes 1.x minor versions a compatibility report considers: newest is the engine's own. */
export interface CrdplayKubernetesRange {
  oldest: number;
  newest: number;
  /** The release the engine is, as /version's gitVersion reports it ("v1.37.2"). */
  version: string;
  /** The minor the engine emulates ("1.35"); the newest when not emulating. */
  emulated: string;
}

/** What a server older than a reason's minor does: answers 422 ("refused"), or drops or does not enforce the
 * feature ("ignored"). */
export type CrdplayCompatEffect = 'refused' | 'ignored';

/** One field that servers older than minor refuse or ignore. */
export interface CrdplayCompatReason {
  /** The field as CRD validation errors name it (spec.versions[0].schema.openAPIV3Schema...rule). */
  field: string;
  /** What the field uses: "semver", "syntax '.?'", "optionalOldSelf", "selectableFields", "format ...". */
  feature?: string;
  /** The CEL library or feature gate that brings feature ("kubernetes.Semver", "CustomResourceFieldSelectors"). */
  library?: string;
  /** The oldest minor from which every server accepts and honours the field. */
  minor: number;
  effect: CrdplayCompatEffect;
  /** One line for the user: "needs Kubernetes 1.34 or later: semver (kubernetes.Semver)". */
  message: string;
  /** The compile error of the newest server that refuses the rule. */
  detail?: string;
  span?: CrdplaySpan;
}

/** A rule's estimated cost in the environment of one minor's new CRDs. */
export interface CrdplayCompatCost {
  minor: number;
  cost: number;
}

/** The version report of one x-kubernetes-validations rule; field is its CrdplayRuleCost's field. */
export interface CrdplayCompatRule {
  field: string;
  /** The oldest minor from which every server up to the newest accepts the rule; 0 when none does. */
  minor: number;
  reasons?: CrdplayCompatReason[];
  /** The minors whose estimated cost differs from the newest's, oldest first. */
  costs?: CrdplayCompatCost[];
}

/** The version report of one CRD. */
export interface CrdplayCompatReport {
  /** The oldest minor that accepts the CRD and honours everything it uses; 0 when no minor accepts it. */
  minor: number;
  /** The fields that need more than the oldest minor, newest minor first. */
  reasons: CrdplayCompatReason[];
  /** One entry per rule of the versions' cost reports, in their order. */
  rules: CrdplayCompatRule[];
  /** Where the engine, emulating an older minor, answers the CRD otherwise than a real server of that minor. */
  emulation?: CrdplayCompatEmulation;
}

/** What an engine emulating an older minor answers otherwise than a real server of that minor: new CEL rules
 * and formats follow the compatibility version, which emulation cannot lower below the binary's floor. */
export interface CrdplayCompatEmulation {
  /** The minor the engine emulates. */
  minor: number;
  /** The compatibility version the engine compiles new CEL rules and checks formats for (a real server of
   * `minor` has `minor - 1`). */
  compatibility: number;
  /** The fields (as CrdplayCompatReason.field names them) the engine answers otherwise. */
  fields: string[];
  /** Which and why, in one sentence. */
  message: string;
}

/** A field that differs between the input and the stored object. */
export interface CrdplayMark {
  /** pruned (unknown field, or a null not allowed), defaulted, server (metadata the server sets), ignored (not
   * written through this endpoint: status on the main resource with the subresource on; all but status on
   * /status), changed. */
  kind: 'pruned' | 'defaulted' | 'server' | 'ignored' | 'changed';
  path: string;
  /** Stored value (for pruned: the input's). */
  value?: unknown;
  /** Span in the object's editor text. */
  input?: CrdplaySpan;
  /** Span in storedYAML. */
  stored?: CrdplaySpan;
}

export interface CrdplayVersionView {
  version: string;
  status: number;
  /** The body: the object, or a Status (a failed conversion). */
  object?: any;
  /** As kubectl get -o yaml prints it (no managedFields). */
  yaml?: string;
  warnings: string[];
  /** The Status message when the read failed. */
  error?: string;
}

/** The CEL budget one object's validation used. */
export interface CrdplayRuntimeCost {
  used: number;
  budget: number;
}

/** The API's answer for one object document. */
export interface CrdplayObjectResult {
  source: CrdplaySource;
  document: number;
  /** 1 + the object's index among the items of a List document, which stands for its items as with
   * kubectl create -f; absent when the document is the object. */
  item?: number;
  startLine: number;
  endLine: number;
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  /** As stored (generateName). */
  name?: string;
  /** create, update, status, scale, delete; absent when nothing could be sent (see the diagnostics). */
  operation?: string;
  method?: string;
  path?: string;
  status: number;
  accepted: boolean;
  /** The main request's body: the object, a Scale, or a Status. */
  response?: any;
  /** Warning headers, unquoted; ratcheted CEL errors among them. */
  warnings: string[];
  /** The object as held after the operation (absent if rejected or deleted). */
  stored?: any;
  /** stored as kubectl get -o yaml prints it (no managedFields); marks' stored spans point into it. */
  storedYAML?: string;
  marks: CrdplayMark[];
  /** The object read in every served version. */
  versions: CrdplayVersionView[];
  /** CEL runtime cost used validating this object, when its version has rules. */
  cel?: CrdplayRuntimeCost;
  /** An old object this CRD refuses, stored without validation (as under an earlier CRD) to show ratcheting. */
  seeded?: boolean;
  /** Gone after a delete. */
  deleted?: boolean;
}

/** A column of a kubectl get table; wide: priority > 0, shown by -o wide only. */
export interface CrdplayTableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority: number;
  wide: boolean;
}

/** One object's row: its cells in column order (strings, numbers, booleans or null). */
export interface CrdplayTableRow {
  namespace?: string;
  name: string;
  cells: unknown[];
}

/** kubectl get -A for one CRD, in its preferred version. */
export interface CrdplayTable {
  crd: string;
  version: string;
  path: string;
  status: number;
  columns: CrdplayTableColumn[];
  rows: CrdplayTableRow[];
  error?: string;
}

/** One HTTP request of an evaluation (with trace) and the API's response. */
export interface CrdplayExchange {
  method: string;
  path: string;
  contentType?: string;
  accept?: string;
  requestBody?: string;
  status: number;
  warnings: string[];
  body: string;
}

/** An evaluation's times, in milliseconds. */
export interface CrdplayTimings {
  total: number;
  /** Installing the CRDs (0 when cached). */
  crds: number;
  /** The rest: the objects. */
  objects: number;
  /** The part of crds spent in the engine's handler (the rest is cost estimation and the explain trees). */
  crdEngine: number;
  /** The part of objects spent splitting and decoding the object texts. */
  parse: number;
  /** The part of objects spent in the engine's handler (the rest is placing the answers in the texts). */
  objectEngine: number;
  /** The analysis an earlier evaluation deferred (deferAnalysis), done in this one. */
  analysis?: number;
}

export interface CrdplayEvaluateResult {
  /** Changes whenever the CRD text does; send it back as knownCRDRevision. */
  crdRevision: string;
  /** The CRDs were already installed from the same text; only the objects ran. */
  crdCached: boolean;
  schemasOmitted: boolean;
  /** deferAnalysis left the CRDs' analysis for later: no rules' costs, compat, schema trees or objects' CEL
   * costs yet. */
  analysisPending?: boolean;
  crds: CrdplayCRDResult[];
  oldObjects: CrdplayObjectResult[];
  objects: CrdplayObjectResult[];
  /** Absent when the input had skipTables. */
  tables?: CrdplayTable[];
  diagnostics: CrdplayDiagnostic[];
  celLimits: CrdplayCELLimits;
  /** The Kubernetes minor versions the CRDs' compat reports consider. */
  kubernetes: CrdplayKubernetesRange;
  /** The 'upgrade' mode's report. */
  upgrade?: CrdplayUpgradeReport;
  exchanges?: CrdplayExchange[];
  timings: CrdplayTimings;
}

/** What a CRD change does to stored objects ('upgrade' mode): the API's answer to the new CRD PUT over the old
 * one, what each object meets afterwards, and the static findings with the engine's evidence. */
export interface CrdplayUpgradeReport {
  /** safe: nothing refused, no finding; warnings: nothing refused, findings no stored object shows; breaks: a
   * stored object's read or write, or the object sent again as new, is refused because of the upgrade (or the
   * input could not be checked in full); refused: the API refuses a new CRD. */
  verdict: 'safe' | 'warnings' | 'breaks' | 'refused';
  /** The verdict in a sentence: "safe", "safe with 3 warnings", "breaks 2 stored objects", "refused by the
   * API: 1 of 8 CRDs". */
  summary: string;
  /** The first of crds (kept for compatibility). */
  crd: CrdplayUpgradeCRD;
  /** Every CRD of the two texts, paired by name: in the new text's order those updated (PUT over the old one)
   * and added (POSTed), then those only the old text has (removed: left as they are). */
  crds: CrdplayUpgradeCRD[];
  /** The storage migrations the input's migrate ran, one per CRD whose update the API refused for a stored
   * version. */
  migrations?: CrdplayMigration[];
  /** One per stored object, in the order of the object text. */
  objects: CrdplayUpgradeObject[];
  findings: CrdplayFinding[];
}

/** The API's answer to one CRD of the upgrade: the new CRD PUT over the stored old one (updated), POSTed
 * (added), or nothing sent (removed). */
export interface CrdplayUpgradeCRD {
  name: string;
  /** updated: PUT over the old CRD; added: POSTed (the old text does not have it); removed: only the old text
   * has it, left as it is. Empty in a migration's retry that was not sent. */
  change: 'updated' | 'added' | 'removed' | '';
  /** Where the CRD is: the new text, or the old one (or a history text) for a removed CRD. */
  source: CrdplaySource;
  document: number;
  /** The document's first line. */
  line: number;
  /** The old CRD's status.storedVersions before the update, as the API held them. */
  storedVersions?: string[];
  /** How many stored objects the CRD has. */
  objects: number;
  /** HTTP status of the PUT (200 accepted) or POST (201); 0 when it could not be sent (the old CRD was
   * refused; a removed CRD). */
  status: number;
  accepted: boolean;
  /** The Status body when refused (a stored version removed, a scope change...). */
  error?: any;
  /** The Warning headers, unquoted; null in a migration's retry that was not sent. */
  warnings: string[];
}

/** A storage migration run through the API (the input's migrate): what the "Versions in
 * CustomResourceDefinitions" page says to do before a version can leave status.storedVersions. */
export interface CrdplayMigration {
  crd: string;
  /** The stored versions before (null when the CRD could not be read). */
  from: string[] | null;
  /** The storage version the objects are rewritten in. */
  to: string;
  /** Stored objects read and written back in the storage version. */
  rewritten: number;
  /** Those whose write the API refused ("namespace/name: message"). */
  failed: string[];
  /** The answer to the PUT of status.storedVersions; 0 when it was not sent (an object's rewrite failed). */
  status: number;
  /** The answer to the new CRD sent again; status 0 when it was not sent. */
  retry: CrdplayUpgradeCRD;
}

/** One stored object after the upgrade. */
export interface CrdplayUpgradeObject {
  /** The name of the CRD that stores it. */
  crd: string;
  document: number;
  item?: number;
  kind: string;
  namespace?: string;
  name: string;
  /** The old CRD refused the object: it was written to storage directly, as under an earlier CRD. */
  seeded: boolean;
  /** The old CRD's refusal. */
  seedReason?: string;
  /** The requests made of the object after the upgrade, per version the new CRD serves. */
  checks: CrdplayUpgradeCheck[];
  /** The same writes (dryrun, update, status) made under the old CRD before the upgrade, with dryRun=All: a
   * refusal they share with checks existed before the upgrade and is not caused by it. */
  before: CrdplayUpgradeCheck[];
}

/** One request made of a stored object after the upgrade, in one served version, and the API's answer. */
export interface CrdplayUpgradeCheck {
  version: string;
  /** get: what a client now reads; update: a no-op PUT of what was read; status: the same PUT to /status;
   * dryrun: what was read sent as a new object with dryRun=All (the new schema without ratcheting). */
  op: 'get' | 'update' | 'status' | 'dryrun';
  status: number;
  /** The Status body when the request failed. */
  error?: any;
  warnings: string[];
  /** The object as the GET returned it. */
  object?: any;
}

/** A static finding of the CRD change, placed in the new CRD (the old one for removals: source 'oldCrds'),
 * with what the engine showed of it. */
export interface CrdplayFinding extends CrdplaySpan {
  /** The name of the CRD the finding is about. */
  crd: string;
  /** The check: "maximum", "required", "storedVersionRemoval", ... */
  rule: string;
  /** crddiff's severity when refuses; otherwise an error finding is a warning unless the input was strict. */
  severity: 'error' | 'warning' | 'info';
  version?: string;
  /** Path in the CRD text (spec.versions[1].schema.openAPIV3Schema.properties.spec...maximum). */
  field: string;
  /** The field in the objects (spec.replicas). */
  objectPath?: string;
  message: string;
  source: CrdplaySource;
  document: number;
  /** False when the span is the field's nearest ancestor in the text. */
  exact: boolean;
  /** The stored objects ("namespace/name") the engine showed it biting. */
  affected: string[];
  /** "2 of 3 objects now fail their next update: ..." or "no stored object is affected". */
  evidence: string;
  /** The evidence is a refusal the upgrade causes: the CRD update, a stored object's write, or a stored object
   * sent again as new. */
  refuses: boolean;
  /** The next step, where there is one. */
  fix?: string;
}

// ---------------------------------------------------------------------------------------------------------
// crdplay.kubectl: a kubectl command line over the engine's API (Go package crdplay/playground/kubectl, bridged
// in wasm/main_js.go). It prints what real kubectl v1.37 prints and makes the requests it makes, against the
// store that request() serves. The page reaches it through the client as crdplay.call('kubectl', input).

/** One kubectl command line. */
export interface CrdplayKubectlInput {
  /**
   * The command line as typed ("kubectl get ct -o wide"; the leading "kubectl" is optional), split as a shell
   * splits it (quotes, backslashes; pipes, redirections and variables are refused), or its words.
   */
  args: string | string[];
  /** The files -f and --patch-file can name, by name: the editors' texts, e.g. {"crd.yaml": "...", "objects.yaml": "..."}. */
  files?: Record<string, string>;
  /** The namespace of the current context, for commands without -n. Default "default". */
  namespace?: string;
}

/** One HTTP exchange of a kubectl command, for the raw HTTP log, in the order the command made them. */
export interface CrdplayKubectlExchange {
  method: string;
  /** URL path, e.g. "/apis/stable.example.com/v1/namespaces/default/crontabs". */
  path: string;
  /** Raw query without "?", e.g. "limit=500"; "" when there is none. */
  query: string;
  /** Accept and Content-Type, as sent. */
  requestHeaders?: Record<string, string>;
  /** "" for requests without a body. */
  requestBody: string;
  status: number;
  /** Content-Type, and Warning (several joined by newlines). */
  responseHeaders?: Record<string, string>;
  /** The API's answer as it sent it (JSON; a watch's events one per line). */
  responseBody: string;
}

/** What the command printed, as a terminal would show it. */
export interface CrdplayKubectlResult {
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved in the order a terminal shows them. */
  output: string;
  /** kubectl's exit code: 0, or 1 for an error; 2 when the command line itself cannot be split. */
  exitCode: number;
  requests: CrdplayKubectlExchange[];
}

// ---------------------------------------------------------------------------------------------------------
// crdplay.cel: the CEL scratchpad (Go: playground.Session.CEL, bridged in wasm/main_js.go). An expression
// compiled as an x-kubernetes-validations rule at a node of an installed CRD's schema would be (upstream's
// cel.Compile, the environment, compatibility version and cost limits of the CRD's own rules), and evaluated
// on an object with self and oldSelf bound as upstream's validator binds them. The page reaches it as
// crdplay.call('cel', JSON.stringify(input)). It uses the CRDs the last evaluation installed.

export interface CrdplayCELInput {
  /** The expression, as a rule's text. */
  expression: string;
  /** metadata.name of the CRD; absent: the first CRD the CRD editor installed. */
  crd?: string;
  /** The version whose schema the rule sits in; absent: the storage version. */
  version?: string;
  /** The node the rule sits on: "" (absent) for the root, "spec.tags[*]" for a list's items or a map's values. */
  self?: string;
  /** The rule's optionalOldSelf: oldSelf is then an optional. */
  optionalOldSelf?: boolean;
  /** The object (one YAML or JSON document); absent compiles only. */
  object?: string;
  /** The stored object of an update, for oldSelf. */
  oldObject?: string;
}

export interface CrdplayCELResult {
  crd?: string;
  version?: string;
  /** The nodes the version's own rules sit on, the root ("") first: choices for self. */
  selves: string[];
  /** The CEL environment's compatibility version ("1.36"): new rules compile for it. */
  compatibility?: string;
  /** Why nothing was evaluated: no CRD installed, no schema, a self the schema has not. */
  error?: string;
  /** Why the object or old object could not be read (the expression is still compiled). */
  objectError?: string;
  /** The compilation and the values; absent with error. */
  scratch?: CrdplayScratchResult;
}

export interface CrdplayScratchResult {
  /** The expression's CEL type ("bool", "list(string)", "object"); absent when it does not compile. */
  type?: string;
  /** Compile errors, each at its 1-based line and column in the expression. */
  errors?: CrdplayScratchIssue[];
  /** The API's refusal of the expression as a rule ("compilation failed: ...", "cel expression must evaluate to a bool"). */
  asRule?: string;
  /** A transition rule: not evaluated without an old value unless optionalOldSelf. */
  usesOldSelf: boolean;
  /** Estimated cost of one evaluation, times its cardinality: what CRD validation holds to celLimits.perExpression. */
  maxCost: number;
  cardinality: number;
  cardinalityBounded: boolean;
  cost: number;
  exceedsLimit: boolean;
  /** One per node of the object that self names. */
  values: CrdplayScratchValue[];
  /** The evaluations' actual cost, of the object's runtime budget. */
  runtimeCost: number;
}

export interface CrdplayScratchIssue {
  message: string;
  line: number;
  column: number;
}

export interface CrdplayScratchValue {
  /** The node's path in the object ("spec.tags[0]"; "" for the root). */
  path: string;
  /** The value as JSON; absent with error or skipped (and for null). */
  value?: unknown;
  /** The evaluation's error (no such key, the per-call cost limit). */
  error?: string;
  /** Why the API would not evaluate a rule here. */
  skipped?: string;
  cost: number;
}

/** The engine's global in the worker also has evaluate, cel and kubectl (the page: client.call('evaluate' | 'cel' | 'kubectl', ...)). */
export interface CrdplayEngine extends Crdplay {
  /** JSON.stringify(CrdplayEvaluateInput) in; JSON of a CrdplayEvaluateResult out. */
  evaluate(inputJSON: string): Promise<string>;
  /** JSON.stringify(CrdplayCELInput) in; JSON of a CrdplayCELResult out. */
  cel(inputJSON: string): Promise<string>;
  /**
   * Runs a kubectl command line. Rejects with a CrdplayError only for a malformed input (not an object, args
   * neither a string nor an array of strings...); kubectl's own errors are in stderr and exitCode.
   */
  kubectl(input: CrdplayKubectlInput): Promise<CrdplayKubectlResult>;
}

declare global {
  /** The engine in its worker; the CrdplayClient in a page that called install(). */
  var crdplay: Crdplay | undefined;
}
