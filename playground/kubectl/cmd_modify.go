package kubectl

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// targets resolves the objects a command acts on (the Builder with ContinueOnError, Flatten and, when
// fetch is true, RequireObject or Latest): files, named objects or lists. Errors of single objects are
// collected and returned with what was found.
// fetchMode is how the builder fetches the objects it resolves.
type fetchMode int

const (
	// fetchNone: RequireObject(false), objects named on the command line are not fetched.
	fetchNone fetchMode = iota
	// fetchLazy: the builder's default (RetrieveLazy), objects named on the command line are fetched; those
	// read from files are used as they are.
	fetchLazy
	// fetchLatest: Latest(), every object is fetched, those read from files too.
	fetchLatest
)

func (k *kubectl) targets(args []string, fo fileOptions, bo builderOptions, fetch fetchMode, chunkSize int64) (infos []*info, errs []error, singleItemImplied bool, err error) {
	if err := checkFileOptions(fo); err != nil {
		return nil, nil, false, err
	}
	if len(fo.filenames) > 0 {
		if len(args) > 0 {
			return nil, nil, false, fmt.Errorf("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
		}
		fi, ferrs := k.readFiles(fo, k.namespace, k.explicitNamespace, nil)
		errs = append(errs, ferrs...)
		fi, err := filterByLabels(fi, bo.labelSelector)
		if err != nil {
			return nil, nil, false, err
		}
		for _, it := range fi {
			if fetch == fetchLatest {
				obj, err := k.fetch(it.mapping, it.namespace, it.name, "")
				if err != nil {
					errs = append(errs, err)
					continue
				}
				it.object = obj
			}
			infos = append(infos, it)
		}
		return infos, errs, len(fo.filenames) == 1, nil
	}
	sel, err := k.selectArgs(args, bo)
	if err != nil {
		return nil, nil, false, err
	}
	for _, m := range sel.lists {
		listed, lerrs := k.listInfos(m, bo.namespace, bo, chunkSize)
		for _, it := range listed {
			if it.object.GetKind() == "" {
				it.object.SetKind(m.gvk.Kind)
				it.object.SetAPIVersion(m.gvk.GroupVersion().String())
			}
		}
		infos = append(infos, listed...)
		errs = append(errs, lerrs...)
	}
	for _, it := range sel.items {
		if fetch != fetchNone {
			obj, err := k.fetch(it.mapping, it.namespace, it.name, "")
			if err != nil {
				errs = append(errs, err)
				continue
			}
			it.object = obj
		}
		infos = append(infos, it)
	}
	return infos, errs, sel.singleItemImplied, nil
}

// --- delete ---

type deleteOptions struct {
	files          fileOptions
	labelSelector  string
	fieldSelector  string
	all            bool
	allNamespaces  bool
	force          bool
	cascade        string
	now            bool
	gracePeriod    int
	timeout        time.Duration
	ignoreNotFound bool
	wait           bool
	output         string
	raw            string
	interactive    bool
}

func (k *kubectl) newDeleteCommand() *command {
	o := &deleteOptions{cascade: "background", gracePeriod: -1, wait: true}
	cmd := &command{
		Use:                   "delete ([-f FILENAME] | [-k DIRECTORY] | TYPE [(NAME | -l label | --all)])",
		DisableFlagsInUseLine: true,
		Short:                 "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		SuggestFor:            []string{"rm", "remove"},
		RunE: func(cmd *command, args []string) error {
			return k.runDelete(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.files.filenames, "filename", "f", nil, "containing the resource to delete.")
	f.StringVarP(&o.files.kustomize, "kustomize", "k", "", "Process a kustomization directory.")
	f.BoolVarP(&o.files.recursive, "recursive", "R", false, "Process the directory used in -f, --filename recursively.")
	f.StringVarP(&o.labelSelector, "selector", "l", "", "Selector (label query) to filter on.")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on.")
	f.BoolVar(&o.all, "all", false, "Delete all resources, in the namespace of the specified resource types.")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.BoolVar(&o.force, "force", false, "If true, immediately remove resources from API and bypass graceful deletion.")
	f.StringVar(&o.cascade, "cascade", "background", `Must be "background", "orphan", or "foreground".`)
	f.Lookup("cascade").NoOptDefVal = "background"
	f.BoolVar(&o.now, "now", false, "If true, resources are signaled for immediate shutdown (same as --grace-period=1).")
	f.IntVar(&o.gracePeriod, "grace-period", -1, "Period of time in seconds given to the resource to terminate gracefully.")
	f.DurationVar(&o.timeout, "timeout", 0, "The length of time to wait before giving up on a delete.")
	f.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, `Treat "resource not found" as a successful delete.`)
	f.BoolVar(&o.wait, "wait", true, "If true, wait for resources to be gone before returning. This waits for finalizers.")
	f.StringVarP(&o.output, "output", "o", "", `Output mode. Use "-o name" for shorter output (resource/name).`)
	f.StringVar(&o.raw, "raw", "", "Raw URI to DELETE to the server.")
	f.BoolVarP(&o.interactive, "interactive", "i", false, "If true, delete resource only when user confirms.")
	addDryRunFlag(cmd)
	return cmd
}

func (k *kubectl) runDelete(cmd *command, o *deleteOptions, args []string) error {
	propagation, err := k.parseCascade(o.cascade)
	if err != nil {
		return err
	}
	warnClusterScope := k.explicitNamespace && !o.allNamespaces
	if o.all || o.labelSelector != "" || o.fieldSelector != "" {
		if !cmd.Flags().Changed("ignore-not-found") {
			o.ignoreNotFound = true
		}
	}
	if o.now {
		if o.gracePeriod != -1 {
			return fmt.Errorf("--now and --grace-period cannot be specified together")
		}
		o.gracePeriod = 1
	}
	if o.gracePeriod == 0 && !o.force {
		o.gracePeriod = 1
	}
	if o.force && o.gracePeriod < 0 {
		o.gracePeriod = 0
	}
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	if o.raw != "" || o.interactive {
		return &notSupportedError{what: "delete --raw/--interactive"}
	}
	bo := builderOptions{namespace: k.namespace, allNamespaces: o.allNamespaces, labelSelector: o.labelSelector, fieldSelector: o.fieldSelector, selectAll: o.all}
	if err := checkFileOptions(o.files); err != nil {
		return err
	}
	var infos []*info
	var errs []error
	var sel *selection
	if len(o.files.filenames) > 0 {
		if len(args) > 0 {
			return fmt.Errorf("when paths, URLs, or stdin is provided as input, you may not specify resource arguments as well")
		}
		var ferr []error
		infos, ferr = k.readFiles(o.files, k.namespace, k.explicitNamespace, nil)
		errs = append(errs, ferr...)
		if infos, err = filterByLabels(infos, o.labelSelector); err != nil {
			return err
		}
	} else {
		if sel, err = k.selectArgs(args, bo); err != nil {
			return err
		}
	}
	// Validate.
	if o.output != "" && o.output != "name" {
		return fmt.Errorf("unexpected -o output mode: %v. We only support '-o name'", o.output)
	}
	if o.all && o.labelSelector != "" {
		return fmt.Errorf("cannot set --all and --selector at the same time")
	}
	if o.all && o.fieldSelector != "" {
		return fmt.Errorf("cannot set --all and --field-selector at the same time")
	}
	switch {
	case o.gracePeriod == 0 && o.force:
		fmt.Fprintln(&k.errOut, "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
	case o.gracePeriod > 0 && o.force:
		return fmt.Errorf("--force and --grace-period greater than 0 cannot be specified together")
	}
	if sel != nil {
		infos = sel.items
		for _, m := range sel.lists {
			listed, lerrs := k.listInfos(m, k.namespace, bo, 0)
			infos = append(infos, listed...)
			errs = append(errs, lerrs...)
		}
	}
	found := 0
	type deleted struct {
		it  *info
		uid string
	}
	var visited []deleted
	for _, it := range infos {
		found++
		// The typed DeleteOptions, which kubectl's unstructured client encodes without apiVersion and kind.
		opts := &metav1.DeleteOptions{}
		if o.gracePeriod >= 0 {
			grace := int64(o.gracePeriod)
			opts.GracePeriodSeconds = &grace
		}
		policy := metav1.DeletionPropagation(propagation)
		opts.PropagationPolicy = &policy
		if warnClusterScope && !it.mapping.namespaced {
			fmt.Fprintln(&k.errOut, "Warning: deleting cluster-scoped resources, not scoped to the provided namespace")
			warnClusterScope = false
		}
		visited = append(visited, deleted{it: it})
		if dry == dryRunClient {
			k.printDeleted(it, o, dry)
			continue
		}
		if dry == dryRunServer {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		optsJSON, _ := json.Marshal(opts)
		body, err := k.client.call(request{
			method: "DELETE", path: it.mapping.path(it.namespace, it.name), accept: acceptJSON,
			contentType: "application/json", body: append(optsJSON, '\n'),
			resource: it.mapping.gvr.GroupResource(), name: it.name,
		})
		if err != nil {
			// The builder goes on with the next object and reports every error at the end.
			errs = append(errs, addSourceToErr("deleting", it.source, err))
			continue
		}
		k.printDeleted(it, o, dry)
		if st, ok := decodeStatus(body); ok {
			if st.Details != nil {
				visited[len(visited)-1].uid = string(st.Details.UID)
			}
		} else if obj, err := decodeObject(body); err == nil {
			visited[len(visited)-1].uid = string(obj.GetUID())
		}
	}
	if o.ignoreNotFound {
		var kept []error
		for _, e := range errs {
			if !apierrors.IsNotFound(e) {
				kept = append(kept, e)
			}
		}
		errs = kept
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if found == 0 {
		fmt.Fprintf(&k.out, "No resources found\n")
		return nil
	}
	if !o.wait || dry != dryRunNone {
		return nil
	}
	for _, d := range visited {
		if err := k.waitForDeletion(d.it, d.uid, o.timeout); err != nil {
			return err
		}
	}
	return nil
}

func (k *kubectl) parseCascade(v string) (string, error) {
	if b, err := strconv.ParseBool(v); err == nil {
		if b {
			fmt.Fprintf(&k.errOut, "warning: --cascade=%v is deprecated (boolean value) and can be replaced with --cascade=%s.\n", v, "background")
			return "Background", nil
		}
		fmt.Fprintf(&k.errOut, "warning: --cascade=%v is deprecated (boolean value) and can be replaced with --cascade=%s.\n", v, "orphan")
		return "Orphan", nil
	}
	switch v {
	case "orphan":
		return "Orphan", nil
	case "foreground":
		return "Foreground", nil
	case "background":
		return "Background", nil
	}
	return "Background", fmt.Errorf(`invalid cascade value (%v). Must be "background", "foreground", or "orphan"`, v)
}

func (k *kubectl) printDeleted(it *info, o *deleteOptions, dry dryRun) {
	kind := it.mapping.groupKindString()
	op := "deleted"
	if o.gracePeriod == 0 {
		op = "force deleted"
	}
	if it.mapping.namespaced {
		op = fmt.Sprintf("%s from %s namespace", op, it.namespace)
	}
	switch dry {
	case dryRunClient:
		op += " (dry run)"
	case dryRunServer:
		op += " (server dry run)"
	}
	if o.output == "name" {
		fmt.Fprintf(&k.out, "%s/%s\n", kind, it.name)
		return
	}
	fmt.Fprintf(&k.out, "%s \"%s\" %s\n", kind, it.name, op)
}

// deletionWait is how long the playground watches for an object to go after a delete. kubectl waits as long
// as --timeout says (a week by default); a browser tab cannot, and the engine deletes at once unless
// finalizers hold the object, which no controller will remove.
const deletionWait = 2 * time.Second

// waitForDeletion is kubectl's wait for --for=delete after a delete: GET, and if the object is still there,
// watch it until a DELETED event.
func (k *kubectl) waitForDeletion(it *info, uid string, timeout time.Duration) error {
	obj, err := k.get(it.mapping, it.namespace, it.name, "")
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if uid != "" && string(obj.GetUID()) != uid {
		return nil
	}
	wait := deletionWait
	if timeout > 0 && timeout < wait {
		wait = timeout
	}
	if k.watchForDeletion(it, obj, wait) {
		return nil
	}
	if timeout > 0 && timeout <= deletionWait {
		return fmt.Errorf("timed out waiting for the condition on %s/%s", it.mapping.gvr.Resource, it.name)
	}
	fmt.Fprintf(&k.errOut, "crdplay: kubectl keeps waiting here until %s/%s is gone%s; the playground stops waiting after %v.\n",
		it.mapping.gvr.Resource, it.name, finalizerNote(obj), deletionWait)
	return nil
}

func finalizerNote(obj *unstructured.Unstructured) string {
	if f := obj.GetFinalizers(); len(f) > 0 {
		return fmt.Sprintf(" (its finalizers %v must be removed first)", f)
	}
	return ""
}

// watchForDeletion watches the object (kubectl's watch-list request) for its DELETED event.
func (k *kubectl) watchForDeletion(it *info, obj *unstructured.Unstructured, wait time.Duration) bool {
	deleted := false
	_, _ = k.client.watch(request{method: "GET", path: it.mapping.path(it.namespace, ""), query: watchListQuery(it.name, 168*time.Hour), accept: acceptJSON},
		wait, func(ev watchEvent) bool {
			deleted = ev.Type == "DELETED"
			return deleted
		})
	return deleted
}

// --- scale ---

type scaleOptions struct {
	files           fileOptions
	output          string
	template        string
	all             bool
	resourceVersion string
	currentReplicas int
	replicas        int
	timeout         time.Duration
	selector        string
}

func (k *kubectl) newScaleCommand() *command {
	o := &scaleOptions{currentReplicas: -1}
	cmd := &command{
		Use:                   "scale [--resource-version=version] [--current-replicas=count] --replicas=COUNT (-f FILENAME | TYPE NAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Set a new size for a deployment, replica set, or replication controller",
		RunE: func(cmd *command, args []string) error {
			return k.runScale(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.Bool("record", false, "Record current kubectl command in the resource annotation.")
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.Bool("show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	f.BoolVar(&o.all, "all", false, "Select all resources in the namespace of the specified resource types")
	f.StringVar(&o.resourceVersion, "resource-version", "", "Precondition for resource version.")
	f.IntVar(&o.currentReplicas, "current-replicas", -1, "Precondition for current size.")
	f.IntVar(&o.replicas, "replicas", 0, "The new desired number of replicas. Required.")
	_ = cmd.MarkFlagRequired("replicas")
	f.DurationVar(&o.timeout, "timeout", 0, "The length of time to wait before giving up on a scale operation.")
	addFileFlags(cmd, &o.files, "identifying the resource to set a new size")
	addDryRunFlag(cmd)
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	return cmd
}

func (k *kubectl) runScale(cmd *command, o *scaleOptions, args []string) error {
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}
	if o.replicas < 0 {
		return fmt.Errorf("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
	}
	if o.currentReplicas < -1 {
		return fmt.Errorf("The --current-replicas must specify an integer of -1 or greater")
	}
	bo := builderOptions{namespace: k.namespace, labelSelector: o.selector, allowEmptySelector: o.all}
	infos, errs, _, err := k.targets(args, o.files, bo, fetchLazy, 0)
	if err != nil {
		return err
	}
	if o.resourceVersion != "" && len(infos) > 1 {
		return fmt.Errorf("cannot use --resource-version with multiple resources")
	}
	if len(infos) == 0 {
		if len(errs) > 0 {
			return utilerrors.NewAggregate(errs)
		}
		return fmt.Errorf("no objects passed to scale")
	}
	p := &outputPrinter{format: o.output, operation: withDryRun("scaled", dry)}
	for _, it := range infos {
		if dry == dryRunClient {
			if err := p.print(&k.out, it.object); err != nil {
				return err
			}
			continue
		}
		if err := k.scaleOne(it, o, dry); err != nil {
			return err
		}
		if err := p.print(&k.out, it.object); err != nil {
			return err
		}
	}
	return utilerrors.NewAggregate(errs)
}

// scaleOne is kubectl's scaler: a merge patch of /scale, or, with preconditions, GET /scale, check, PUT.
func (k *kubectl) scaleOne(it *info, o *scaleOptions, dry dryRun) error {
	path := it.mapping.path(it.namespace, it.name) + "/scale"
	q := url.Values{}
	if dry == dryRunServer {
		q.Set("dryRun", "All")
	}
	if o.currentReplicas != -1 || o.resourceVersion != "" {
		body, err := k.client.call(request{method: "GET", path: path, accept: acceptJSON, resource: it.mapping.gvr.GroupResource(), name: it.name})
		if err != nil {
			return err
		}
		var scale autoscalingv1.Scale
		if err := json.Unmarshal(body, &scale); err != nil {
			return err
		}
		if o.currentReplicas != -1 && int(scale.Spec.Replicas) != o.currentReplicas {
			return fmt.Errorf("Expected %s to be %s, was %s", "replicas", strconv.Itoa(o.currentReplicas), strconv.Itoa(int(scale.Spec.Replicas)))
		}
		if o.resourceVersion != "" && scale.ResourceVersion != o.resourceVersion {
			return fmt.Errorf("Expected %s to be %s, was %s", "resource version", o.resourceVersion, scale.ResourceVersion)
		}
		scale.Spec.Replicas = int32(o.replicas)
		// The typed Scale, as client-go's scale client encodes it.
		data, err := json.Marshal(&scale)
		if err != nil {
			return err
		}
		_, err = k.client.call(request{method: "PUT", path: path, query: q, accept: acceptJSON, contentType: "application/json",
			body: append(data, '\n'), resource: it.mapping.gvr.GroupResource(), name: it.name})
		return err
	}
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.replicas)
	_, err := k.client.call(request{method: "PATCH", path: path, query: q, accept: acceptJSON, contentType: "application/merge-patch+json",
		body: []byte(patch), resource: it.mapping.gvr.GroupResource(), name: it.name})
	return err
}

// --- patch ---

type patchOptions struct {
	files        fileOptions
	output       string
	template     string
	patch        string
	patchFile    string
	patchType    string
	local        bool
	fieldManager string
	subresource  string
}

var patchTypes = map[string]string{
	"json":      "application/json-patch+json",
	"merge":     "application/merge-patch+json",
	"strategic": "application/strategic-merge-patch+json",
}

func (k *kubectl) newPatchCommand() *command {
	o := &patchOptions{}
	cmd := &command{
		Use:                   "patch (-f FILENAME | TYPE NAME) [-p PATCH|--patch-file FILE]",
		DisableFlagsInUseLine: true,
		Short:                 "Update fields of a resource",
		RunE: func(cmd *command, args []string) error {
			return k.runPatch(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.Bool("record", false, "Record current kubectl command in the resource annotation.")
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.Bool("show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	f.StringVarP(&o.patch, "patch", "p", "", "The patch to be applied to the resource JSON file.")
	f.StringVar(&o.patchFile, "patch-file", "", "A file containing a patch to be applied to the resource.")
	f.StringVar(&o.patchType, "type", "strategic", "The type of patch being provided; one of [json merge strategic]")
	addDryRunFlag(cmd)
	addFileFlags(cmd, &o.files, "identifying the resource to update")
	f.BoolVar(&o.local, "local", false, "If true, patch will operate on the content of the file, not the server-side resource.")
	f.StringVar(&o.fieldManager, "field-manager", "kubectl-patch", "Name of the manager used to track field ownership.")
	f.StringVar(&o.subresource, "subresource", "", "If specified, patch will operate on the subresource of the requested object.")
	return cmd
}

func (k *kubectl) runPatch(cmd *command, o *patchOptions, args []string) error {
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}
	if o.patch != "" && o.patchFile != "" {
		return fmt.Errorf("cannot specify --patch and --patch-file together")
	}
	if o.patch == "" && o.patchFile == "" {
		return fmt.Errorf("must specify --patch or --patch-file containing the contents of the patch")
	}
	if o.local && len(args) != 0 {
		return fmt.Errorf("cannot specify --local and server resources")
	}
	if o.local && dry == dryRunServer {
		return fmt.Errorf("cannot specify --local and --dry-run=server - did you mean --dry-run=client?")
	}
	contentType, ok := patchTypes[strings.ToLower(o.patchType)]
	if o.patchType != "" && !ok {
		return fmt.Errorf("--type must be one of %v, not %q", []string{"json", "merge", "strategic"}, o.patchType)
	}
	if o.patchType == "" {
		contentType = patchTypes["strategic"]
	}
	patchBytes := []byte(o.patch)
	if o.patchFile != "" {
		content, ok := k.opts.Files[o.patchFile]
		if !ok {
			return fmt.Errorf("unable to read patch file: open %s: no such file or directory", o.patchFile)
		}
		patchBytes = []byte(content)
	}
	patchBytes, err = utilyaml.ToJSON(patchBytes)
	if err != nil {
		return fmt.Errorf("unable to parse %q: %v", o.patch, err)
	}
	if o.local {
		return &notSupportedError{what: "patch --local"}
	}
	bo := builderOptions{namespace: k.namespace}
	infos, errs, _, err := k.targets(args, o.files, bo, fetchNone, 0)
	if err != nil {
		return err
	}
	count := 0
	for _, it := range infos {
		// The builder fetches an object named on the command line (RetrieveLazy), the subresource when one is
		// named; an object read from a file is compared as it is.
		current := it.object
		if current == nil {
			if current, err = k.fetch(it.mapping, it.namespace, it.name, o.subresource); err != nil {
				return err
			}
		}
		count++
		if dry == dryRunClient {
			return &notSupportedError{what: "patch --dry-run=client"}
		}
		q := writeQuery(dry, o.fieldManager, "")
		path := it.mapping.path(it.namespace, it.name)
		if o.subresource != "" {
			path += "/" + o.subresource
		}
		body, err := k.client.call(request{method: "PATCH", path: path, query: q, accept: acceptJSON,
			contentType: contentType, body: patchBytes, resource: it.mapping.gvr.GroupResource(), name: it.name})
		if err != nil {
			if apierrors.IsUnsupportedMediaType(err) {
				return fmt.Errorf("%s is not supported by %s: %w", contentType, it.mapping.gvk, err)
			}
			return err
		}
		patched, err := decodeObject(body)
		if err != nil {
			return err
		}
		op := "patched"
		if reflect.DeepEqual(current.Object, patched.Object) {
			op = "patched (no change)"
		}
		p := &outputPrinter{format: o.output, operation: withDryRun(op, dry)}
		if err := p.print(&k.out, patched); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if count == 0 {
		return fmt.Errorf("no objects passed to patch")
	}
	return nil
}

// --- label and annotate ---

type labelOptions struct {
	files           fileOptions
	output          string
	template        string
	overwrite       bool
	list            bool
	local           bool
	selector        string
	fieldSelector   string
	all             bool
	allNamespaces   bool
	resourceVersion string
	fieldManager    string
}

// newLabelCommand builds kubectl label or kubectl annotate: both fetch the objects, change the map and send
// a merge patch computed from the JSON before and after.
func (k *kubectl) newLabelCommand(verb string) *command {
	o := &labelOptions{}
	short := "Update the labels on a resource"
	if verb == "annotate" {
		short = "Update the annotations on a resource"
	}
	cmd := &command{
		Use:                   verb + " [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version]",
		DisableFlagsInUseLine: true,
		Short:                 short,
		RunE: func(cmd *command, args []string) error {
			return k.runLabel(cmd, verb, o, args)
		},
	}
	f := cmd.Flags()
	f.Bool("record", false, "Record current kubectl command in the resource annotation.")
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.Bool("show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	f.BoolVar(&o.overwrite, "overwrite", false, "If true, allow "+verb+"s to be overwritten.")
	f.BoolVar(&o.list, "list", false, "If true, display the "+strings.TrimSuffix(verb, "e")+"s for a given resource.")
	f.BoolVar(&o.local, "local", false, "If true, "+verb+" will NOT contact api-server but run locally.")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on.")
	f.BoolVar(&o.all, "all", false, "Select all resources, in the namespace of the specified resource types")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If true, check the specified action in all namespaces.")
	f.StringVar(&o.resourceVersion, "resource-version", "", "If non-empty, the update will only succeed if this is the current resource-version for the object.")
	addFileFlags(cmd, &o.files, "identifying the resource to update the "+verb+"s")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	addDryRunFlag(cmd)
	f.StringVar(&o.fieldManager, "field-manager", "kubectl-"+verb, "Name of the manager used to track field ownership.")
	return cmd
}

// resourcesAndPairs is cmdutil.GetResourcesAndPairs.
func resourcesAndPairs(args []string, pairType string) (resources, pairs []string, err error) {
	foundPair := false
	for _, s := range args {
		nonResource := (strings.Contains(s, "=") && s[0] != '=') || (strings.HasSuffix(s, "-") && s != "-")
		switch {
		case !foundPair && nonResource:
			foundPair = true
			pairs = append(pairs, s)
		case foundPair && nonResource:
			pairs = append(pairs, s)
		case !foundPair && !nonResource:
			resources = append(resources, s)
		case foundPair && !nonResource:
			return nil, nil, fmt.Errorf("all resources must be specified before %s changes: %s", pairType, s)
		}
	}
	return resources, pairs, nil
}

func parseLabelSpecs(spec []string) (map[string]string, []string, error) {
	labels := map[string]string{}
	var remove []string
	for _, s := range spec {
		if strings.Contains(s, "=") {
			parts := strings.Split(s, "=")
			if len(parts) != 2 {
				return nil, nil, fmt.Errorf("invalid label spec: %v", s)
			}
			if errs := validation.IsValidLabelValue(parts[1]); len(errs) != 0 {
				return nil, nil, fmt.Errorf("invalid label value: %q: %s", s, strings.Join(errs, ";"))
			}
			labels[parts[0]] = parts[1]
		} else if strings.HasSuffix(s, "-") {
			remove = append(remove, s[:len(s)-1])
		} else {
			return nil, nil, fmt.Errorf("unknown label spec: %v", s)
		}
	}
	for _, r := range remove {
		if _, ok := labels[r]; ok {
			return nil, nil, fmt.Errorf("can not both modify and remove a label in the same command")
		}
	}
	return labels, remove, nil
}

// parsePairs is cmdutil.ParsePairs for annotations.
func parsePairs(args []string, pairType string) (map[string]string, []string, error) {
	pairs := map[string]string{}
	remove := []string{}
	var invalid []string
	for _, a := range args {
		switch {
		case strings.Contains(a, "=") && a[0] != '=':
			parts := strings.SplitN(a, "=", 2)
			pairs[parts[0]] = parts[1]
		case strings.HasSuffix(a, "-") && a != "-":
			remove = append(remove, a[:len(a)-1])
		default:
			invalid = append(invalid, a)
		}
	}
	if len(invalid) > 0 {
		return nil, nil, fmt.Errorf("invalid %s format: %s", pairType, strings.Join(invalid, ", "))
	}
	return pairs, remove, nil
}

func (k *kubectl) runLabel(cmd *command, verb string, o *labelOptions, args []string) error {
	pairType := "annotation"
	if verb == "label" {
		pairType = "label"
	}
	resources, pairArgs, err := resourcesAndPairs(args, pairType)
	if err != nil {
		return err
	}
	var newMap map[string]string
	var remove []string
	if verb == "label" {
		newMap, remove, err = parseLabelSpecs(pairArgs)
	} else {
		newMap, remove, err = parsePairs(pairArgs, "annotation")
		if err == nil {
			var both []string
			for _, r := range remove {
				if _, ok := newMap[r]; ok {
					both = append(both, r)
				}
			}
			if len(both) > 0 {
				err = fmt.Errorf("can not both modify and remove the following annotation(s) in the same command: %s", strings.Join(both, ", "))
			}
		}
	}
	if err != nil {
		return err
	}
	if o.list && len(o.output) > 0 {
		return fmt.Errorf("--list and --output may not be specified together")
	}
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}
	// Validate.
	if o.all && o.selector != "" {
		return fmt.Errorf("cannot set --all and --selector at the same time")
	}
	if o.all && o.fieldSelector != "" {
		return fmt.Errorf("cannot set --all and --field-selector at the same time")
	}
	if o.local {
		return &notSupportedError{what: verb + " --local"}
	}
	if len(resources) < 1 && len(o.files.filenames) == 0 {
		if verb == "label" {
			return fmt.Errorf("one or more resources must be specified as <resource> <name> or <resource>/<name>")
		}
		return usageErrorf(cmd, "one or more resources must be specified as <resource> <name> or <resource>/<name>")
	}
	if len(newMap) < 1 && len(remove) < 1 && !o.list {
		if verb == "label" {
			return fmt.Errorf("at least one label update is required")
		}
		return usageErrorf(cmd, "at least one annotation update is required")
	}
	bo := builderOptions{namespace: k.namespace, allNamespaces: o.allNamespaces, labelSelector: o.selector, fieldSelector: o.fieldSelector, allowEmptySelector: o.all}
	infos, errs, one, err := k.targets(resources, o.files, bo, fetchLatest, 0)
	if err != nil {
		return err
	}
	if !one && o.resourceVersion != "" {
		return fmt.Errorf("--resource-version may only be used with a single resource")
	}
	for _, it := range infos {
		obj := it.object
		if o.resourceVersion != "" {
			obj.SetResourceVersion("")
		}
		oldData, _ := json.Marshal(obj.Object)
		current := obj.GetLabels()
		if verb == "annotate" {
			current = obj.GetAnnotations()
		}
		if verb == "label" && dry != dryRunClient && !o.list {
			for _, r := range remove {
				if _, ok := current[r]; !ok {
					fmt.Fprintf(&k.out, "label %q not found.\n", r)
				}
			}
		}
		if !o.overwrite {
			if err := noOverwrites(verb, current, newMap); err != nil {
				return err
			}
		}
		if current == nil {
			current = map[string]string{}
		}
		added, removed := 0, 0
		for _, key := range sortedStringKeys(newMap) {
			if v, ok := current[key]; !ok || v != newMap[key] {
				current[key] = newMap[key]
				added++
			}
		}
		for _, r := range remove {
			if _, ok := current[r]; ok {
				delete(current, r)
				removed++
			}
		}
		if verb == "label" {
			obj.SetLabels(current)
		} else {
			obj.SetAnnotations(current)
		}
		if o.resourceVersion != "" {
			obj.SetResourceVersion(o.resourceVersion)
		}
		output := obj
		if dry != dryRunClient && !o.list && (verb == "annotate" || added > 0 || removed > 0) {
			newData, _ := json.Marshal(obj.Object)
			patch, perr := jsonpatch.CreateMergePatch(oldData, newData)
			q := writeQuery(dry, o.fieldManager, "")
			var body []byte
			if perr == nil {
				body, err = k.client.call(request{method: "PATCH", path: it.mapping.path(it.namespace, it.name), query: q, accept: acceptJSON,
					contentType: "application/merge-patch+json", body: patch, resource: it.mapping.gvr.GroupResource(), name: it.name})
			} else {
				body, err = k.client.call(request{method: "PUT", path: it.mapping.path(it.namespace, it.name), query: q, accept: acceptJSON,
					contentType: "application/json", body: encode(obj.Object), resource: it.mapping.gvr.GroupResource(), name: it.name})
			}
			if err != nil {
				return err
			}
			if u, derr := decodeObject(body); derr == nil {
				output = u
			}
		}
		if o.list {
			m := output.GetLabels()
			title := "labels"
			if verb == "annotate" {
				m = output.GetAnnotations()
				title = "annotations"
			}
			indent := ""
			if !one {
				indent = " "
				gvk := it.object.GroupVersionKind()
				fmt.Fprintf(&k.out, "Listing %s for %s.%s/%s:\n", title, gvk.Kind, gvk.Group, it.name)
			}
			for _, key := range sortedStringKeys(m) {
				fmt.Fprintf(&k.out, "%s%s=%s\n", indent, key, m[key])
			}
			continue
		}
		var p *outputPrinter
		if verb == "label" {
			msg := "not labeled"
			switch {
			case added > 0 && removed > 0:
				msg = "modified"
			case added > 0:
				msg = "labeled"
			case removed > 0:
				msg = "unlabeled"
			}
			p = &outputPrinter{format: o.output, operation: withDryRun(msg, dry)}
			// kubectl label prints the object it read, with the new labels, not the server's answer.
			output = obj
		} else {
			p = &outputPrinter{format: o.output, operation: withDryRun("annotated", dry)}
		}
		if err := p.print(&k.out, output); err != nil {
			return err
		}
	}
	return utilerrors.NewAggregate(errs)
}

func noOverwrites(verb string, current, updates map[string]string) error {
	if verb == "label" {
		var errs []error
		for _, key := range sortedStringKeys(updates) {
			if v, ok := current[key]; ok && v != updates[key] {
				errs = append(errs, fmt.Errorf("'%s' already has a value (%s), and --overwrite is false", key, v))
			}
		}
		return utilerrors.NewAggregate(errs)
	}
	var found []string
	for _, key := range sortedStringKeys(updates) {
		if key == "kubernetes.io/change-cause" {
			continue
		}
		if v, ok := current[key]; ok && v != updates[key] {
			found = append(found, fmt.Sprintf("'%s' already has a value (%s)", key, v))
		}
	}
	if len(found) > 0 {
		return fmt.Errorf("--overwrite is false but found the following declared annotation(s): %s", strings.Join(found, "; "))
	}
	return nil
}

func sortedStringKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// --- wait ---

type waitOptions struct {
	files         fileOptions
	output        string
	template      string
	forConditions []string
	timeout       time.Duration
	selector      string
	fieldSelector string
	all           bool
	allNamespaces bool
}

func (k *kubectl) newWaitCommand() *command {
	o := &waitOptions{timeout: 30 * time.Second}
	cmd := &command{
		Use:                   "wait ([-f FILENAME] | resource.group/resource.name | resource.group [(-l label | --all)]) [--for=create|--for=delete|--for condition=available|--for=jsonpath='{}'[=value]]",
		DisableFlagsInUseLine: true,
		Short:                 "Wait for a specific condition on one or many resources",
		RunE: func(cmd *command, args []string) error {
			return k.runWait(cmd, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.output, "output", "o", "", "Output format.")
	addTemplateFlags(cmd, &o.template)
	f.Bool("show-managed-fields", false, "If true, keep the managedFields when printing objects in JSON or YAML format.")
	addFileFlags(cmd, &o.files, "identifying the resource.")
	f.StringVarP(&o.selector, "selector", "l", "", "Selector (label query) to filter on.")
	f.StringVar(&o.fieldSelector, "field-selector", "", "Selector (field query) to filter on.")
	f.BoolVar(&o.all, "all", false, "Select all resources in the namespace of the specified resource types")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If present, list the requested object(s) across all namespaces.")
	f.BoolP("local", "", false, "If true, annotation will NOT contact api-server but run locally.")
	f.DurationVar(&o.timeout, "timeout", 30*time.Second, "The length of time to wait before giving up.")
	f.StringArrayVar(&o.forConditions, "for", nil, "The condition to wait on: [create|delete|condition=condition-name[=condition-value]|jsonpath='{JSONPath expression}'=[JSONPath value]].")
	return cmd
}

// waitCondition is one --for.
type waitCondition struct {
	kind   string // "delete", "create", "condition"
	name   string
	status string
}

func parseWaitConditions(fors []string) ([]waitCondition, error) {
	if len(fors) == 0 {
		return nil, fmt.Errorf("--for must be specified")
	}
	var out []waitCondition
	for _, c := range fors {
		lower := strings.ToLower(c)
		switch {
		case lower == "delete":
			out = append(out, waitCondition{kind: "delete"})
		case lower == "create":
			out = append(out, waitCondition{kind: "create"})
		case strings.HasPrefix(c, "condition="):
			cond := strings.TrimPrefix(c, "condition=")
			status := "true"
			if eq := strings.Index(cond, "="); eq != -1 {
				status = cond[eq+1:]
				cond = cond[:eq]
			}
			out = append(out, waitCondition{kind: "condition", name: cond, status: status})
		case strings.HasPrefix(c, "jsonpath="):
			return nil, &notSupportedError{what: "wait --for=jsonpath"}
		default:
			return nil, fmt.Errorf("unrecognized condition: %q", c)
		}
	}
	return out, nil
}

// runWait checks each condition once, as `kubectl wait --timeout=0` does. The engine changes conditions only
// when a request changes them, so a condition not met now would not be met at the end of the timeout either;
// the answer is then kubectl's timeout error, without the wait.
func (k *kubectl) runWait(cmd *command, o *waitOptions, args []string) error {
	conds, err := parseWaitConditions(o.forConditions)
	if err != nil {
		return err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return err
		}
	}
	isDelete := false
	for _, c := range conds {
		if c.kind == "delete" {
			isDelete = true
		}
	}
	bo := builderOptions{namespace: k.namespace, allNamespaces: o.allNamespaces, labelSelector: o.selector, fieldSelector: o.fieldSelector, allowEmptySelector: o.all}
	infos, errs, _, err := k.targets(args, o.files, bo, fetchLatest, 0)
	if err != nil {
		return err
	}
	p := &outputPrinter{format: o.output, operation: "condition met"}
	visited := 0
	for _, it := range infos {
		visited++
		for _, c := range conds {
			obj, met, err := k.checkCondition(it, c, o.timeout)
			if err != nil {
				return err
			}
			if met {
				_ = p.print(&k.out, obj)
			}
		}
	}
	if isDelete {
		var kept []error
		for _, e := range errs {
			if !apierrors.IsNotFound(e) {
				kept = append(kept, e)
			}
		}
		errs = kept
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if visited == 0 && !isDelete {
		return fmt.Errorf("no matching resources found")
	}
	return nil
}

// watchListQuery is the query of kubectl's watch of one object with the watch-list semantics of client-go:
// the current object as initial events, a bookmark, then changes.
func watchListQuery(name string, timeout time.Duration) url.Values {
	secs := int(timeout / time.Second)
	if secs <= 0 {
		secs = 1
	}
	q := url.Values{}
	q.Set("allowWatchBookmarks", "true")
	q.Set("fieldSelector", "metadata.name="+name)
	q.Set("resourceVersionMatch", "NotOlderThan")
	q.Set("sendInitialEvents", "true")
	q.Set("timeoutSeconds", strconv.Itoa(secs))
	q.Set("watch", "true")
	return q
}

func isInitialEventsEnd(ev watchEvent) bool {
	if ev.Type != "BOOKMARK" {
		return false
	}
	u := unstructured.Unstructured{Object: ev.Object}
	return u.GetAnnotations()["k8s.io/initial-events-end"] == "true"
}

// conditionWait is how long the playground watches for a condition that the initial state does not meet:
// nothing in the engine changes an object unless a request does, so a short look is as good as kubectl's
// 30 seconds.
const conditionWait = 500 * time.Millisecond

// checkCondition is kubectl wait's check of one object: with a timeout, a watch that starts with the
// current object; with --timeout=0, a GET.
func (k *kubectl) checkCondition(it *info, c waitCondition, timeout time.Duration) (*unstructured.Unstructured, bool, error) {
	if it.name == "" {
		return nil, false, fmt.Errorf("resource name must be provided")
	}
	timeoutErr := fmt.Errorf("timed out waiting for the condition on %s/%s", it.mapping.gvr.Resource, it.name)
	notMetErr := fmt.Errorf("condition not met for %s", it.mapping.gvr.Resource+"/"+it.name)
	switch c.kind {
	case "create":
		return it.object, true, nil
	case "delete":
		obj, err := k.get(it.mapping, it.namespace, it.name, "")
		if apierrors.IsNotFound(err) {
			return it.object, true, nil
		}
		if err != nil {
			return it.object, false, err
		}
		if timeout == 0 {
			return obj, false, notMetErr
		}
		deleted := false
		_, _ = k.client.watch(request{method: "GET", path: it.mapping.path(it.namespace, ""), query: watchListQuery(it.name, timeout), accept: acceptJSON},
			conditionWait, func(ev watchEvent) bool {
				if ev.Type == "DELETED" {
					deleted = true
				}
				return deleted
			})
		if deleted {
			return obj, true, nil
		}
		return obj, false, timeoutErr
	}
	if timeout == 0 {
		obj, err := k.get(it.mapping, it.namespace, it.name, "")
		if err != nil {
			return nil, false, err
		}
		if !conditionMet(obj, c) {
			return obj, false, notMetErr
		}
		return obj, true, nil
	}
	var (
		last    *unstructured.Unstructured
		met     bool
		initial = true
		seen    bool
	)
	_, err := k.client.watch(request{method: "GET", path: it.mapping.path(it.namespace, ""), query: watchListQuery(it.name, timeout), accept: acceptJSON},
		conditionWait, func(ev watchEvent) bool {
			switch ev.Type {
			case "ADDED", "MODIFIED":
				u := &unstructured.Unstructured{Object: ev.Object}
				seen = true
				last = u
				if conditionMet(u, c) {
					met = true
					return true
				}
			case "BOOKMARK":
				if isInitialEventsEnd(ev) {
					initial = false
					// The object is not there: kubectl's precondition fails at once.
					return !seen
				}
			}
			return false
		})
	if err != nil {
		return nil, false, err
	}
	if met {
		return last, true, nil
	}
	if !seen && !initial {
		return nil, false, apierrorsNotFound(it)
	}
	return last, false, timeoutErr
}

func apierrorsNotFound(it *info) error {
	return apierrors.NewNotFound(it.mapping.gvr.GroupResource(), it.name)
}

// conditionMet is ConditionalWait.checkCondition: status.conditions[type=name].status, compared without case,
// and not for an older generation.
func conditionMet(obj *unstructured.Unstructured, c waitCondition) bool {
	conditions, found, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil || !found {
		return false
	}
	for _, cu := range conditions {
		cond, ok := cu.(map[string]interface{})
		if !ok {
			continue
		}
		name, found, err := unstructured.NestedString(cond, "type")
		if !found || err != nil || !strings.EqualFold(name, c.name) {
			continue
		}
		status, found, err := unstructured.NestedString(cond, "status")
		if !found || err != nil {
			continue
		}
		if gen, found, _ := unstructured.NestedInt64(obj.Object, "metadata", "generation"); found {
			og, found, _ := unstructured.NestedInt64(cond, "observedGeneration")
			if !found {
				og, found, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
			}
			if found && og < gen {
				return false
			}
		}
		return strings.EqualFold(status, c.status)
	}
	return false
}
