package kubectl

import (
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

type waitOptions struct {
	printFlags
	selectorFlags
	files         fileOptions
	forConditions []string
	timeout       time.Duration
	all           bool
}

func (k *kubectl) newWaitCommand() *command {
	o := &waitOptions{timeout: 30 * time.Second}
	cmd := &command{
		Use:   "wait ([-f FILENAME] | resource.group/resource.name | resource.group [(-l label | --all)]) [--for=create|--for=delete|--for condition=available|--for=jsonpath='{}'[=value]]",
		Short: "Wait for a specific condition on one or many resources",
		RunE:  func(cmd *command, args []string) error { return k.runWait(cmd, o, args) },
	}
	f := cmd.Flags()
	addPrintFlags(cmd, &o.printFlags)
	addFileFlags(cmd, &o.files, "identifying the resource.")
	addLabelSelectorFlag(cmd, &o.labelSelector)
	addFieldSelectorFlag(cmd, &o.fieldSelector)
	f.BoolVar(&o.all, "all", false, "Select all resources in the namespace of the specified resource types")
	addAllNamespacesFlag(cmd, &o.allNamespaces)
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
	b, err := k.newBuilder(args, o.files, builderOptions{selectorFlags: o.selectorFlags, allowEmptySelector: o.all})
	if err != nil {
		return err
	}
	infos, errs := b.infos(fetchLatest)
	p := &outputPrinter{format: o.output, operation: "condition met"}
	for _, it := range infos {
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
		errs = withoutNotFound(errs)
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if len(infos) == 0 && !isDelete {
		return fmt.Errorf("no matching resources found")
	}
	return nil
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
	switch {
	case c.kind == "create":
		return it.object, true, nil
	case c.kind == "delete":
		return k.checkDeleted(it, timeout)
	case timeout == 0:
		obj, err := k.get(it.mapping, it.namespace, it.name, "")
		if err != nil {
			return nil, false, err
		}
		if !conditionMet(obj, c) {
			return obj, false, conditionNotMet(it)
		}
		return obj, true, nil
	}
	return k.watchCondition(it, c, timeout)
}

// conditionNotMet is kubectl wait's error for a condition not met with --timeout=0.
func conditionNotMet(it *info) error {
	return fmt.Errorf("condition not met for %s", it.mapping.gvr.Resource+"/"+it.name)
}

// conditionTimeout is kubectl wait's error for a condition not met in time.
func conditionTimeout(it *info) error {
	return fmt.Errorf("timed out waiting for the condition on %s/%s", it.mapping.gvr.Resource, it.name)
}

// checkDeleted is --for=delete: met when the object is gone, or goes while the playground watches it.
func (k *kubectl) checkDeleted(it *info, timeout time.Duration) (*unstructured.Unstructured, bool, error) {
	obj, err := k.get(it.mapping, it.namespace, it.name, "")
	if apierrors.IsNotFound(err) {
		return it.object, true, nil
	}
	if err != nil {
		return it.object, false, err
	}
	if timeout == 0 {
		return obj, false, conditionNotMet(it)
	}
	if k.watchForDeletion(it, timeout, conditionWait) {
		return obj, true, nil
	}
	return obj, false, conditionTimeout(it)
}

// watchCondition is --for=condition with a timeout: a watch whose initial events tell whether the object
// exists and whether it meets the condition already.
func (k *kubectl) watchCondition(it *info, c waitCondition, timeout time.Duration) (*unstructured.Unstructured, bool, error) {
	var (
		last    *unstructured.Unstructured
		met     bool
		initial = true
		seen    bool
	)
	err := k.watchObject(it, timeout, conditionWait, func(ev watchEvent) bool {
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
		return nil, false, apierrors.NewNotFound(it.mapping.gvr.GroupResource(), it.name)
	}
	return last, false, conditionTimeout(it)
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
