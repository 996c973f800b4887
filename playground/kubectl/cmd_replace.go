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
	f := cmd.Flags()
	addPrintFlags(cmd, &o.printFlags)
	addFileFlags(cmd, &o.files, "to use to replace the resource.")
	f.BoolVar(&o.saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation.")
	addFieldManagerFlag(cmd, &o.fieldManager, "kubectl-replace")
	f.String("subresource", "", "If specified, replace will operate on the subresource of the requested object.")
	f.Bool("force", false, "If true, immediately remove resources from API and bypass graceful deletion.")
	f.String("raw", "", "Raw URI to PUT to the server.")
	addDryRunFlag(cmd)
	addValidateFlag(cmd)
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
	dry, err := getDryRun(cmd)
	if err != nil {
		return err
	}
	directive, err := getValidationDirective(cmd)
	if err != nil {
		return err
	}
	b, err := k.newBuilder(nil, o.files, builderOptions{validate: k.validator(directive)})
	if err != nil {
		return err
	}
	infos, errs := b.infos(fetchNone)
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields, operation: withDryRun("replaced", dry)}
	for _, it := range infos {
		if err := k.replaceOne(it, o, dry, directive, p); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

// replaceOne replaces one object (not with --dry-run=client) and prints it.
func (k *kubectl) replaceOne(it *info, o *createOptions, dry dryRun, directive string, p *outputPrinter) error {
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
			return addSourceToErr("replacing", it.source, err)
		}
		obj, err := decodeObject(body)
		if err != nil {
			return err
		}
		it.object = obj
	}
	return p.print(&k.out, it.object)
}
