package kubectl

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

type scaleOptions struct {
	printFlags
	selectorFlags
	files           fileOptions
	all             bool
	resourceVersion string
	currentReplicas int
	replicas        int
	timeout         time.Duration
}

func (k *kubectl) newScaleCommand() *command {
	o := &scaleOptions{currentReplicas: -1}
	cmd := &command{
		Use:   "scale [--resource-version=version] [--current-replicas=count] --replicas=COUNT (-f FILENAME | TYPE NAME)",
		Short: "Set a new size for a deployment, replica set, or replication controller",
		RunE:  func(cmd *command, args []string) error { return k.runScale(cmd, o, args) },
	}
	f := cmd.Flags()
	addRecordFlag(cmd)
	addPrintFlags(cmd, &o.printFlags)
	f.BoolVar(&o.all, "all", false, "Select all resources in the namespace of the specified resource types")
	f.StringVar(&o.resourceVersion, "resource-version", "", "Precondition for resource version.")
	f.IntVar(&o.currentReplicas, "current-replicas", -1, "Precondition for current size.")
	f.IntVar(&o.replicas, "replicas", 0, "The new desired number of replicas. Required.")
	_ = cmd.MarkFlagRequired("replicas")
	f.DurationVar(&o.timeout, "timeout", 0, "The length of time to wait before giving up on a scale operation.")
	addFileFlags(cmd, &o.files, "identifying the resource to set a new size")
	addDryRunFlag(cmd)
	addLabelSelectorFlag(cmd, &o.labelSelector)
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
	b, err := k.newBuilder(args, o.files, builderOptions{selectorFlags: o.selectorFlags, allowEmptySelector: o.all})
	if err != nil {
		return err
	}
	infos, errs := b.infos(fetchLazy)
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
		if dry != dryRunClient {
			if err := k.scaleOne(it, o, dry); err != nil {
				return err
			}
		}
		if err := p.print(&k.out, it.object); err != nil {
			return err
		}
	}
	return utilerrors.NewAggregate(errs)
}

// scaleOne is kubectl's scaler: a merge patch of /scale, or, with preconditions, GET /scale, check, PUT.
func (k *kubectl) scaleOne(it *info, o *scaleOptions, dry dryRun) error {
	path := it.mapping.subresourcePath(it.namespace, it.name, "scale")
	q := url.Values{}
	if dry == dryRunServer {
		q.Set("dryRun", "All")
	}
	if o.currentReplicas == -1 && o.resourceVersion == "" {
		patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, o.replicas)
		_, err := k.client.call(request{method: "PATCH", path: path, query: q, accept: acceptJSON, contentType: "application/merge-patch+json",
			body: []byte(patch), resource: it.mapping.gvr.GroupResource(), name: it.name})
		return err
	}
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
