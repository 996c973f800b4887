package apiserver

import (
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// kube-apiserver serves the CRD endpoints (not the custom resources, which the CRD handler serves) through
// go-restful routes, and go-restful's router (jsr311.go detectRoute, github.com/emicklei/go-restful/v3
// v3.13.0) refuses a request before its handler runs: a Content-Type the route does not consume is a 415, then
// an Accept header that names none of the media types the route produces is a 406, each in go-restful's words,
// which the apiserver's service error handler answers as a Status with empty details.

// crdProduces is what the CRD routes produce (negotiation.MediaTypesForSerializer of the apiextensions group's
// serializer); the list route adds the watch stream types.
var (
	crdProduces     = []string{"application/json", "application/yaml", "application/vnd.kubernetes.protobuf"}
	crdListProduces = append(append([]string(nil), crdProduces...), "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch")
)

// crdRouteError is go-restful's refusal of a request to a CRD route, or nil. Only PATCH routes name what they
// consume (the patch types); the others consume anything.
func crdRouteError(req *http.Request, info *request.RequestInfo) error {
	if info.Verb == "patch" && !restfulMatches(req.Header.Get("Content-Type"), crdPatchTypes, false) {
		// A PATCH without a Content-Type is read as application/octet-stream, which no patch type is.
		return restfulError(http.StatusUnsupportedMediaType, "415: Unsupported Media Type")
	}
	produces := crdProduces
	if info.Verb == "list" || info.Verb == "watch" {
		produces = crdListProduces
	}
	accept := req.Header.Get("Accept")
	if accept == "" {
		accept = "*/*"
	}
	if !restfulMatches(accept, produces, true) {
		return restfulError(http.StatusNotAcceptable, "406: Not Acceptable\n\nAvailable representations: "+strings.Join(produces, ", "))
	}
	return nil
}

// crdRouted reports whether a CRD request has a go-restful route: get, update and patch of a CRD and its
// status, delete of a CRD, and list, watch, create and deletecollection of the collection.
func crdRouted(info *request.RequestInfo) bool {
	switch info.Verb {
	case "get", "update", "patch":
		return info.Subresource == "" || info.Subresource == "status"
	case "delete", "list", "watch", "create", "deletecollection":
		return info.Subresource == ""
	}
	return false
}

// restfulMatches reports whether one of the comma-separated media types of header, without parameters, is
// one of types, as go-restful's Route.matchesAccept and matchesContentType compare them; "*/*" in an Accept
// header matches anything.
func restfulMatches(header string, types []string, accept bool) bool {
	for _, mt := range strings.Split(header, ",") {
		if i := strings.Index(mt, ";"); i != -1 {
			mt = mt[:i]
		}
		mt = strings.Trim(mt, " ")
		if accept && mt == "*/*" {
			return true
		}
		for _, t := range types {
			if t == mt {
				return true
			}
		}
	}
	return false
}

// restfulError is a go-restful ServiceError as the apiserver's service error handler turns it into a Status.
func restfulError(code int, msg string) error {
	return apierrors.NewGenericServerResponse(code, "", schema.GroupResource{}, "", msg, 0, false)
}
