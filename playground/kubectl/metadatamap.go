package kubectl

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// metadataMap is what kubectl label and kubectl annotate differ in. Both run the same steps (runMapEdit):
// fetch the objects, change one map of their metadata, and send a merge patch computed from the JSON before
// and after.
type metadataMap struct {
	verb  string // the command: "label" or "annotate"
	noun  string // what it changes, in messages: "label" or "annotation"
	short string
	get   func(*unstructured.Unstructured) map[string]string
	set   func(*unstructured.Unstructured, map[string]string)
	// parse reads the KEY=VALUE and KEY- arguments.
	parse func(pairs []string) (updates map[string]string, remove []string, err error)
	// overwriteError is the error for updates that change a value without --overwrite.
	overwriteError func(current, updates map[string]string) error
	// usageErrors: a command line without resources or updates is a usage error (annotate), not a plain one.
	usageErrors bool
	// reportMissing: say which keys to remove the object does not have (label).
	reportMissing bool
	// patchUnchanged: send the patch even when the map did not change (annotate).
	patchUnchanged bool
	// operation is what the name printer says was done, from the number of keys added and removed.
	operation func(added, removed int) string
	// printSent: print the object as sent (label), not the server's answer.
	printSent bool
}

type mapEditOptions struct {
	printFlags
	selectorFlags
	files           fileOptions
	overwrite       bool
	list            bool
	local           bool
	all             bool
	resourceVersion string
	fieldManager    string

	// Set by completeMapEdit.
	dry     dryRun
	updates map[string]string
	remove  []string
}

// newMapEditCommand builds kubectl label or kubectl annotate.
func (k *kubectl) newMapEditCommand(v *metadataMap) *command {
	o := &mapEditOptions{}
	cmd := &command{
		Use:   v.verb + " [--overwrite] (-f FILENAME | TYPE NAME) KEY_1=VAL_1 ... KEY_N=VAL_N [--resource-version=version]",
		Short: v.short,
		RunE:  func(cmd *command, args []string) error { return k.runMapEdit(cmd, v, o, args) },
	}
	f := cmd.Flags()
	addRecordFlag(cmd)
	addPrintFlags(cmd, &o.printFlags)
	f.BoolVar(&o.overwrite, "overwrite", false, "If true, allow "+v.noun+"s to be overwritten.")
	f.BoolVar(&o.list, "list", false, "If true, display the "+v.noun+"s for a given resource.")
	f.BoolVar(&o.local, "local", false, "If true, "+v.verb+" will NOT contact api-server but run locally.")
	addFieldSelectorFlag(cmd, &o.fieldSelector)
	f.BoolVar(&o.all, "all", false, "Select all resources, in the namespace of the specified resource types")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "If true, check the specified action in all namespaces.")
	f.StringVar(&o.resourceVersion, "resource-version", "", "If non-empty, the update will only succeed if this is the current resource-version for the object.")
	addFileFlags(cmd, &o.files, "identifying the resource to update the "+v.noun+"s")
	addLabelSelectorFlag(cmd, &o.labelSelector)
	addDryRunFlag(cmd)
	addFieldManagerFlag(cmd, &o.fieldManager, "kubectl-"+v.verb)
	return cmd
}

// runMapEdit is LabelOptions (or AnnotateOptions) Complete, Validate and RunLabel: change the map of every
// object the builder fetches. An error stops at the object it concerns.
func (k *kubectl) runMapEdit(cmd *command, v *metadataMap, o *mapEditOptions, args []string) error {
	resources, err := k.completeMapEdit(cmd, v, o, args)
	if err != nil {
		return err
	}
	b, err := k.newBuilder(resources, o.files, builderOptions{selectorFlags: o.selectorFlags, allowEmptySelector: o.all})
	if err != nil {
		return err
	}
	infos, errs := b.infos(fetchLatest)
	if !b.singleItemImplied && o.resourceVersion != "" {
		return fmt.Errorf("--resource-version may only be used with a single resource")
	}
	for _, it := range infos {
		if err := k.editMap(v, o, it, b.singleItemImplied); err != nil {
			return err
		}
	}
	return utilerrors.NewAggregate(errs)
}

// completeMapEdit splits the arguments into resources and changes, parses the changes, and checks the flags;
// it returns the resource arguments.
func (k *kubectl) completeMapEdit(cmd *command, v *metadataMap, o *mapEditOptions, args []string) ([]string, error) {
	resources, pairs, err := resourcesAndPairs(args, v.noun)
	if err != nil {
		return nil, err
	}
	if o.updates, o.remove, err = v.parse(pairs); err != nil {
		return nil, err
	}
	if o.list && len(o.output) > 0 {
		return nil, fmt.Errorf("--list and --output may not be specified together")
	}
	if o.dry, err = getDryRun(cmd); err != nil {
		return nil, err
	}
	if o.output != "" {
		if err := checkFormat(o.output, allowedFormats); err != nil {
			return nil, err
		}
	}
	if err := checkAllAndSelectors(o.all, o.labelSelector, o.fieldSelector); err != nil {
		return nil, err
	}
	if o.local {
		return nil, &notSupportedError{what: v.verb + " --local"}
	}
	if len(resources) < 1 && len(o.files.filenames) == 0 {
		return nil, v.argsError(cmd, "one or more resources must be specified as <resource> <name> or <resource>/<name>")
	}
	if len(o.updates) < 1 && len(o.remove) < 1 && !o.list {
		return nil, v.argsError(cmd, "at least one "+v.noun+" update is required")
	}
	return resources, nil
}

// argsError is the error for a command line that lacks resources or changes.
func (v *metadataMap) argsError(cmd *command, msg string) error {
	if v.usageErrors {
		return usageErrorf(cmd, "%s", msg)
	}
	return fmt.Errorf("%s", msg)
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

// editMap changes one object's map, sends the change unless there is nothing to send, and prints the
// object (or, with --list, the map).
func (k *kubectl) editMap(v *metadataMap, o *mapEditOptions, it *info, singleItemImplied bool) error {
	obj := it.object
	if o.resourceVersion != "" {
		obj.SetResourceVersion("")
	}
	oldData, _ := json.Marshal(obj.Object)
	current := v.get(obj)
	if v.reportMissing && o.dry != dryRunClient && !o.list {
		for _, r := range o.remove {
			if _, ok := current[r]; !ok {
				fmt.Fprintf(&k.out, "%s %q not found.\n", v.noun, r)
			}
		}
	}
	if !o.overwrite {
		if err := v.overwriteError(current, o.updates); err != nil {
			return err
		}
	}
	current, added, removed := applyMapChanges(current, o.updates, o.remove)
	v.set(obj, current)
	if o.resourceVersion != "" {
		obj.SetResourceVersion(o.resourceVersion)
	}
	output := obj
	if o.dry != dryRunClient && !o.list && (v.patchUnchanged || added > 0 || removed > 0) {
		answer, err := k.sendMapChange(it, o, oldData)
		if err != nil {
			return err
		}
		if answer != nil {
			output = answer
		}
	}
	if o.list {
		k.listMap(v, it, v.get(output), singleItemImplied)
		return nil
	}
	if v.printSent {
		output = obj
	}
	p := &outputPrinter{format: o.output, operation: withDryRun(v.operation(added, removed), o.dry)}
	return p.print(&k.out, output)
}

// applyMapChanges sets the updates (in key order) and removes the keys to remove, counting what changed.
func applyMapChanges(current, updates map[string]string, remove []string) (map[string]string, int, int) {
	if current == nil {
		current = map[string]string{}
	}
	added, removed := 0, 0
	for _, key := range slices.Sorted(maps.Keys(updates)) {
		if v, ok := current[key]; !ok || v != updates[key] {
			current[key] = updates[key]
			added++
		}
	}
	for _, r := range remove {
		if _, ok := current[r]; ok {
			delete(current, r)
			removed++
		}
	}
	return current, added, removed
}

// sendMapChange sends the object's change as a merge patch from its JSON before (oldData) to after, or, if
// no patch can be made, as a PUT. It returns the server's answer (nil when it does not decode).
func (k *kubectl) sendMapChange(it *info, o *mapEditOptions, oldData []byte) (*unstructured.Unstructured, error) {
	newData, _ := json.Marshal(it.object.Object)
	patch, perr := jsonpatch.CreateMergePatch(oldData, newData)
	r := request{path: it.mapping.path(it.namespace, it.name), query: writeQuery(o.dry, o.fieldManager, ""), accept: acceptJSON,
		resource: it.mapping.gvr.GroupResource(), name: it.name}
	if perr == nil {
		r.method, r.contentType, r.body = "PATCH", "application/merge-patch+json", patch
	} else {
		r.method, r.contentType, r.body = "PUT", "application/json", encode(it.object.Object)
	}
	body, err := k.client.call(r)
	if err != nil {
		return nil, err
	}
	if u, err := decodeObject(body); err == nil {
		return u, nil
	}
	return nil, nil
}

// listMap is --list: the map's entries, under a title naming the object when there are several.
func (k *kubectl) listMap(v *metadataMap, it *info, m map[string]string, singleItemImplied bool) {
	indent := ""
	if !singleItemImplied {
		indent = " "
		gvk := it.object.GroupVersionKind()
		fmt.Fprintf(&k.out, "Listing %ss for %s.%s/%s:\n", v.noun, gvk.Kind, gvk.Group, it.name)
	}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&k.out, "%s%s=%s\n", indent, key, m[key])
	}
}
