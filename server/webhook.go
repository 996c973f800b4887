package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	client := &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{TLSClientConfig: tlsConfig, Proxy: nil, DisableKeepAlives: true},
	}
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
