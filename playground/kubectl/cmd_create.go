package kubectl

import (
	"fmt"

	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// createOptions are the options of kubectl create, and of kubectl replace, which has a subset of them.
type createOptions struct {
	printFlags
	selectorFlags
	files        fileOptions
	fieldManager string
	saveConfig   bool
	raw          string
	edit         bool

	// Set by completeWrite.
	dry       dryRun
	directive string // fieldValidation
}

func (k *kubectl) newCreateCommand() *command {
	o := &createOptions{}
	cmd := &command{
		Use:   "create -f FILENAME",
		Short: "Create a resource from a file or from stdin",
		RunE:  func(cmd *command, args []string) error { return k.runCreate(cmd, o, args) },
	}
	o.addWriteFlags(cmd, "create")
	f := cmd.Flags()
	addLabelSelectorFlag(cmd, &o.labelSelector)
	f.BoolVar(&o.edit, "edit", false, "Edit the API resource before creating")
	f.Bool("windows-line-endings", false, "Only relevant if --edit=true.")
	f.StringVar(&o.raw, "raw", "", "Raw URI to POST to the server.")
	addRecordFlag(cmd)
	return cmd
}

// addWriteFlags adds the flags create and replace share.
func (o *createOptions) addWriteFlags(cmd *command, verb string) {
	addPrintFlags(cmd, &o.printFlags)
	addFileFlags(cmd, &o.files, "to use to "+verb+" the resource")
	cmd.Flags().BoolVar(&o.saveConfig, "save-config", false, "If true, the configuration of current object will be saved in its annotation.")
	addFieldManagerFlag(cmd, &o.fieldManager, "kubectl-"+verb)
	addDryRunFlag(cmd)
	addValidateFlag(cmd)
}

// completeWrite reads the dry-run strategy and the validation directive.
func (o *createOptions) completeWrite(cmd *command) error {
	var err error
	if o.dry, err = getDryRun(cmd); err != nil {
		return err
	}
	o.directive, err = getValidationDirective(cmd)
	return err
}

// runCreate is kubectl create -f: POST each object of the files.
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
	if err := o.completeWrite(cmd); err != nil {
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
	n, errs, err := k.writeObjects(o, "created", func(it *info) error {
		obj, err := k.create(it, o.fieldManager, o.directive, o.dry)
		if err != nil {
			return addSourceToErr("creating", it.source, err)
		}
		it.object = obj
		return nil
	})
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}
	if n == 0 {
		return fmt.Errorf("no objects passed to create")
	}
	return nil
}

// writeObjects is what create and replace do with each object of the files: with --save-config, set the
// last-applied annotation; then write it (but with --dry-run=client) and print it with the operation. It
// returns how many objects the files held and the errors of single objects.
func (k *kubectl) writeObjects(o *createOptions, operation string, write func(*info) error) (int, []error, error) {
	b, err := k.newBuilder(nil, o.files, builderOptions{selectorFlags: o.selectorFlags, validate: k.validator(o.directive)})
	if err != nil {
		return 0, nil, err
	}
	infos, errs := b.infos(fetchNone)
	p := &outputPrinter{format: o.output, showManagedFields: o.showManagedFields, operation: withDryRun(operation, o.dry)}
	for _, it := range infos {
		if o.saveConfig {
			if err := createApplyAnnotation(it.object); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if o.dry != dryRunClient {
			if err := write(it); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := p.print(&k.out, it.object); err != nil {
			errs = append(errs, err)
		}
	}
	return len(infos), errs, nil
}

// createSubcommands are kubectl create's generators (and their aliases), which the playground does not run.
var createSubcommands = map[string]bool{
	"clusterrole": true, "clusterrolebinding": true, "configmap": true, "cm": true, "cronjob": true, "cj": true,
	"deployment": true, "deploy": true, "ingress": true, "ing": true, "job": true, "namespace": true, "ns": true,
	"poddisruptionbudget": true, "pdb": true, "priorityclass": true, "pc": true, "quota": true,
	"resourcequota": true, "role": true, "rolebinding": true, "secret": true, "service": true, "svc": true,
	"serviceaccount": true, "sa": true, "token": true,
}
