# syntax=docker/dockerfile:1
# crdplay-server with the playground's site, as a non-root image:
#
#   docker build -t crdplay .
#   docker run --rm -p 8080:8080 crdplay                                   # memory storage
#   docker run --rm -p 8080:8080 crdplay --storage etcd --etcd-endpoints http://etcd:2379
#
# The entrypoint listens on 0.0.0.0:8080 and serves the site from /web; flags after the image name are added
# to it (see README.md, "Operating the server"). deploy/kubernetes.yaml runs it against an existing etcd.

# --- the npm packages the site bundles (CodeMirror); esbuild's Go API reads them from node_modules.
FROM node:24-bookworm-slim AS npm
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

# --- the server and the site. The Go version must be the one go.mod asks for: wasm_exec.js is copied from
# this GOROOT into the site, and must match the Go that built the wasm.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
COPY --from=npm /src/node_modules ./node_modules
# -release: brotli quality 11 for the wasm (slower to build, smaller to download).
RUN go run ./tools/webbuild -release -o /out/web
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/crdplay-server ./server/cmd/crdplay-server

# --- the image: the static binary and the site, nothing else, run as the distroless "nonroot" user (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/crdplay-server /crdplay-server
COPY --from=build /out/web /web
USER 65532:65532
EXPOSE 8080
# The health endpoints are kube-apiserver's: /livez, /readyz (distroless has no shell or curl for a
# HEALTHCHECK; Kubernetes probes them over HTTP, see deploy/kubernetes.yaml).
ENTRYPOINT ["/crdplay-server", "--addr", "0.0.0.0:8080", "--site", "/web"]
