package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"sigs.k8s.io/yaml"
)

// warnings collects the Warning headers of one request as kube-apiserver's recorder does: deduplicated, in
// order, and truncated past 4 KiB of text.
type warnings struct {
	mu      sync.Mutex
	seen    map[string]bool
	ordered []string
}

const (
	warningTotalRunes = 4 * 1024
	warningItemRunes  = 256
)

// AddWarning implements k8s.io/apiserver/pkg/warning.Recorder.
func (w *warnings) AddWarning(_, text string) {
	if text == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[text] {
		return
	}
	w.seen[text] = true
	w.ordered = append(w.ordered, text)
}

// headers returns the Warning header values, truncating every item once the total exceeds the limit.
func (w *warnings) headers() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	total := 0
	for _, t := range w.ordered {
		total += utf8.RuneCountInString(t)
	}
	var out []string
	for _, t := range w.ordered {
		if total > warningTotalRunes && utf8.RuneCountInString(t) > warningItemRunes {
			t = string([]rune(t)[:warningItemRunes])
		}
		if h, err := utilnet.NewWarningHeader(299, "-", t); err == nil {
			out = append(out, h)
		}
	}
	return out
}

// errorToStatus turns an error into the Status body kube-apiserver would send.
func errorToStatus(err error) *metav1.Status {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		status := se.Status()
		if status.Status == "" {
			status.Status = metav1.StatusFailure
		}
		if status.Code == 0 {
			if status.Status == metav1.StatusSuccess {
				status.Code = http.StatusOK
			} else {
				status.Code = http.StatusInternalServerError
			}
		}
		status.Kind, status.APIVersion = "Status", "v1"
		return &status
	}
	code := http.StatusInternalServerError
	if storage.IsConflict(err) {
		code = http.StatusConflict
	}
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     int32(code),
		Reason:   metav1.StatusReasonUnknown,
		Message:  err.Error(),
	}
}

// outputSerializers are the media types the custom resource endpoints produce.
type outputSerializers struct{}

var jsonInfo = runtime.SerializerInfo{MediaType: "application/json", MediaTypeType: "application", MediaTypeSubType: "json", EncodesAsText: true}
var yamlInfo = runtime.SerializerInfo{MediaType: "application/yaml", MediaTypeType: "application", MediaTypeSubType: "yaml", EncodesAsText: true}

func (outputSerializers) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{jsonInfo, yamlInfo}
}
func (outputSerializers) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}
func (outputSerializers) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// restrictions say which transformations (Table, PartialObjectMetadata) an endpoint allows.
type restrictions struct{ table bool }

func (r restrictions) AllowsMediaTypeTransform(mimeType, mimeSubType string, gvk *schema.GroupVersionKind) bool {
	if gvk == nil {
		return mimeType == "application" && (mimeSubType == "json" || mimeSubType == "yaml")
	}
	if gvk.GroupVersion() == metav1beta1.SchemeGroupVersion || gvk.GroupVersion() == metav1.SchemeGroupVersion {
		switch gvk.Kind {
		case "Table":
			return r.table && mimeType == "application" && (mimeSubType == "json" || mimeSubType == "yaml")
		case "PartialObjectMetadata", "PartialObjectMetadataList":
			return true
		}
	}
	return false
}
func (restrictions) AllowsServerVersion(v string) bool { return v == "v1" }
func (restrictions) AllowsStreamSchema(s string) bool  { return s == "watch" }

// reply is the outcome of a request before it is written: an object (or Status) and its code.
type reply struct {
	code int
	obj  runtime.Object
	// raw, if set, is sent as is (discovery documents).
	raw interface{}
}

// errHandled means the response was already written (watch streams).
var errHandled = errors.New("handled")

// transform turns a result into what the Accept header asked for (Table, PartialObjectMetadata).
func transform(ctx context.Context, req *http.Request, mt negotiation.MediaTypeOptions, obj runtime.Object, table rest.TableConvertor, kindGV schema.GroupVersion, conv runtime.ObjectConvertor) (runtime.Object, error) {
	if _, ok := obj.(*metav1.Status); ok {
		return obj, nil
	}
	// A Table of a long list is work of its own (a JSONPath evaluation per cell), which a request past its
	// deadline, already answered, must not begin.
	if ctx.Err() != nil {
		return nil, requestGone()
	}
	if meta.IsListType(obj) && meta.LenList(obj) == 0 {
		if err := meta.SetList(obj, []runtime.Object{}); err != nil {
			return nil, err
		}
	}
	target := mt.Convert
	switch {
	case target == nil:
		return obj, nil
	case target.Kind == "PartialObjectMetadata":
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		p := meta.AsPartialObjectMetadata(m)
		p.GetObjectKind().SetGroupVersionKind(target.GroupVersion().WithKind("PartialObjectMetadata"))
		return p, nil
	case target.Kind == "PartialObjectMetadataList":
		list := &metav1.PartialObjectMetadataList{}
		if li, err := meta.ListAccessor(obj); err == nil {
			list.ResourceVersion = li.GetResourceVersion()
			list.Continue = li.GetContinue()
			list.RemainingItemCount = li.GetRemainingItemCount()
		}
		err := meta.EachListItem(obj, func(o runtime.Object) error {
			m, err := meta.Accessor(o)
			if err != nil {
				return err
			}
			p := meta.AsPartialObjectMetadata(m)
			p.GetObjectKind().SetGroupVersionKind(target.GroupVersion().WithKind("PartialObjectMetadata"))
			list.Items = append(list.Items, *p)
			return nil
		})
		if err != nil {
			return nil, err
		}
		if list.Items == nil {
			list.Items = []metav1.PartialObjectMetadata{}
		}
		list.GetObjectKind().SetGroupVersionKind(target.GroupVersion().WithKind("PartialObjectMetadataList"))
		return list, nil
	case target.Kind == "Table":
		opts := &metav1.TableOptions{}
		if err := metainternalversionscheme.ParameterCodec.DecodeParameters(req.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
			return nil, err
		}
		switch errs := metav1validation.ValidateTableOptions(opts); len(errs) {
		case 0:
		case 1:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs[0].Error()))
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("Unable to convert to Table as requested: %v", errs))
		}
		t, err := table.ConvertToTable(ctx, obj, opts)
		if err != nil {
			return nil, err
		}
		for i := range t.Rows {
			item := &t.Rows[i]
			switch opts.IncludeObject {
			case metav1.IncludeObject:
				if item.Object.Object, err = conv.ConvertToVersion(item.Object.Object, kindGV); err != nil {
					return nil, err
				}
			case metav1.IncludeMetadata, "":
				m, err := meta.Accessor(item.Object.Object)
				if err != nil {
					return nil, err
				}
				p := meta.AsPartialObjectMetadata(m)
				p.GetObjectKind().SetGroupVersionKind(target.GroupVersion().WithKind("PartialObjectMetadata"))
				item.Object.Object = p
			case metav1.IncludeNone:
				item.Object.Object = nil
			default:
				return nil, apierrors.NewBadRequest(fmt.Sprintf("unrecognized includeObject value: %q", opts.IncludeObject))
			}
		}
		t.GetObjectKind().SetGroupVersionKind(target.GroupVersion().WithKind("Table"))
		return t, nil
	}
	return nil, negotiation.NewNotAcceptableError([]string{"application/json", "application/yaml"})
}

// encode renders v as JSON or YAML.
func encode(v interface{}, asYAML bool) ([]byte, error) {
	u, ok := v.(*unstructured.Unstructured)
	if ok && u.Object != nil {
		// What the Encoder writes for an object: its MarshalJSON (the unstructured JSON scheme's encoding of its
		// content), compacted, which changes nothing, then a newline.
		if b, ok := appendJSON(make([]byte, 0, 1024), u.Object, 1); ok {
			return encoded(append(b, '\n'), asYAML)
		}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return encoded(buf.Bytes(), asYAML)
}

// encoded is encode's answer from JSON.
func encoded(b []byte, asYAML bool) ([]byte, error) {
	if !asYAML {
		return b, nil
	}
	return yaml.JSONToYAML(b)
}
