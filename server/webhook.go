package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// webhookTimeout is how long kube-apiserver waits for a conversion webhook.
const webhookTimeout = 30 * time.Second

// maxWebhookResponse bounds what a webhook may send back, so a misbehaving one cannot exhaust memory.
const maxWebhookResponse = 64 << 20

// HTTPSWebhook delivers ConversionReviews as kube-apiserver does: an HTTPS POST to the webhook's URL (or its
// service's in-cluster name), trusting only the CRD's caBundle when one is set, with a 30 s timeout carried
// in the URL as client-go's REST client does, and errors worded as client-go words them.
type HTTPSWebhook struct {
	// Timeout overrides webhookTimeout (tests).
	Timeout time.Duration
	// Destinations, if set, restricts the addresses the server dials; nil allows every address.
	Destinations *WebhookDestinations
}

// WebhookDestinations restrict the addresses conversion webhooks may be called at, so that a client who can
// create a CRD cannot make the server dial hosts of its network (cloud metadata, internal services). The check
// is made on the address being dialled, after name resolution, on every connection (redirects included), so
// neither a name that resolves to a forbidden address nor one whose answer changes after a check gets past it.
type WebhookDestinations struct {
	spec string // as given, for messages
	off  bool
	any  bool
	nets []*net.IPNet
}

// ParseWebhookDestinations parses --webhook-destinations: "any" (every address, as kube-apiserver), "off" (no
// webhook is called), or a comma-separated list of CIDRs and "loopback" (127.0.0.0/8 and ::1).
func ParseWebhookDestinations(spec string) (*WebhookDestinations, error) {
	d := &WebhookDestinations{spec: spec}
	switch strings.TrimSpace(spec) {
	case "any":
		d.any = true
		return d, nil
	case "off":
		d.off = true
		return d, nil
	case "":
		return nil, errors.New(`empty: want "any", "off", or a comma-separated list of CIDRs and "loopback"`)
	}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		switch item {
		case "loopback":
			_, v4, _ := net.ParseCIDR("127.0.0.0/8")
			_, v6, _ := net.ParseCIDR("::1/128")
			d.nets = append(d.nets, v4, v6)
		case "any", "off":
			return nil, fmt.Errorf("%q cannot be combined with other destinations", item)
		default:
			_, n, err := net.ParseCIDR(item)
			if err != nil {
				return nil, fmt.Errorf("%q is neither a CIDR (such as 10.0.0.0/8) nor loopback, any or off", item)
			}
			d.nets = append(d.nets, n)
		}
	}
	return d, nil
}

// String is the setting as given.
func (d *WebhookDestinations) String() string { return d.spec }

// allows reports whether ip may be dialled.
func (d *WebhookDestinations) allows(ip net.IP) bool {
	if d.any {
		return true
	}
	for _, n := range d.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// control is the dialer's check of each address it is about to connect to (after resolution).
func (d *WebhookDestinations) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || !d.allows(ip) {
		return fmt.Errorf("address %s is not an allowed conversion webhook destination (--webhook-destinations=%s)", host, d.spec)
	}
	return nil
}

// Call implements engine.WebhookCaller.
func (h HTTPSWebhook) Call(ctx context.Context, cfg apiextensionsv1.WebhookClientConfig, review []byte) ([]byte, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = webhookTimeout
	}
	target, err := webhookURL(cfg)
	if err != nil {
		return nil, err
	}
	q := target.Query()
	q.Set("timeout", strconv.FormatInt(int64(timeout/time.Second), 10)+"s")
	target.RawQuery = q.Encode()

	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cfg.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CABundle) {
			return nil, fmt.Errorf("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsConfig.RootCAs = pool
	}
	transport := &http.Transport{TLSClientConfig: tlsConfig, Proxy: nil, DisableKeepAlives: true}
	if d := h.Destinations; d != nil {
		if d.off {
			return nil, fmt.Errorf("conversion webhooks are turned off on this server (--webhook-destinations=off): not calling %s", target.Redacted())
		}
		transport.DialContext = (&net.Dialer{Timeout: timeout, Control: d.control}).DialContext
	}
	client := &http.Client{Timeout: timeout, Transport: transport}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), bytes.NewReader(review))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, */*")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err // *url.Error: `Post "<url>?timeout=30s": <cause>`, as client-go reports it
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxWebhookResponse))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := strings.TrimSpace(string(body))
		return nil, apierrors.NewGenericServerResponse(resp.StatusCode, http.MethodPost, schema.GroupResource{}, "", msg, 0, true)
	}
	return body, nil
}

// webhookURL is the URL a webhook client config names: its url, or https://<service>.<namespace>.svc:<port><path>.
func webhookURL(cfg apiextensionsv1.WebhookClientConfig) (*url.URL, error) {
	switch {
	case cfg.URL != nil:
		return url.Parse(*cfg.URL)
	case cfg.Service != nil:
		port := int32(443)
		if cfg.Service.Port != nil {
			port = *cfg.Service.Port
		}
		path := ""
		if cfg.Service.Path != nil {
			path = *cfg.Service.Path
		}
		return url.Parse(fmt.Sprintf("https://%s.%s.svc:%d%s", cfg.Service.Name, cfg.Service.Namespace, port, path))
	}
	return nil, fmt.Errorf("webhook client config has neither url nor service")
}
