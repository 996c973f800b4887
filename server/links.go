package server

import (
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"crdplay/engine/storage"
)

// Short links keep a playground state (the page's editors and settings, as the JSON a permalink carries) in
// the server's storage under a short id, for states whose permalink would be too long for a URL. They live
// outside the Kubernetes API's paths and keys: requests under LinksPath, objects under linksPrefix, so that
// etcd storage keeps them across restarts beside the engine's /registry/ keys without the engine seeing them.
const (
	// LinksPath is where the page creates short links (POST of the state: 201 with {"id": ID}) and reads them
	// (GET LinksPath/ID: the state).
	LinksPath = "/crdplay/v1/links"
	// LinksHeader is set on every response outside the Kubernetes API when short links are on, to LinksPath:
	// the page reads it from a HEAD of itself, so that a static host (which never sets it) offers no short
	// links and makes no failing request.
	LinksHeader = "X-Crdplay-Links"

	linksPrefix  = "/crdplay/links/"
	linksCounter = "/crdplay/links-count"
	linkIDLength = 16
)

// Defaults of LinkOptions.
const (
	// DefaultMaxLinks bounds how many links a server keeps; with DefaultMaxLinkStored it bounds their storage
	// at 1 GiB, half of etcd's default quota, so that links can never starve the engine's objects.
	DefaultMaxLinks = 2000
	// DefaultMaxLinkStored is the most compressed bytes one link may take: the largest CRDs of the corpus
	// (argo-workflows' Workflow, 2.8 MB of YAML) compress to about half of it.
	DefaultMaxLinkStored = 512 << 10
	// DefaultMaxLinkBody is the most bytes of JSON a POST may send, before compression.
	DefaultMaxLinkBody = 8 << 20
)

// LinkOptions bound the short links a server keeps. The zero value is DefaultMaxLinks links of at most
// DefaultMaxLinkStored compressed bytes each.
type LinkOptions struct {
	// Off turns short links off: LinksPath is then served by the rest of the handler (a 404).
	Off bool
	// MaxCount is how many links the server keeps; once reached, creating one more answers 507 Insufficient
	// Storage (links are never evicted: a link that was handed out keeps working).
	MaxCount int
	// MaxStored is the most bytes one link takes in storage (its JSON, deflated): more answers 413.
	MaxStored int
	// MaxBody is the most bytes of JSON a POST may send: more answers 413 without reading the rest.
	MaxBody int64
}

// Links serves short links from a storage.Interface (the engine's: memory or etcd).
type Links struct {
	store storage.Interface
	opts  LinkOptions
}

// NewLinks returns the short links kept in store, within opts's bounds (defaults for zero fields).
func NewLinks(store storage.Interface, opts LinkOptions) *Links {
	if opts.MaxCount <= 0 {
		opts.MaxCount = DefaultMaxLinks
	}
	if opts.MaxStored <= 0 {
		opts.MaxStored = DefaultMaxLinkStored
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxLinkBody
	}
	return &Links{store: store, opts: opts}
}

// WithLinks serves short links at LinksPath and everything else from next, telling the page (LinksHeader) that
// this host stores links. API responses are left as the engine writes them.
func WithLinks(next http.Handler, links *Links) http.Handler { return withLinks(next, links) }

// withLinks is WithLinks with the links served by any handler (Links behind authentication).
func withLinks(next, links http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == LinksPath || strings.HasPrefix(r.URL.Path, LinksPath+"/") {
			links.ServeHTTP(w, r)
			return
		}
		if !isAPIPath(r.URL.Path) {
			w.Header().Set(LinksHeader, LinksPath)
		}
		next.ServeHTTP(w, r)
	})
}

// validLinkID matches the ids Links makes: base64url of a SHA-256 prefix.
var validLinkID = regexp.MustCompile(`^[A-Za-z0-9_-]{16}$`)

// ServeHTTP creates (POST LinksPath) and reads (GET LinksPath/ID) links. Every answer is JSON; errors are
// {"error": message} with a message for the page to show.
func (l *Links) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	switch id, hasID := strings.CutPrefix(r.URL.Path, LinksPath+"/"); {
	case !hasID:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			linkError(w, http.StatusMethodNotAllowed, "%s takes POST of a playground state (JSON); a link is read at %s/ID", LinksPath, LinksPath)
			return
		}
		l.create(w, r)
	default:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			linkError(w, http.StatusMethodNotAllowed, "a short link is read with GET; links cannot be changed or deleted")
			return
		}
		l.read(w, r, id)
	}
}

// create stores the state in r's body, once: the id is a hash of the state, so the same state always gets
// the same id and storing it again changes nothing.
func (l *Links) create(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, l.opts.MaxBody))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		linkError(w, http.StatusRequestEntityTooLarge, "the state is larger than %s, the most this server reads", size(l.opts.MaxBody))
		return
	}
	if err != nil {
		linkError(w, http.StatusBadRequest, "reading the state: %v", err)
		return
	}
	canonical, err := canonicalState(body)
	if err != nil {
		linkError(w, http.StatusBadRequest, "%v", err)
		return
	}
	sum := sha256.Sum256(canonical)
	id := base64.RawURLEncoding.EncodeToString(sum[:])[:linkIDLength]
	packed := deflate(canonical)
	if len(packed) > l.opts.MaxStored {
		linkError(w, http.StatusRequestEntityTooLarge, "the state is %s compressed; this server keeps links of at most %s",
			size(int64(len(packed))), size(int64(l.opts.MaxStored)))
		return
	}
	ctx := r.Context()
	created := false
	switch old, err := l.store.Get(ctx, linksPrefix+id); {
	case err == nil:
		if !bytes.Equal(old.Value, packed) {
			linkError(w, http.StatusConflict, "another state already has the id %s (a hash collision); change anything and share again", id)
			return
		}
	case errors.Is(err, storage.ErrNotFound):
		if err := l.reserve(ctx, 1); err != nil {
			storageError(w, err)
			return
		}
		_, err := l.store.Create(ctx, linksPrefix+id, packed)
		if err != nil {
			_ = l.reserve(context.WithoutCancel(ctx), -1)
			if !errors.Is(err, storage.ErrExists) { // a concurrent POST of the same state made it
				storageError(w, err)
				return
			}
		}
		created = err == nil
	default:
		storageError(w, err)
		return
	}
	w.Header().Set("Location", LinksPath+"/"+id)
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"id": id, "bytes": len(packed)})
}

// errFull is reserve's refusal when the server keeps as many links as it may.
var errFull = errors.New("full")

// reserve adds delta to the stored count of links, refusing (errFull) to go past MaxCount. The count is a key
// of its own, updated with compare-and-swap, so that several servers on one etcd share the bound and a
// restart keeps it. It is raised before a link is written and lowered if the write fails: a crash in between
// leaves it one too high, which errs on the side of the bound.
func (l *Links) reserve(ctx context.Context, delta int) error {
	for attempt := 0; attempt < 20; attempt++ {
		obj, err := l.store.Get(ctx, linksCounter)
		n := 0
		switch {
		case errors.Is(err, storage.ErrNotFound):
		case err != nil:
			return err
		default:
			if n, err = strconv.Atoi(string(obj.Value)); err != nil {
				return fmt.Errorf("the stored count of links (%s) is damaged: %q", linksCounter, obj.Value)
			}
		}
		if delta > 0 && n+delta > l.opts.MaxCount {
			return errFull
		}
		value := []byte(strconv.Itoa(max(n+delta, 0)))
		if obj.Revision == 0 {
			_, err = l.store.Create(ctx, linksCounter, value)
		} else {
			_, err = l.store.Update(ctx, linksCounter, value, obj.Revision)
		}
		if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrExists) || errors.Is(err, storage.ErrNotFound) {
			continue // another request changed the count meanwhile: read it again
		}
		return err
	}
	return fmt.Errorf("the count of links kept changing under concurrent writes: %w", storage.ErrUnavailable)
}

func (l *Links) read(w http.ResponseWriter, r *http.Request, id string) {
	if !validLinkID.MatchString(id) {
		linkError(w, http.StatusNotFound, "no short link %q: a link's id is %d characters of A-Z, a-z, 0-9, - and _", id, linkIDLength)
		return
	}
	obj, err := l.store.Get(r.Context(), linksPrefix+id)
	if errors.Is(err, storage.ErrNotFound) {
		linkError(w, http.StatusNotFound, "no short link %q on this server: it was made on another server, or this one's storage was reset (memory storage forgets links when the server stops)", id)
		return
	}
	if err != nil {
		storageError(w, err)
		return
	}
	state, err := io.ReadAll(flate.NewReader(bytes.NewReader(obj.Value)))
	if err != nil {
		linkError(w, http.StatusInternalServerError, "the stored link %q is damaged: %v", id, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	// The id is the state's hash: what it names can never change.
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Header().Set("Content-Length", strconv.Itoa(len(state)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(state)
	}
}

// canonicalState checks that body is a playground state (a JSON object of strings: the editors' texts and
// the page's settings) and returns it in one canonical form (keys sorted, Go's escaping), so that the same
// state hashes to the same id however it was spelled.
func canonicalState(body []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("the state is not JSON: %v (at byte %d)", err, syntax.Offset)
		}
		return nil, fmt.Errorf("the state must be a JSON object of strings (crd, objects, ...): %v", err)
	}
	if fields == nil {
		return nil, errors.New("the state must be a JSON object of strings (crd, objects, ...), not null")
	}
	state := make(map[string]string, len(fields))
	for k, raw := range fields {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("the state's field %q must be a string, not %s", k, strings.TrimSpace(string(raw)[:min(len(raw), 40)]))
		}
		state[k] = s
	}
	return json.Marshal(state)
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression) // only an invalid level fails
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func storageError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, errFull):
		linkError(w, http.StatusInsufficientStorage, "this server keeps no more short links (it is at its bound); share a link without the CRD's descriptions, or the files")
	case errors.Is(err, storage.ErrUnavailable):
		linkError(w, http.StatusServiceUnavailable, "the server's storage is unavailable: %v", err)
	default:
		linkError(w, http.StatusInternalServerError, "storing the link: %v", err)
	}
}

func linkError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]string{"error": fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // maps of strings and numbers always marshal
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// size prints a byte count as the page does: kB (1024 bytes) or MiB.
func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d kB", (n+1023)>>10)
}
