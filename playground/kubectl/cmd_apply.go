package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// lastAppliedAnnotation is where client-side apply keeps the configuration it applied last.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

const stopValidateMessage = "if you choose to ignore these errors, turn validation off with --validate=false"

// dryRun is kubectl's DryRunStrategy.
type dryRun int

const (
	dryRunNone dryRun = iota
	dryRunClient
	dryRunServer
)

func addDryRunFlag(cmd *command) {
	cmd.Flags().String("dry-run", "none", `Must be "none", "server", or "client".`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "unchanged"
}

func getDryRun(cmd *command) (dryRun, error) {
	v, _ := cmd.Flags().GetString("dry-run")
	if b, err := strconv.ParseBool(v); err == nil {
		if b {
			return dryRunClient, nil
		}
		return dryRunNone, nil
	}
	switch v {
	case "unchanged", "client":
		return dryRunClient, nil
	case "server":
		return dryRunServer, nil
	case "none":
		return dryRunNone, nil
	}
	return dryRunNone, fmt.Errorf(`Invalid dry-run value (%v). Must be "none", "server", or "client".`, v)
}

// withDryRun is PrintFlagsWithDryRunStrategy: the operation printed after the name.
func withDryRun(operation string, d dryRun) string {
	switch d {
	case dryRunClient:
		return operation + " (dry run)"
	case dryRunServer:
		return operation + " (server dry run)"
	}
	return operation
}

func addValidateFlag(cmd *command) {
	cmd.Flags().String("validate", "strict", `Must be one of: strict (or true), warn, ignore (or false).`)
	cmd.Flags().Lookup("validate").NoOptDefVal = "strict"
}

func getValidationDirective(cmd *command) (string, error) {
	v, _ := cmd.Flags().GetString("validate")
	if b, err := strconv.ParseBool(v); err == nil {
		if b {
			return "Strict", nil
		}
		return "Ignore", nil
	}
	switch v {
	case "strict":
		return "Strict", nil
	case "warn":
		return "Warn", nil
	case "ignore":
		return "Ignore", nil
	}
	return "Strict", fmt.Errorf(`invalid - validate option %q; must be one of: strict (or true), warn, ignore (or false)`, v)
}

// validator is kubectl's schema validator for one command: with Strict or Warn it asks the server's OpenAPI
// whether the kind's PATCH takes fieldValidation, and leaves validation to the server when it does.
func (k *kubectl) validator(directive string) func(raw []byte, source string) error {
	if directive == "Ignore" {
		return nil
	}
	return func(raw []byte, source string) error {
		out, err := utilyaml.ToJSON(raw)
		if err == nil {
			var obj interface{}
			if err = json.Unmarshal(out, &obj); err == nil {
				var gvk schema.GroupVersionKind
				gvk, err = objectKind(obj)
				if err == nil {
					var ok bool
					ok, err = k.supportsFieldValidation(gvk)
					if err == nil && !ok && directive == "Strict" {
						// kubectl would validate against /openapi/v2 on the client; every server the
						// playground talks to validates fields itself.
						err = nil
					}
				}
			}
		}
		if err != nil {
			return fmt.Errorf("error validating %q: %v", source, fmt.Errorf("error validating data: %v; %s", err, stopValidateMessage))
		}
		return nil
	}
}

// objectKind is kubectl's validation getObjectKind.
func objectKind(obj interface{}) (schema.GroupVersionKind, error) {
	fields, ok := obj.(map[string]interface{})
	if !ok || fields == nil {
		return schema.GroupVersionKind{}, errors.New("invalid object to validate")
	}
	var errs []error
	var gv schema.GroupVersion
	switch v := fields["apiVersion"].(type) {
	case nil:
		errs = append(errs, errors.New("apiVersion not set"))
	case string:
		var err error
		if gv, err = schema.ParseGroupVersion(v); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, errors.New("apiVersion isn't string type"))
	}
	kind, isString := fields["kind"].(string)
	switch {
	case fields["kind"] == nil:
		errs = append(errs, errors.New("kind not set"))
	case !isString:
		errs = append(errs, errors.New("kind isn't string type"))
	}
	if errs != nil {
		return schema.GroupVersionKind{}, utilerrors.NewAggregate(errs)
	}
	return gv.WithKind(kind), nil
}

type applyOptions struct {
	files             fileOptions
	output            string
	template          string
	showManagedFields bool
	serverSide        bool
	forceConflicts    bool
	fieldManager      string
	selector          string
	prune             bool
	all               bool
	overwrite         bool
	openAPIPatch      bool
	force             bool
	subresource       string
}

func (k *kubectl) newApplyCommand() *command {
	o := &applyOptions{overwrite: true, openAPIPatch: true}
	cmd := &command{
		Use:                   "apply (-f FILENAME | -k DIRECTORY)",
		DisableFlagsInUseLine: true,
		Short:                 "Apply a configuration to a resource by file name or stdin",
		RunE: func(cmd *command, args []string) error {
			return k.runApply(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.BoolVar(&o.showManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	addFileFlags(cmd, &o.files, "that contains the configuration to apply")
	f.BoolVar(&o.overwrite, "overwrite", true, "Automatically resolve conflicts between the modified and live configuration by using values from the modified configuration")
	f.BoolVar(&o.prune, "prune", false, "Automatically delete resource objects, that do not appear in the configs and are created by either apply or create --save-config.")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&o.all, "all", false, "Select all resources in the namespace of the specified resource types.")
	f.StringArray("prune-allowlist", nil, "Overwrite the default allowlist with <group/version/kind> for --prune")
	f.BoolVar(&o.openAPIPatch, "openapi-patch", true, "If true, use openapi to calculate diff when the openapi presents and the resource can be found in the openapi spec.")
	f.BoolVar(&o.serverSide, "server-side", false, "If true, apply runs in the server instead of the client.")
	f.BoolVar(&o.forceConflicts, "force-conflicts", false, "If true, server-side apply will force the changes against conflicts.")
	f.StringVar(&o.fieldManager, "field-manager", "kubectl-client-side-apply", "Name of the manager used to track field ownership.")
	f.StringVar(&o.subresource, "subresource", "", "If specified, apply will operate on the subresource of the requested object.")
	f.String("applyset", "", "The name of the ApplySet that tracks which resources are being managed.")
	f.BoolVar(&o.force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion.")
	f.Int("grace-period", -1, "Period of time in seconds given to the resource to terminate gracefully.")
	f.Duration("timeout", 0, "The length of time to wait before giving up on a delete.")
	f.Bool("wait", false, "If true, wait for resources to be gone before returning.")
	f.String("cascade", "background", `Must be "background", "orphan", or "foreground".`)
	f.Bool("record", false, "Record current kubectl command in the resource annotation.")
	addDryRunFlag(cmd)
	addValidateFlag(cmd)
	return cmd
}

func (k *kubectl) runApply(cmd *command, o *applyOptions, args []string) error {
	if len(args) != 0 {
		return usageErrorf(cmd, "Unexpected args: %v", args)
	}
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	if !cmd.Flags().Changed("field-manager") {
		o.fieldManager = "kubectl-client-side-apply"
		if o.serverSide {
			o.fieldManager = "kubectl"
		}
	}
	if len(o.files.filenames) == 0 && o.files.kustomize == "" {
		return fmt.Errorf("must specify one of -f and -k")
	}
	directive, err := getValidationDirective(cmd)
	if err != nil {
		return err
	}
	// Validate.
	if o.forceConflicts && !o.serverSide {
		return fmt.Errorf("--force-conflicts only works with --server-side")
	}
	if dry == dryRunClient && o.serverSide {
		return fmt.Errorf("--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)")
	}
	if o.serverSide && o.force {
		return fmt.Errorf("--force cannot be used with --server-side")
	}
	if o.all && o.selector != "" {
		return fmt.Errorf("cannot set --all and --selector at the same time")
	}
	if o.subresource != "" && !o.serverSide {
		return fmt.Errorf("--subresource can only be specified for --server-side")
	}
	if o.prune {
		return &notSupportedError{what: "--prune"}
	}
	if err := checkFileOptions(o.files); err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}

	infos, errs := k.readFiles(o.files, k.namespace, k.explicitNamespace, k.validator(directive))
	infos, err = filterByLabels(infos, o.selector)
	if err != nil {
		return err
	}
	if len(infos) == 0 && len(errs) == 0 {
		return fmt.Errorf("no objects passed to apply")
	}
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields}
	for _, it := range infos {
		if err := k.applyOne(it, o, dry, directive, p); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 1 {
		return errs[0]
	}
	if len(errs) > 1 {
		return utilerrors.NewAggregate(errs)
	}
	// With -o json|yaml, kubectl prints the objects at the end, as one List when there are several.
	if o.output != "" && o.output != "name" {
		return k.printObjects(p, infos)
	}
	return nil
}

func (k *kubectl) printObjects(p *outputPrinter, infos []*info) error {
	if len(infos) == 0 {
		return nil
	}
	if len(infos) == 1 {
		return p.print(&k.out, infos[0].object)
	}
	items := make([]interface{}, 0, len(infos))
	for _, it := range infos {
		obj := it.object.Object
		if !p.showManagedFields {
			obj = omitManagedFields(obj)
		}
		items = append(items, obj)
	}
	list := map[string]interface{}{"apiVersion": "v1", "kind": "List", "metadata": map[string]interface{}{}, "items": items}
	list["metadata"] = map[string]interface{}{"resourceVersion": ""}
	if strings.ToLower(p.format) == "json" {
		return printJSON(&k.out, list)
	}
	return printYAML(&k.out, list)
}

// writeQuery is the query of a write: dryRun, fieldManager and fieldValidation as resource.Helper sets them.
func writeQuery(dry dryRun, fieldManager, directive string) url.Values {
	q := url.Values{}
	if dry == dryRunServer {
		q.Set("dryRun", "All")
	}
	if fieldManager != "" {
		q.Set("fieldManager", fieldManager)
	}
	if directive != "" {
		q.Set("fieldValidation", directive)
	}
	return q
}

// encode is runtime.Encode with the unstructured JSON scheme: compact JSON and a newline.
func encode(obj map[string]interface{}) []byte {
	data, _ := json.Marshal(obj)
	return append(data, '\n')
}

// applyOne is ApplyOptions.applyOneObject.
func (k *kubectl) applyOne(it *info, o *applyOptions, dry dryRun, directive string, p *outputPrinter) error {
	if it.name == "" {
		if gn := it.object.GetGenerateName(); gn != "" {
			return fmt.Errorf("from %s: cannot use generate name with apply", gn)
		}
	}
	p.operation = ""
	if o.serverSide {
		return k.serverSideApply(it, o, dry, directive, p)
	}
	modified, err := modifiedConfiguration(it.object, true)
	if err != nil {
		return addSourceToErr(fmt.Sprintf("retrieving modified configuration from:\n%s\nfor:", it.String()), it.source, err)
	}
	current, err := k.fetch(it.mapping, it.namespace, it.name, "")
	if err != nil {
		if !apierrors.IsNotFound(err) {
			return addSourceToErr(fmt.Sprintf("retrieving current configuration of:\n%s\nfrom server for:", it.String()), it.source, err)
		}
		// Create it, with the annotation.
		if err := createApplyAnnotation(it.object); err != nil {
			return addSourceToErr("creating", it.source, err)
		}
		pruneNulls(it.object.Object)
		if dry != dryRunClient {
			created, err := k.create(it, "kubectl-client-side-apply", directive, dry)
			if err != nil {
				return addSourceToErr("creating", it.source, err)
			}
			it.object = created
		}
		if p.format != "" && p.format != "name" {
			return nil
		}
		p.operation = withDryRun("created", dry)
		return p.print(&k.out, it.object)
	}

	if _, ok := current.GetAnnotations()[lastAppliedAnnotation]; !ok {
		fmt.Fprintf(&k.errOut, "Warning: resource %[1]s is missing the %[2]s annotation which is required by %[3]s apply. %[3]s apply should only be used on resources created declaratively by either %[3]s create --save-config or %[3]s apply. The missing annotation will be patched automatically.\n",
			it.mapping.gvr.Resource+"/"+it.name, lastAppliedAnnotation, "kubectl")
	}
	patch, patched, err := k.patchLive(it, current, modified, o, dry, directive)
	if err != nil {
		return addSourceToErr(fmt.Sprintf("applying patch:\n%s\nto:\n%v\nfor:", patch, it), it.source, err)
	}
	it.object = patched
	if patched.GetDeletionTimestamp() != nil {
		fmt.Fprintf(&k.errOut, "Warning: Detected changes to resource %[1]s which is currently being deleted.\n", patched.GetName())
	}
	if string(patch) == "{}" && (p.format == "" || p.format == "name") {
		p.operation = withDryRun("unchanged", dry)
		return p.print(&k.out, it.object)
	}
	if p.format != "" && p.format != "name" {
		return nil
	}
	p.operation = withDryRun("configured", dry)
	return p.print(&k.out, it.object)
}

// patchSimple is the patcher: a three-way merge patch from the last applied, the new and the live
// configuration. Kinds whose OpenAPI PATCH operation takes strategic merge patches get one; custom resources
// get a JSON merge patch.
func (k *kubectl) patchSimple(it *info, current *unstructured.Unstructured, modified []byte, o *applyOptions, dry dryRun, directive string) ([]byte, *unstructured.Unstructured, error) {
	currentJSON := encode(current.Object)
	original := []byte(nil)
	if v, ok := current.GetAnnotations()[lastAppliedAnnotation]; ok {
		original = []byte(v)
	}
	contentType := "application/merge-patch+json"
	if o.openAPIPatch && k.supportsStrategicMergePatch(it.mapping.gvk) {
		// For the kinds the playground serves, a strategic merge patch without patch strategies (no
		// x-kubernetes-patch-strategy in the CRD schema) has the content of the JSON merge patch.
		contentType = "application/strategic-merge-patch+json"
	} else if o.openAPIPatch {
		// kubectl consults /openapi/v2 for the patch type of a kind that /openapi/v3 does not give strategic
		// merge patches; it does not change the outcome for custom resources, but the request is made.
		k.fetchOpenAPIV2()
	}
	patch, err := threeWayMergePatch(original, modified, currentJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("creating patch with:\noriginal:\n%s\nmodified:\n%s\ncurrent:\n%s\nfor: %w", original, modified, currentJSON, err)
	}
	if string(patch) == "{}" {
		return patch, current, nil
	}
	if dry == dryRunClient {
		patchedJSON, err := jsonMergePatch(currentJSON, patch)
		if err != nil {
			return patch, nil, fmt.Errorf("applying patch locally: %w", err)
		}
		u, err := decodeObject(patchedJSON)
		return patch, u, err
	}
	body, err := k.client.call(request{
		method: "PATCH", path: it.mapping.path(it.namespace, it.name),
		query:       writeQuery(dry, o.fieldManager, directive),
		accept:      acceptJSON,
		contentType: contentType,
		body:        patch,
		resource:    it.mapping.gvr.GroupResource(), name: it.name,
	})
	if err != nil {
		return patch, nil, err
	}
	u, err := decodeObject(body)
	return patch, u, err
}

// patchRetries is kubectl's maxPatchRetry: how often apply recomputes its patch over a newer live object
// after a conflict.
const patchRetries = 5

// patchLive is the patcher's Patch: patchSimple, again over the object read anew after each conflict.
// (kubectl sleeps a second between the later tries; nothing else writes to the playground's store meanwhile.)
func (k *kubectl) patchLive(it *info, current *unstructured.Unstructured, modified []byte, o *applyOptions, dry dryRun, directive string) ([]byte, *unstructured.Unstructured, error) {
	patch, obj, err := k.patchSimple(it, current, modified, o, dry, directive)
	for i := 1; i <= patchRetries && apierrors.IsConflict(err); i++ {
		cur, gerr := k.get(it.mapping, it.namespace, it.name, "")
		if gerr != nil {
			return nil, nil, gerr
		}
		patch, obj, err = k.patchSimple(it, cur, modified, o, dry, directive)
	}
	if err != nil {
		err = addSourceToErr("patching", it.source, err)
	}
	return patch, obj, err
}

// fetchOpenAPIV2 requests /openapi/v2 as kubectl's OpenAPI v2 getter does; the answer is not needed.
func (k *kubectl) fetchOpenAPIV2() {
	if k.openapiV2Fetched {
		return
	}
	k.openapiV2Fetched = true
	_, _ = k.client.do(request{method: "GET", path: "/openapi/v2", query: timeoutQuery(), accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
}

// create POSTs an object (resource.Helper.Create with modify: the resourceVersion is cleared).
func (k *kubectl) create(it *info, fieldManager, directive string, dry dryRun) (*unstructured.Unstructured, error) {
	if it.object.GetResourceVersion() != "" {
		it.object.SetResourceVersion("")
	}
	body, err := k.client.call(request{
		method: "POST", path: it.mapping.path(it.namespace, ""),
		query:       writeQuery(dry, fieldManager, directive),
		accept:      acceptJSON,
		contentType: "application/json",
		body:        encode(it.object.Object),
		resource:    it.mapping.gvr.GroupResource(),
	})
	if err != nil {
		return nil, err
	}
	return decodeObject(body)
}

// modifiedConfiguration is util.GetModifiedConfiguration: the object's JSON, with the last-applied
// annotation set to the object itself (without the annotation) when annotate is true.
func modifiedConfiguration(u *unstructured.Unstructured, annotate bool) ([]byte, error) {
	annots := u.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	original := annots[lastAppliedAnnotation]
	delete(annots, lastAppliedAnnotation)
	u.SetAnnotations(annots)
	modified := encode(u.Object)
	if annotate {
		annots[lastAppliedAnnotation] = string(modified)
		u.SetAnnotations(annots)
		modified = encode(u.Object)
	}
	annots[lastAppliedAnnotation] = original
	u.SetAnnotations(annots)
	return modified, nil
}

// createApplyAnnotation is util.CreateApplyAnnotation: the annotation holds the object as it is.
func createApplyAnnotation(u *unstructured.Unstructured) error {
	modified, err := modifiedConfiguration(u, false)
	if err != nil {
		return err
	}
	annots := u.GetAnnotations()
	if annots == nil {
		annots = map[string]string{}
	}
	annots[lastAppliedAnnotation] = string(modified)
	u.SetAnnotations(annots)
	return nil
}

func pruneNulls(v interface{}) {
	switch v := v.(type) {
	case map[string]interface{}:
		for k, x := range v {
			if x == nil {
				delete(v, k)
			} else {
				pruneNulls(x)
			}
		}
	case []interface{}:
		for _, x := range v {
			pruneNulls(x)
		}
	}
}

// serverSideApply sends the whole object as an apply patch.
func (k *kubectl) serverSideApply(it *info, o *applyOptions, dry dryRun, directive string, p *outputPrinter) error {
	data := encode(it.object.Object)
	q := writeQuery(dry, o.fieldManager, directive)
	q.Set("force", strconv.FormatBool(o.forceConflicts))
	path := it.mapping.path(it.namespace, it.name)
	if o.subresource != "" {
		path += "/" + o.subresource
	}
	body, err := k.client.call(request{
		method: "PATCH", path: path, query: q, accept: acceptJSON,
		contentType: "application/apply-patch+yaml", body: data,
		resource: it.mapping.gvr.GroupResource(), name: it.name,
	})
	if err != nil {
		if se, ok := err.(*apierrors.StatusError); ok && se.ErrStatus.Code == 415 {
			err = fmt.Errorf("Server-side apply not available on the server: (%v)", err)
		}
		if apierrors.IsConflict(err) {
			err = fmt.Errorf(`%v
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `+"`--force-conflicts`"+` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`, err)
		}
		return err
	}
	obj, err := decodeObject(body)
	if err != nil {
		return err
	}
	it.object = obj
	if o.fieldManager == "kubectl" {
		if err := k.migrateFromClientSideApply(it, dry, directive, data, q, path); err != nil {
			return err
		}
	}
	if it.object.GetDeletionTimestamp() != nil {
		fmt.Fprintf(&k.errOut, "Warning: Detected changes to resource %[1]s which is currently being deleted.\n", it.object.GetName())
	}
	if p.format != "" && p.format != "name" {
		return nil
	}
	p.operation = withDryRun("serverside-applied", dry)
	return p.print(&k.out, it.object)
}

// --- create ---

type createOptions struct {
	files             fileOptions
	output            string
	template          string
	showManagedFields bool
	selector          string
	fieldManager      string
	saveConfig        bool
	raw               string
	edit              bool
}

func (k *kubectl) newCreateCommand() *command {
	o := &createOptions{}
	cmd := &command{
		Use:                   "create -f FILENAME",
		DisableFlagsInUseLine: true,
		Short:                 "Create a resource from a file or from stdin",
		RunE: func(cmd *command, args []string) error {
			return k.runCreate(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.BoolVar(&o.showManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	addFileFlags(cmd, &o.files, "to use to create the resource")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.BoolVar(&o.edit, "edit", false, "Edit the API resource before creating")
	f.Bool("windows-line-endings", false, "Only relevant if --edit=true.")
	f.StringVar(&o.raw, "raw", "", "Raw URI to POST to the server.")
	f.BoolVar(&o.saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation.")
	f.StringVar(&o.fieldManager, "field-manager", "kubectl-create", "Name of the manager used to track field ownership.")
	f.Bool("record", false, "Record current kubectl command in the resource annotation.")
	addDryRunFlag(cmd)
	addValidateFlag(cmd)
	return cmd
}

func (k *kubectl) runCreate(cmd *command, o *createOptions, args []string) error {
	if len(args) > 0 && createSubcommands[args[0]] {
		return &notSupportedError{what: "kubectl create " + args[0]}
	}
	if len(args) > 0 {
		return usageErrorf(cmd, "Unexpected args: %v", args)
	}
	if len(o.files.filenames) == 0 && o.files.kustomize == "" {
		fmt.Fprintf(&k.errOut, "Error: must specify one of -f and -k\n\n")
		// kubectl prints create's help here; the playground does not reproduce kubectl's help texts.
		fmt.Fprintf(&k.errOut, "%s\n", helpNote)
		return &exitError{code: 1}
	}
	if o.raw != "" || o.edit {
		return &notSupportedError{what: "create --raw/--edit"}
	}
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	directive, err := getValidationDirective(cmd)
	if err != nil {
		return err
	}
	if err := checkFileOptions(o.files); err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}
	infos, errs := k.readFiles(o.files, k.namespace, k.explicitNamespace, k.validator(directive))
	infos, err = filterByLabels(infos, o.selector)
	if err != nil {
		return err
	}
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields, operation: withDryRun("created", dry)}
	count := len(infos)
	for _, it := range infos {
		if o.saveConfig {
			if err := createApplyAnnotation(it.object); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if dry != dryRunClient {
			obj, err := k.create(it, o.fieldManager, directive, dry)
			if err != nil {
				errs = append(errs, addSourceToErr("creating", it.source, err))
				continue
			}
			it.object = obj
		}
		if err := p.print(&k.out, it.object); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if count == 0 {
		return fmt.Errorf("no objects passed to create")
	}
	return nil
}

// createSubcommands are kubectl create's generators (and their aliases), which the playground does not run.
var createSubcommands = map[string]bool{
	"clusterrole": true, "clusterrolebinding": true, "configmap": true, "cm": true, "cronjob": true, "cj": true,
	"deployment": true, "deploy": true, "ingress": true, "ing": true, "job": true, "namespace": true, "ns": true,
	"poddisruptionbudget": true, "pdb": true, "priorityclass": true, "pc": true, "quota": true,
	"resourcequota": true, "role": true, "rolebinding": true, "secret": true, "service": true, "svc": true,
	"serviceaccount": true, "sa": true, "token": true,
}

// --- replace ---

func (k *kubectl) newReplaceCommand() *command {
	o := &createOptions{}
	cmd := &command{
		Use:                   "replace -f FILENAME",
		DisableFlagsInUseLine: true,
		Short:                 "Replace a resource by file name or stdin",
		RunE: func(cmd *command, args []string) error {
			return k.runReplace(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.BoolVar(&o.showManagedFields, "show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	addFileFlags(cmd, &o.files, "to use to replace the resource.")
	f.BoolVar(&o.saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation.")
	f.StringVar(&o.fieldManager, "field-manager", "kubectl-replace", "Name of the manager used to track field ownership.")
	f.String("subresource", "", "If specified, replace will operate on the subresource of the requested object.")
	f.Bool("force", false, "If true, immediately remove resources from API and bypass graceful deletion.")
	f.String("raw", "", "Raw URI to PUT to the server.")
	addDryRunFlag(cmd)
	addValidateFlag(cmd)
	return cmd
}

func (k *kubectl) runReplace(cmd *command, o *createOptions, args []string) error {
	if len(args) > 0 {
		return usageErrorf(cmd, "Unexpected args: %v", args)
	}
	if len(o.files.filenames) == 0 && o.files.kustomize == "" {
		return usageErrorf(cmd, "must specify --filename to replace")
	}
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	directive, err := getValidationDirective(cmd)
	if err != nil {
		return err
	}
	if err := checkFileOptions(o.files); err != nil {
		return err
	}
	infos, errs := k.readFiles(o.files, k.namespace, k.explicitNamespace, k.validator(directive))
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields, operation: withDryRun("replaced", dry)}
	for _, it := range infos {
		if o.saveConfig {
			_ = createApplyAnnotation(it.object)
		}
		if dry != dryRunClient {
			if it.object.GetResourceVersion() == "" {
				// Helper.Replace with overwrite: take the live resourceVersion.
				if live, err := k.get(it.mapping, it.namespace, it.name, ""); err == nil {
					it.object.SetResourceVersion(live.GetResourceVersion())
				}
			}
			body, err := k.client.call(request{
				method: "PUT", path: it.mapping.path(it.namespace, it.name),
				query: writeQuery(dry, o.fieldManager, directive), accept: acceptJSON, contentType: "application/json",
				body: encode(it.object.Object), resource: it.mapping.gvr.GroupResource(), name: it.name,
			})
			if err != nil {
				errs = append(errs, addSourceToErr("replacing", it.source, err))
				continue
			}
			obj, err := decodeObject(body)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			it.object = obj
		}
		if err := p.print(&k.out, it.object); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}
