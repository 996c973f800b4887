package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// TLSConfig returns the configuration to serve h over TLS as kube-apiserver serves with --tls-cert-file and
// --tls-private-key-file: the certificate and key of those files, loaded again whenever either changes (so a
// renewed certificate is served without a restart), TLS 1.2 or later, HTTP/2 offered; with a client CA
// (AuthOptions.ClientCAFile), clients are asked for a certificate, which the authenticator then checks
// (a client without one can still authenticate otherwise). The files are watched until ctx is done.
func (h *Handler) TLSConfig(ctx context.Context, certFile, keyFile string) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS serving needs both a certificate file and a private key file")
	}
	cert, err := dynamiccertificates.NewDynamicServingContentFromFiles("serving-cert", certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	// The composition of upstream's SecureServingInfo.tlsConfig.
	base := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}
	var clientCA dynamiccertificates.CAContentProvider
	if h.clientCA != nil {
		clientCA = h.clientCA
		base.ClientAuth = tls.RequestClientCert
	}
	controller := dynamiccertificates.NewDynamicServingCertificateController(base, clientCA, cert, nil, nil)
	cert.AddListener(controller)
	if h.clientCA != nil {
		h.clientCA.AddListener(controller)
	}
	if err := controller.RunOnce(); err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	go cert.Run(ctx, 1)
	go controller.Run(1, ctx.Done())
	return &tls.Config{GetConfigForClient: controller.GetConfigForClient, MinVersion: tls.VersionTLS12, NextProtos: base.NextProtos}, nil
}
