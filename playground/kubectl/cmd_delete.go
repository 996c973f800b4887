package kubectl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

type deleteOptions struct {
	selectorFlags
	files          fileOptions
	all            bool
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

	// Set by completeDelete.
	propagation string // the DeleteOptions' propagationPolicy
	dry         dryRun
}

func (k *kubectl) newDeleteCommand() *command {
	o := &deleteOptions{cascade: "background", gracePeriod: -1, wait: true}
	cmd := &command{
		Use:        "delete ([-f FILENAME] | [-k DIRECTORY] | TYPE [(NAME | -l label | --all)])",
		Short:      "Delete resources by file names, stdin, resources and names, or by resources and label selector",
		SuggestFor: []string{"rm", "remove"},
		RunE:       func(cmd *command, args []string) error { return k.runDelete(cmd, o, args) },
	}
	f := cmd.Flags()
	addFileFlags(cmd, &o.files, "containing the resource to delete.")
	addLabelSelectorFlag(cmd, &o.labelSelector)
	addFieldSelectorFlag(cmd, &o.fieldSelector)
	f.BoolVar(&o.all, "all", false, "Delete all resources, in the namespace of the specified resource types.")
	addAllNamespacesFlag(cmd, &o.allNamespaces)
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

// runDelete is DeleteOptions.Complete, Validate and RunDelete: delete every object the builder finds, then
// wait for each to be gone.
func (k *kubectl) runDelete(cmd *command, o *deleteOptions, args []string) error {
	if err := k.completeDelete(cmd, o); err != nil {
		return err
	}
	b, err := k.newBuilder(args, o.files, builderOptions{selectorFlags: o.selectorFlags, selectAll: o.all})
	if err != nil {
		return err
	}
	if err := k.validateDelete(o); err != nil {
		return err
	}
	infos, errs := b.infos(fetchNone)
	deleted, derrs := k.deleteAll(infos, o)
	errs = append(errs, derrs...)
	if o.ignoreNotFound {
		errs = withoutNotFound(errs)
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if len(infos) == 0 {
		fmt.Fprintf(&k.out, "No resources found\n")
		return nil
	}
	if !o.wait || o.dry != dryRunNone {
		return nil
	}
	for _, d := range deleted {
		if err := k.waitForDeletion(d.it, d.uid, o.timeout); err != nil {
			return err
		}
	}
	return nil
}

// completeDelete is DeleteOptions.Complete: the propagation policy, --ignore-not-found implied by -l and
// --all, the grace period --now and --force imply, and the dry-run strategy.
func (k *kubectl) completeDelete(cmd *command, o *deleteOptions) error {
	propagation, err := k.parseCascade(o.cascade)
	if err != nil {
		return err
	}
	o.propagation = propagation
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
	if o.dry, err = getDryRun(cmd); err != nil {
		return err
	}
	if o.raw != "" || o.interactive {
		return &notSupportedError{what: "delete --raw/--interactive"}
	}
	return nil
}

// validateDelete is DeleteOptions.Validate, with its warning for --force without a grace period.
func (k *kubectl) validateDelete(o *deleteOptions) error {
	if o.output != "" && o.output != "name" {
		return fmt.Errorf("unexpected -o output mode: %v. We only support '-o name'", o.output)
	}
	if err := checkAllAndSelectors(o.all, o.labelSelector, o.fieldSelector); err != nil {
		return err
	}
	switch {
	case o.gracePeriod == 0 && o.force:
		fmt.Fprintln(&k.errOut, "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.")
	case o.gracePeriod > 0 && o.force:
		return fmt.Errorf("--force and --grace-period greater than 0 cannot be specified together")
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

// deletion is an object delete visited, and the uid the server's answer gave it: the wait afterwards is for
// that object, not for one created since under the same name.
type deletion struct {
	it  *info
	uid string
}

// deleteAll deletes each object in turn; an error does not stop the others. Every object is visited, those
// whose delete failed too (the wait afterwards looks at them when --ignore-not-found forgives the failure).
func (k *kubectl) deleteAll(infos []*info, o *deleteOptions) ([]deletion, []error) {
	warnClusterScope := k.explicitNamespace && !o.allNamespaces
	var visited []deletion
	var errs []error
	for _, it := range infos {
		if warnClusterScope && !it.mapping.namespaced {
			fmt.Fprintln(&k.errOut, "Warning: deleting cluster-scoped resources, not scoped to the provided namespace")
			warnClusterScope = false
		}
		uid, err := k.deleteOne(it, o)
		if err != nil {
			// The builder goes on with the next object and reports every error at the end.
			errs = append(errs, err)
		}
		visited = append(visited, deletion{it: it, uid: uid})
	}
	return visited, errs
}

// deleteOne deletes one object (not with --dry-run=client) and prints it; it returns the uid the server
// answered with.
func (k *kubectl) deleteOne(it *info, o *deleteOptions) (string, error) {
	if o.dry == dryRunClient {
		k.printDeleted(it, o)
		return "", nil
	}
	body, err := k.client.call(request{
		method: "DELETE", path: it.mapping.path(it.namespace, it.name), accept: acceptJSON,
		contentType: "application/json", body: o.body(),
		resource: it.mapping.gvr.GroupResource(), name: it.name,
	})
	if err != nil {
		return "", addSourceToErr("deleting", it.source, err)
	}
	k.printDeleted(it, o)
	if st, ok := decodeStatus(body); ok {
		if st.Details != nil {
			return string(st.Details.UID), nil
		}
		return "", nil
	}
	if obj, err := decodeObject(body); err == nil {
		return string(obj.GetUID()), nil
	}
	return "", nil
}

// body is the typed DeleteOptions, which kubectl's unstructured client encodes without apiVersion and kind.
func (o *deleteOptions) body() []byte {
	opts := &metav1.DeleteOptions{}
	if o.gracePeriod >= 0 {
		grace := int64(o.gracePeriod)
		opts.GracePeriodSeconds = &grace
	}
	policy := metav1.DeletionPropagation(o.propagation)
	opts.PropagationPolicy = &policy
	if o.dry == dryRunServer {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	data, _ := json.Marshal(opts)
	return append(data, '\n')
}

func (k *kubectl) printDeleted(it *info, o *deleteOptions) {
	kind := it.mapping.groupKindString()
	if o.output == "name" {
		fmt.Fprintf(&k.out, "%s/%s\n", kind, it.name)
		return
	}
	op := "deleted"
	if o.gracePeriod == 0 {
		op = "force deleted"
	}
	if it.mapping.namespaced {
		op = fmt.Sprintf("%s from %s namespace", op, it.namespace)
	}
	fmt.Fprintf(&k.out, "%s \"%s\" %s\n", kind, it.name, withDryRun(op, o.dry))
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
	if k.watchForDeletion(it, 168*time.Hour, wait) {
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
