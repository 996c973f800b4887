package openapi

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"

	restful "github.com/emicklei/go-restful/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	apiopenapi "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/kube-openapi/pkg/common"
)

// Route metadata keys; kube-openapi copies every x-kubernetes-* metadata entry into the operation.
const (
	extGVK              = "x-kubernetes-group-version-kind"
	extAction           = "x-kubernetes-action"
	extSelectableFields = "x-kubernetes-selectable-fields"
)

// The routes below are what builder registers on a go-restful WebService. We hand kube-openapi the same data
// through its common.Route interfaces instead, because go-restful's RouteBuilder.Build calls os.Exit on a path it
// cannot compile (a group such as "{x:(" would end the process), and user CRDs reach this code before validation
// in the fuzz target and possibly in the playground.

// model is a response or request sample: kube-openapi only asks it for its definition name.
type model string

// OpenAPIModelName implements kube-openapi's util.OpenAPIModelNamer.
func (m model) OpenAPIModelName() string { return string(m) }

const (
	statusModel        model = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
	patchModel         model = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
	deleteOptionsModel model = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
	scaleModel         model = "io.k8s.api.autoscaling.v1.Scale"
)

type param struct {
	name, description, dataType string
	kind                        common.ParameterKind
	required                    bool
}

func (p *param) Name() string               { return p.name }
func (p *param) Description() string        { return p.description }
func (p *param) Required() bool             { return p.required }
func (p *param) Kind() common.ParameterKind { return p.kind }
func (p *param) DataType() string           { return p.dataType }
func (p *param) AllowMultiple() bool        { return false }

type response struct {
	code    int
	message string
	model   interface{}
}

func (r response) Code() int          { return r.code }
func (r response) Message() string    { return r.message }
func (r response) Model() interface{} { return r.model }

type route struct {
	method, path, operation, doc string
	params                       []*param
	consumes, produces           []string
	metadata                     map[string]interface{}
	reads, writes                interface{}
	responses                    []response
}

func (r *route) Method() string                     { return r.method }
func (r *route) Path() string                       { return r.path }
func (r *route) OperationName() string              { return r.operation }
func (r *route) Description() string                { return r.doc }
func (r *route) Consumes() []string                 { return r.consumes }
func (r *route) Produces() []string                 { return r.produces }
func (r *route) Metadata() map[string]interface{}   { return r.metadata }
func (r *route) RequestPayloadSample() interface{}  { return r.reads }
func (r *route) ResponsePayloadSample() interface{} { return r.writes }

func (r *route) Parameters() []common.Parameter {
	out := make([]common.Parameter, len(r.params))
	for i, p := range r.params {
		out[i] = p
	}
	return out
}

func (r *route) StatusCodeResponses() []common.StatusCodeResponse {
	out := make([]common.StatusCodeResponse, len(r.responses))
	for i, resp := range r.responses {
		out[i] = resp
	}
	return out
}

// returns records a response, replacing an earlier one for the same code as go-restful's map does.
func (r *route) returns(code int, message string, sample interface{}) {
	for i := range r.responses {
		if r.responses[i].code == code {
			r.responses[i] = response{code, message, sample}
			return
		}
	}
	r.responses = append(r.responses, response{code, message, sample})
}

// read adds the body parameter; required unless the operation (delete) makes the body optional.
func (r *route) read(sample interface{}, required bool) {
	r.reads = sample
	r.params = append(r.params, &param{name: "body", kind: common.BodyParameterKind, required: required})
}

// routes is the document's single route container. Like the bare WebService builder registers on, it has no
// root path and no shared parameters, so every route carries its own full path and parameters.
type routes []common.Route

func (routes) RootPath() string                   { return "" }
func (routes) PathParameters() []common.Parameter { return nil }
func (rs routes) Routes() []common.Route          { return rs }

// operationIDAndTags defers to the apiserver's naming so operation IDs and tags match built-in APIs; it only
// reads the operation name and path of the route.
func operationIDAndTags(r common.Route) (string, []string, error) {
	return apiopenapi.GetOperationIDAndTags(&restful.Route{Operation: r.OperationName(), Path: r.Path()})
}

// buildRoutes lists the endpoints of one version (served or not: upstream documents whichever it is asked for),
// in the order upstream registers them.
func (b *resource) buildRoutes() routes {
	kindSample, listSample := model(b.kindModel()), model(b.listModel())
	var out routes
	add := func(r *route) *route { out = append(out, r); return r }

	root := fmt.Sprintf("/apis/%s/%s/%s", b.group, b.version, b.plural)
	if b.namespaced {
		r := add(b.route(root, "", "GET", "list", "list", listSample))
		r.operation = "list" + b.kind + "ForAllNamespaces"
		root = fmt.Sprintf("/apis/%s/%s/namespaces/{namespace}/%s", b.group, b.version, b.plural)
	}
	add(b.route(root, "", "GET", "list", "list", listSample))
	add(b.route(root, "", "POST", "post", "create", kindSample)).read(kindSample, true)
	add(b.route(root, "", "DELETE", "deletecollection", "deletecollection", statusModel))

	add(b.route(root, "/{name}", "GET", "get", "read", kindSample))
	add(b.route(root, "/{name}", "PUT", "put", "replace", kindSample)).read(kindSample, true)
	add(b.route(root, "/{name}", "DELETE", "delete", "delete", statusModel))
	add(b.route(root, "/{name}", "PATCH", "patch", "patch", kindSample)).read(patchModel, true)

	if b.subresources != nil && b.subresources.Status != nil {
		add(b.route(root, "/{name}/status", "GET", "get", "read", kindSample))
		add(b.route(root, "/{name}/status", "PUT", "put", "replace", kindSample)).read(kindSample, true)
		add(b.route(root, "/{name}/status", "PATCH", "patch", "patch", kindSample)).read(patchModel, true)
	}
	if b.subresources != nil && b.subresources.Scale != nil {
		add(b.route(root, "/{name}/scale", "GET", "get", "read", scaleModel))
		add(b.route(root, "/{name}/scale", "PUT", "put", "replace", scaleModel)).read(scaleModel, true)
		add(b.route(root, "/{name}/scale", "PATCH", "patch", "patch", scaleModel)).read(patchModel, true)
	}
	return out
}

// route describes one endpoint. actionVerb is the x-kubernetes-action (list, post, get, ...), operationVerb the
// word in the operation ID and description (list, create, read, ...).
func (b *resource) route(root, sub, method, actionVerb, operationVerb string, sample interface{}) *route {
	namespaced := ""
	if b.namespaced {
		namespaced = "Namespaced"
	}
	r := &route{
		method: method,
		// go-restful joins the (empty) service root and the route path this way.
		path:      "/" + strings.TrimLeft(root+sub, "/"),
		doc:       b.description(sub, operationVerb),
		operation: operationVerb + namespaced + b.kind + titleASCII(subresourceOf(sub)),
		produces:  []string{"application/json", "application/yaml"},
		metadata: map[string]interface{}{
			extGVK:    metav1.GroupVersionKind{Group: b.group, Version: b.version, Kind: b.kind},
			extAction: actionVerb,
		},
		writes: sample,
	}
	r.params = append(r.params, &param{
		name:        "pretty",
		description: "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
		dataType:    "string",
		kind:        common.QueryParameterKind,
	})
	r.returns(200, "OK", sample)
	if strings.Contains(root, "{namespace}") || strings.Contains(sub, "{namespace}") {
		r.params = append(r.params, &param{name: "namespace", description: "object name and auth scope, such as for teams and projects", dataType: "string", kind: common.PathParameterKind, required: true})
	}
	if strings.Contains(root, "{name}") || strings.Contains(sub, "{name}") {
		r.params = append(r.params, &param{name: "name", description: "name of the " + b.kind, dataType: "string", kind: common.PathParameterKind, required: true})
	}
	if method == "PATCH" {
		r.consumes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyPatchType)}
	} else {
		r.consumes = []string{"application/json", "application/yaml"}
	}

	switch actionVerb {
	case "get":
		r.params = append(r.params, optionParams(&metav1.GetOptions{})...)
	case "list", "deletecollection":
		r.params = append(r.params, optionParams(&metav1.ListOptions{})...)
	case "put":
		r.params = append(r.params, optionParams(&metav1.UpdateOptions{})...)
	case "patch":
		r.params = append(r.params, optionParams(&metav1.PatchOptions{})...)
	case "post":
		r.params = append(r.params, optionParams(&metav1.CreateOptions{})...)
	case "delete":
		r.params = append(r.params, optionParams(&metav1.DeleteOptions{})...)
		r.read(deleteOptionsModel, false)
	}

	switch actionVerb {
	case "post":
		r.returns(202, "Accepted", sample)
		r.returns(201, "Created", sample)
	case "delete":
		r.returns(202, "Accepted", sample)
	case "put":
		r.returns(201, "Created", sample)
	}
	return r
}

// subresourceOf maps "", "/{name}" to "" and "/{name}/status" to "status".
func subresourceOf(sub string) string {
	parts := strings.Split(sub, "/")
	if len(parts) == 3 {
		return parts[2]
	}
	return ""
}

// titleASCII upper-cases the first letter; the only inputs are "", "status" and "scale", for which this equals
// the English title casing upstream applies.
func titleASCII(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// description is the operation summary, worded as for built-in resources ("create a CronTab", "list objects of
// kind CronTab", "partially update status of the specified CronTab", "delete collection of CronTab").
func (b *resource) description(sub, operationVerb string) string {
	var article string
	switch operationVerb {
	case "list":
		article = " objects of kind "
	case "read", "replace", "patch":
		article = " the specified "
	case "create", "delete":
		article = articleFor(b.kind)
	}
	s := subresourceOf(sub)
	if s != "" {
		s = " " + s + " of"
	}
	switch operationVerb {
	case "patch":
		return "partially update" + s + article + b.kind
	case "deletecollection":
		if s != "" {
			s += " a"
		}
		return "delete collection of" + s + " " + b.kind
	}
	return operationVerb + s + article + b.kind
}

// articleFor returns " a ", " an " or, for what looks like a plural, a single space. Upstream indexes the first
// byte unguarded; an empty kind (rejected by CRD validation) gets " a " here instead of a panic.
func articleFor(noun string) string {
	if strings.HasSuffix(noun, "s") && !strings.HasSuffix(noun, "ss") {
		return " "
	}
	if noun != "" && strings.ContainsRune("aeiou", unicode.ToLower(rune(noun[0]))) {
		return " an "
	}
	return " a "
}

// optionParams lists the query parameters of an options struct (GetOptions, ListOptions, ...): every field with
// a JSON name whose type is a scalar, a pointer to one or a slice, described by the type's SwaggerDoc. Nested
// structs (TypeMeta, Preconditions) are not query parameters.
func optionParams(opts interface{ SwaggerDoc() map[string]string }) []*param {
	docs := opts.SwaggerDoc()
	t := reflect.TypeOf(opts).Elem()
	var out []*param
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct || ft.Kind() == reflect.Interface {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			continue
		}
		out = append(out, &param{name: name, description: docs[name], dataType: queryType(ft), kind: common.QueryParameterKind})
	}
	return out
}

// queryType is the OpenAPI type of a query parameter; a slice is documented by its element type because
// go-restful has no way to declare an array query parameter.
func queryType(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		t = t.Elem()
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint8, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return "string"
}
