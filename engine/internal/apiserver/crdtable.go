package apiserver

import (
	"context"
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdtable "k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
)

// crdTableConvertor is the CRD registry's table convertor (Name, Scope, Versions, Created At, and the wide
// Group, Kind, ShortNames, Established). Upstream's works on the internal type the registry stores; the engine
// keeps CRDs as v1, so the rows are computed from internal copies and then carry the v1 objects again, which is
// what kube-apiserver converts them to for includeObject.
type crdTableConvertor struct{}

var crdTable = crdtable.New()

func (crdTableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	toInternal := func(crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsinternal.CustomResourceDefinition, error) {
		out := &apiextensionsinternal.CustomResourceDefinition{}
		if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, out, nil); err != nil {
			return nil, err
		}
		return out, nil
	}
	var in runtime.Object
	var originals []runtime.Object
	switch o := obj.(type) {
	case *apiextensionsv1.CustomResourceDefinition:
		c, err := toInternal(o)
		if err != nil {
			return nil, err
		}
		in, originals = c, []runtime.Object{o}
	case *apiextensionsv1.CustomResourceDefinitionList:
		list := &apiextensionsinternal.CustomResourceDefinitionList{ListMeta: o.ListMeta}
		for i := range o.Items {
			c, err := toInternal(&o.Items[i])
			if err != nil {
				return nil, err
			}
			list.Items = append(list.Items, *c)
			originals = append(originals, &o.Items[i])
		}
		in = list
	default:
		return nil, fmt.Errorf("cannot print %T as a CustomResourceDefinition table", obj)
	}
	t, err := crdTable.ConvertToTable(ctx, in, opts)
	if err != nil {
		return nil, err
	}
	if len(t.Rows) != len(originals) {
		return nil, fmt.Errorf("CustomResourceDefinition table: %d rows for %d objects", len(t.Rows), len(originals))
	}
	for i := range t.Rows {
		t.Rows[i].Object.Object = originals[i]
	}
	return t, nil
}

var _ rest.TableConvertor = crdTableConvertor{}
