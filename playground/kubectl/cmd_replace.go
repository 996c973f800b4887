package kubectl

import (
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

func (k *kubectl) newReplaceCommand() *command {
	o := &createOptions{}
	cmd := &command{
		Use:   "replace -f FILENAME",
		Short: "Replace a resource by file name or stdin",
		RunE:  func(cmd *command, args []string) error { return k.runReplace(cmd, o, args) },
	}
	o.addWriteFlags(cmd, "replace")
	f := cmd.Flags()
	f.String("subresource", "", "If specified, replace will operate on the subresource of the requested object.")
	f.Bool("force", false, "If true, immediately remove resources from API and bypass graceful deletion.")
	f.String("raw", "", "Raw URI to PUT to the server.")
	return cmd
}

// runReplace is kubectl replace -f: PUT each object of the files.
func (k *kubectl) runReplace(cmd *command, o *createOptions, args []string) error {
	if len(args) > 0 {
		return usageErrorf(cmd, "Unexpected args: %v", args)
	}
	if len(o.files.filenames) == 0 && o.files.kustomize == "" {
		return usageErrorf(cmd, "must specify --filename to replace")
	}
	if err := o.completeWrite(cmd); err != nil {
		return err
	}
	_, errs, err := k.writeObjects(o, "replaced", func(it *info) error { return k.replaceOne(it, o) })
	if err != nil {
		return err
	}
	return utilerrors.NewAggregate(errs)
}

// replaceOne is resource.Helper.Replace: PUT the object, with the live resourceVersion when it has none.
func (k *kubectl) replaceOne(it *info, o *createOptions) error {
	if it.object.GetResourceVersion() == "" {
		if live, err := k.get(it.mapping, it.namespace, it.name, ""); err == nil {
			it.object.SetResourceVersion(live.GetResourceVersion())
		}
	}
	body, err := k.client.call(request{
		method: "PUT", path: it.mapping.path(it.namespace, it.name),
		query: writeQuery(o.dry, o.fieldManager, o.directive), accept: acceptJSON, contentType: "application/json",
		body: encode(it.object.Object), resource: it.mapping.gvr.GroupResource(), name: it.name,
	})
	if err != nil {
		return addSourceToErr("replacing", it.source, err)
	}
	obj, err := decodeObject(body)
	if err != nil {
		return err
	}
	it.object = obj
	return nil
}
