// Package conversion converts custom resources between the versions of their
// CustomResourceDefinition, as kube-apiserver does.
//
// It re-creates the behaviour of
// k8s.io/apiextensions-apiserver/pkg/apiserver/conversion, which cannot be
// imported here: its webhook converter pulls in client-go's REST client and,
// through it, grpc, neither of which may enter the js/wasm engine. Error texts
// are kept identical to upstream so that responses match a real server byte
// for byte.
//
// The one thing this package does not do is talk to a webhook: the embedder
// supplies a [WebhookFunc] (HTTPS in the server, a JavaScript callback in the
// browser), and this package builds the ConversionReview, hands it over and
// checks the answer.
package conversion
