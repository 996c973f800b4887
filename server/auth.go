package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/tokenfile"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	authzunion "k8s.io/apiserver/pkg/authorization/union"
	"k8s.io/apiserver/pkg/endpoints/filters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// Authorization modes (kube-apiserver's --authorization-mode, of which a server without a cluster can use these).
const (
	// AuthorizationAlwaysAllow allows every request, as kube-apiserver's AlwaysAllow. It is the default when no
	// authenticator is configured.
	AuthorizationAlwaysAllow = "AlwaysAllow"
	// AuthorizationAuthenticatedWrite lets authenticated users do everything and anonymous ones (with
	// --anonymous-auth) only read: get, list and watch. It is the default once an authenticator is configured:
	// a small deployment's policy without a policy file.
	AuthorizationAuthenticatedWrite = "AuthenticatedWrite"
	// AuthorizationABAC decides by a policy file in kube-apiserver's ABAC format (--authorization-policy-file).
	AuthorizationABAC = "ABAC"
)

// AuthOptions configure authentication and authorization as kube-apiserver's flags of the same names do. The
// zero value authenticates nobody and allows everything, as the server always has.
type AuthOptions struct {
	// TokenAuthFile is kube-apiserver's --token-auth-file: a CSV file of bearer tokens, one a line:
	// token,user,uid,"group1,group2". It is read once, at start, as upstream reads it.
	TokenAuthFile string
	// ClientCAFile is kube-apiserver's --client-ca-file: client certificates it signed authenticate their
	// subject's common name as the user and its organizations as groups. It needs TLS serving; the file is
	// read again when it changes.
	ClientCAFile string
	// Anonymous is --anonymous-auth: whether a request no authenticator accepts proceeds as system:anonymous.
	// Nil means yes when no authenticator is configured and no otherwise, where such requests get 401.
	Anonymous *bool
	// AuthorizationMode is one of AuthorizationAlwaysAllow, AuthorizationAuthenticatedWrite or
	// AuthorizationABAC; "" is AlwaysAllow without authenticators and AuthenticatedWrite with one.
	AuthorizationMode string
	// AuthorizationPolicyFile is the ABAC policy file, read once at start as upstream reads it.
	AuthorizationPolicyFile string
	// AuthenticateLinks puts the short links' requests (LinksPath) behind authentication and authorization
	// too; otherwise anonymous visitors of the page can always create and read them.
	AuthenticateLinks bool
}

// auth is what AuthOptions build: the filter put in front of the API, and the client CA that TLS serving
// asks clients for.
type auth struct {
	// authenticate puts the request's parse and authentication in front of h, authorize authorization:
	// upstream's filters, apart so that the in-flight limit goes between them as DefaultBuildHandlerChain
	// puts it (see wrap). Both are the identity when everyone may do everything.
	authenticate, authorize func(h http.Handler) http.Handler
	// clientCA is the --client-ca-file's content, reloaded when the file changes; nil without one.
	clientCA *dynamiccertificates.DynamicFileCAContent
}

// newAuth builds authentication and authorization from o. Files are read here, once (the client CA again when
// it changes, by run), so that a request costs a map lookup or a certificate check, never a file read.
func newAuth(o AuthOptions) (*auth, error) {
	a := &auth{}
	// The authenticators kube-apiserver's BuiltInAuthenticationOptions build from these flags, in its order:
	// client certificates, then bearer tokens.
	var authenticators []authenticator.Request
	if o.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		a.clientCA = ca
		authenticators = append(authenticators, x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion))
	}
	if o.TokenAuthFile != "" {
		tokens, err := tokenfile.NewCSV(o.TokenAuthFile)
		if err != nil {
			return nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		authenticators = append(authenticators, bearertoken.New(tokens))
	}
	anonymousAllowed := len(authenticators) == 0
	if o.Anonymous != nil {
		anonymousAllowed = *o.Anonymous
	}
	var authn authenticator.Request
	if len(authenticators) > 0 {
		authn = group.NewAuthenticatedGroupAdder(union.New(authenticators...))
	}
	if anonymousAllowed {
		if authn == nil {
			authn = anonymous.NewAuthenticator(nil)
		} else {
			authn = union.NewFailOnError(authn, anonymous.NewAuthenticator(nil))
		}
	}

	if authn == nil {
		return nil, errors.New("--anonymous-auth=false without an authenticator (--token-auth-file, --client-ca-file): every request would be refused")
	}
	mode := o.AuthorizationMode
	if mode == "" {
		mode = AuthorizationAlwaysAllow
		if len(authenticators) > 0 {
			mode = AuthorizationAuthenticatedWrite
		}
	}
	if o.AuthorizationPolicyFile != "" && mode != AuthorizationABAC {
		return nil, fmt.Errorf("--authorization-policy-file is only for --authorization-mode=%s", AuthorizationABAC)
	}
	var modeAuthorizer authorizer.Authorizer
	switch mode {
	case AuthorizationAlwaysAllow:
		if len(authenticators) == 0 {
			// Everyone is anonymous and allowed everything: nothing to check, nothing to spend.
			a.authenticate = func(h http.Handler) http.Handler { return h }
			a.authorize = a.authenticate
			return a, nil
		}
		modeAuthorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	case AuthorizationAuthenticatedWrite:
		modeAuthorizer = authenticatedWrite{}
	case AuthorizationABAC:
		if o.AuthorizationPolicyFile == "" {
			return nil, fmt.Errorf("--authorization-mode=%s needs --authorization-policy-file", AuthorizationABAC)
		}
		policies, err := newABACFromFile(o.AuthorizationPolicyFile)
		if err != nil {
			return nil, fmt.Errorf("--authorization-policy-file: %w", err)
		}
		modeAuthorizer = policies
	default:
		return nil, fmt.Errorf("unknown authorization mode %q (supported: %s, %s, %s)", mode,
			AuthorizationAlwaysAllow, AuthorizationAuthenticatedWrite, AuthorizationABAC)
	}
	// As kube-apiserver: system:masters may do everything whatever the mode says; the mode's authorizer is
	// named as kube-apiserver names the one a mode flag configures (its reason is prefixed with the name).
	authz, err := authzunion.New(
		authzunion.NamedAuthorizer{AuthorizerName: "privileged", Authorizer: authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)},
		authzunion.NamedAuthorizer{AuthorizerName: authorizerName(mode), Authorizer: modeAuthorizer},
	)
	if err != nil {
		return nil, err
	}
	a.authenticate = func(h http.Handler) http.Handler {
		h = filters.WithAuthentication(h, authn, filters.Unauthorized(statusCodecs), nil, nil)
		parse := filters.WithRequestInfo(h, requestInfos)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The API's deadline, outside, has parsed the request with the same factory: not twice.
			if _, ok := request.RequestInfoFrom(r.Context()); ok {
				h.ServeHTTP(w, r)
				return
			}
			parse.ServeHTTP(w, r) // upstream's answer to a request it cannot parse
		})
	}
	a.authorize = func(h http.Handler) http.Handler { return filters.WithAuthorization(h, authz, statusCodecs) }
	return a, nil
}

// wrap puts h behind authentication, then limit, then authorization: the order of kube-apiserver's
// DefaultBuildHandlerChain, where a request over the limit is answered 429 whether or not it would be allowed,
// and the authorizer is spent only on the requests the limit lets in.
func (a *auth) wrap(limit *inFlightLimit, h http.Handler) http.Handler {
	return a.authenticate(limit.wrap(a.authorize(h)))
}

// authorizerName is the name kube-apiserver gives the authorizer of an --authorization-mode: the mode in lower case.
func authorizerName(mode string) string {
	switch mode {
	case AuthorizationAlwaysAllow:
		return "alwaysallow"
	case AuthorizationAuthenticatedWrite:
		return "authenticatedwrite"
	case AuthorizationABAC:
		return "abac"
	}
	return mode
}

// run keeps the client CA up to date with its file until ctx is done.
func (a *auth) run(ctx context.Context) {
	if a.clientCA != nil {
		go a.clientCA.Run(ctx, 1)
	}
}

// authenticatedWrite is AuthorizationAuthenticatedWrite's authorizer.
type authenticatedWrite struct{}

// anonymousReadOnly is the reason an anonymous write is refused, which the 403 Status ends with.
const anonymousReadOnly = "anonymous requests may only read (get, list, watch); authenticate to write"

func (authenticatedWrite) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if u := a.GetUser(); u != nil {
		for _, g := range u.GetGroups() {
			if g == user.AllAuthenticated {
				return authorizer.DecisionAllow, "", nil
			}
		}
	}
	if a.IsReadOnly() {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, anonymousReadOnly, nil
}

func (z authenticatedWrite) ConditionsAwareAuthorize(ctx context.Context, a authorizer.Attributes) authorizer.ConditionsAwareDecision {
	return authorizer.ConditionsAwareDecisionFromParts(z.Authorize(ctx, a))
}

func (authenticatedWrite) EvaluateConditions(context.Context, authorizer.ConditionsAwareDecision, authorizer.ConditionsData) (authorizer.Decision, string, error) {
	return authorizer.DecisionDeny, "", authorizer.ErrorConditionEvaluationNotSupported
}
