package kubectl

import (
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

type applyOptions struct {
	printFlags
	selectorFlags
	files          fileOptions
	serverSide     bool
	forceConflicts bool
	fieldManager   string
	prune          bool
	all            bool
	overwrite      bool
	openAPIPatch   bool
	force          bool
	subresource    string

	// Set by completeApply.
	dry       dryRun
	directive string // fieldValidation
}

func (k *kubectl) newApplyCommand() *command {
	o := &applyOptions{overwrite: true, openAPIPatch: true}
	cmd := &command{
		Use:   "apply (-f FILENAME | -k DIRECTORY)",
		Short: "Apply a configuration to a resource by file name or stdin",
		RunE:  func(cmd *command, args []string) error { return k.runApply(cmd, o, args) },
	}
	f := cmd.Flags()
	addPrintFlags(cmd, &o.printFlags)
	addFileFlags(cmd, &o.files, "that contains the configuration to apply")
	f.BoolVar(&o.overwrite, "overwrite", true, "Automatically resolve conflicts between the modified and live configuration by using values from the modified configuration")
	f.BoolVar(&o.prune, "prune", false, "Automatically delete resource objects, that do not appear in the configs and are created by either apply or create --save-config.")
	addLabelSelectorFlag(cmd, &o.labelSelector)
	f.BoolVar(&o.all, "all", false, "Select all resources in the namespace of the specified resource types.")
	f.StringArray("prune-allowlist", nil, "Overwrite the default allowlist with <group/version/kind> for --prune")
	f.BoolVar(&o.openAPIPatch, "openapi-patch", true, "If true, use openapi to calculate diff when the openapi presents and the resource can be found in the openapi spec.")
	f.BoolVar(&o.serverSide, "server-side", false, "If true, apply runs in the server instead of the client.")
	f.BoolVar(&o.forceConflicts, "force-conflicts", false, "If true, server-side apply will force the changes against conflicts.")
	addFieldManagerFlag(cmd, &o.fieldManager, "kubectl-client-side-apply")
	f.StringVar(&o.subresource, "subresource", "", "If specified, apply will operate on the subresource of the requested object.")
	f.String("applyset", "", "The name of the ApplySet that tracks which resources are being managed.")
	f.BoolVar(&o.force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion.")
	f.Int("grace-period", -1, "Period of time in seconds given to the resource to terminate gracefully.")
	f.Duration("timeout", 0, "The length of time to wait before giving up on a delete.")
	f.Bool("wait", false, "If true, wait for resources to be gone before returning.")
	f.String("cascade", "background", `Must be "background", "orphan", or "foreground".`)
	addRecordFlag(cmd)
	addDryRunFlag(cmd)
	addValidateFlag(cmd)
	return cmd
}

// runApply is ApplyOptions.Complete, Validate and Run: apply each object of the files, then, with -o json or
// yaml, print them all.
func (k *kubectl) runApply(cmd *command, o *applyOptions, args []string) error {
	if err := k.completeApply(cmd, o, args); err != nil {
		return err
	}
	b, err := k.newBuilder(nil, o.files, builderOptions{selectorFlags: o.selectorFlags, validate: k.validator(o.directive)})
	if err != nil {
		return err
	}
	infos, errs := b.infos(fetchNone)
	if len(infos) == 0 && len(errs) == 0 {
		return fmt.Errorf("no objects passed to apply")
	}
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields}
	for _, it := range infos {
		if err := k.applyOne(it, o, p); err != nil {
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

// completeApply is ApplyOptions.Complete and Validate: the dry-run strategy, the field manager, the
// validation directive, and the flags that do not go together.
func (k *kubectl) completeApply(cmd *command, o *applyOptions, args []string) error {
	if len(args) != 0 {
		return usageErrorf(cmd, "Unexpected args: %v", args)
	}
	var err error
	if o.dry, err = getDryRun(cmd); err != nil {
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
	if o.directive, err = getValidationDirective(cmd); err != nil {
		return err
	}
	if o.forceConflicts && !o.serverSide {
		return fmt.Errorf("--force-conflicts only works with --server-side")
	}
	if o.dry == dryRunClient && o.serverSide {
		return fmt.Errorf("--dry-run=client doesn't work with --server-side (did you mean --dry-run=server instead?)")
	}
	if o.serverSide && o.force {
		return fmt.Errorf("--force cannot be used with --server-side")
	}
	if err := checkAllAndSelectors(o.all, o.labelSelector, o.fieldSelector); err != nil {
		return err
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
		return checkFormat(o.output, allowedFormats)
	}
	return nil
}

// printObjects prints the objects with p: one alone, several as a v1 List.
func (k *kubectl) printObjects(p *outputPrinter, infos []*info) error {
	if len(infos) == 0 {
		return nil
	}
	if len(infos) == 1 {
		return p.print(&k.out, infos[0].object)
	}
	items := make([]*unstructured.Unstructured, 0, len(infos))
	for _, it := range infos {
		items = append(items, it.object)
	}
	return printList(&k.out, p.format, items, p.showManagedFields)
}

// applyOne is ApplyOptions.applyOneObject.
func (k *kubectl) applyOne(it *info, o *applyOptions, p *outputPrinter) error {
	if it.name == "" {
		if gn := it.object.GetGenerateName(); gn != "" {
			return fmt.Errorf("from %s: cannot use generate name with apply", gn)
		}
	}
	p.operation = ""
	if o.serverSide {
		return k.serverSideApply(it, o, p)
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
		return k.applyCreate(it, o, p)
	}
	if _, ok := current.GetAnnotations()[lastAppliedAnnotation]; !ok {
		fmt.Fprintf(&k.errOut, "Warning: resource %[1]s is missing the %[2]s annotation which is required by %[3]s apply. %[3]s apply should only be used on resources created declaratively by either %[3]s create --save-config or %[3]s apply. The missing annotation will be patched automatically.\n",
			it.mapping.gvr.Resource+"/"+it.name, lastAppliedAnnotation, "kubectl")
	}
	patch, patched, err := k.patchLive(it, current, modified, o)
	if err != nil {
		return addSourceToErr(fmt.Sprintf("applying patch:\n%s\nto:\n%v\nfor:", patch, it), it.source, err)
	}
	it.object = patched
	k.warnIfDeleting(patched)
	if string(patch) == "{}" && (p.format == "" || p.format == "name") {
		p.operation = withDryRun("unchanged", o.dry)
		return p.print(&k.out, it.object)
	}
	return k.printApplied(p, it, "configured", o.dry)
}

// applyCreate creates an object apply did not find, with the last-applied annotation.
func (k *kubectl) applyCreate(it *info, o *applyOptions, p *outputPrinter) error {
	if err := createApplyAnnotation(it.object); err != nil {
		return addSourceToErr("creating", it.source, err)
	}
	pruneNulls(it.object.Object)
	if o.dry != dryRunClient {
		created, err := k.create(it, "kubectl-client-side-apply", o.directive, o.dry)
		if err != nil {
			return addSourceToErr("creating", it.source, err)
		}
		it.object = created
	}
	return k.printApplied(p, it, "created", o.dry)
}

// printApplied prints an applied object with the name printer; with -o json|yaml apply prints the objects
// at the end instead.
func (k *kubectl) printApplied(p *outputPrinter, it *info, operation string, dry dryRun) error {
	if p.format != "" && p.format != "name" {
		return nil
	}
	p.operation = withDryRun(operation, dry)
	return p.print(&k.out, it.object)
}

// warnIfDeleting is apply's warning for an object that finalizers hold in deletion.
func (k *kubectl) warnIfDeleting(obj *unstructured.Unstructured) {
	if obj.GetDeletionTimestamp() != nil {
		fmt.Fprintf(&k.errOut, "Warning: Detected changes to resource %[1]s which is currently being deleted.\n", obj.GetName())
	}
}

// patchSimple is the patcher: a three-way merge patch from the last applied, the new and the live
// configuration. Kinds whose OpenAPI PATCH operation takes strategic merge patches get one; custom resources
// get a JSON merge patch.
func (k *kubectl) patchSimple(it *info, current *unstructured.Unstructured, modified []byte, o *applyOptions) ([]byte, *unstructured.Unstructured, error) {
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
	if o.dry == dryRunClient {
		patchedJSON, err := jsonMergePatch(currentJSON, patch)
		if err != nil {
			return patch, nil, fmt.Errorf("applying patch locally: %w", err)
		}
		u, err := decodeObject(patchedJSON)
		return patch, u, err
	}
	body, err := k.client.call(request{
		method: "PATCH", path: it.mapping.path(it.namespace, it.name),
		query:       writeQuery(o.dry, o.fieldManager, o.directive),
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
func (k *kubectl) patchLive(it *info, current *unstructured.Unstructured, modified []byte, o *applyOptions) ([]byte, *unstructured.Unstructured, error) {
	patch, obj, err := k.patchSimple(it, current, modified, o)
	for i := 1; i <= patchRetries && apierrors.IsConflict(err); i++ {
		cur, gerr := k.get(it.mapping, it.namespace, it.name, "")
		if gerr != nil {
			return nil, nil, gerr
		}
		patch, obj, err = k.patchSimple(it, cur, modified, o)
	}
	if err != nil {
		err = addSourceToErr("patching", it.source, err)
	}
	return patch, obj, err
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
func (k *kubectl) serverSideApply(it *info, o *applyOptions, p *outputPrinter) error {
	data := encode(it.object.Object)
	q := writeQuery(o.dry, o.fieldManager, o.directive)
	q.Set("force", strconv.FormatBool(o.forceConflicts))
	path := it.mapping.subresourcePath(it.namespace, it.name, o.subresource)
	body, err := k.client.call(request{
		method: "PATCH", path: path, query: q, accept: acceptJSON,
		contentType: "application/apply-patch+yaml", body: data,
		resource: it.mapping.gvr.GroupResource(), name: it.name,
	})
	if err != nil {
		return serverSideApplyError(err)
	}
	obj, err := decodeObject(body)
	if err != nil {
		return err
	}
	it.object = obj
	if o.fieldManager == "kubectl" {
		if err := k.migrateFromClientSideApply(it, o.dry, o.directive, data, q, path); err != nil {
			return err
		}
	}
	k.warnIfDeleting(it.object)
	return k.printApplied(p, it, "serverside-applied", o.dry)
}

// serverSideApplyError is kubectl's explanation of a failed apply patch: a server without server-side
// apply, or fields other managers own.
func serverSideApplyError(err error) error {
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
