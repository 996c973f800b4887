// Command wasmsize prints, as a Markdown table, the raw, gzip and brotli sizes of build artefacts beside their
// size targets. It is `make bench`'s size report:
//
//	go -C tools/wasmsize run . [-cache DIR] [-max LABEL=6MB]... LABEL=FILE...
//
// Sizes are what a static server would send: gzip -9 and brotli quality 11 with a 16 MiB window, the settings
// for precompressed files. Brotli 11 takes about two minutes for a 40 MB wasm, so results are cached by the
// file's SHA-256 in -cache: an unchanged artefact is reported at once.
//
// It is a module of its own so that the brotli encoder stays out of crdplay's go.mod.
package main

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

// brotliWindow is log2 of the brotli window: the encoder's maximum, as for precompressed static files.
const brotliWindow = 24

func main() {
	log.SetFlags(0)
	log.SetPrefix("wasmsize: ")
	cache := flag.String("cache", "", "`directory` for cached compressed sizes (none if empty)")
	maxBrotli := map[string]int64{}
	flag.Func("max", "size target `LABEL=SIZE` for the brotli size (SIZE like 6MB = 6,000,000 bytes, or 6MiB)", func(s string) error {
		label, size, ok := strings.Cut(s, "=")
		if !ok {
			return errors.New("want LABEL=SIZE")
		}
		n, err := parseSize(size)
		if err != nil {
			return err
		}
		maxBrotli[label] = n
		return nil
	})
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: wasmsize [-cache DIR] [-max LABEL=SIZE]... LABEL=FILE...")
	}

	fmt.Println("| artefact | raw | gzip -9 | brotli -q 11 | target | |")
	fmt.Println("|---|---:|---:|---:|---|---|")
	over := false
	for _, arg := range flag.Args() {
		label, file, ok := strings.Cut(arg, "=")
		if !ok {
			log.Fatalf("%q: want LABEL=FILE", arg)
		}
		s, err := measure(file, *cache)
		if err != nil {
			log.Fatal(err)
		}
		target, verdict := "–", ""
		if max, ok := maxBrotli[label]; ok {
			target = "brotli ≤ " + human(max)
			verdict = "ok"
			if s.brotli > max {
				verdict, over = "**over**", true
			}
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", label, human(s.raw), human(s.gzip), human(s.brotli), target, verdict)
	}
	if over {
		// A report, not a gate: make bench shows the table and still succeeds.
		fmt.Println("\nSome artefacts are over their targets.")
	}
}

type sizes struct{ raw, gzip, brotli int64 }

// measure returns the sizes of file, from the cache when the same content was measured before.
func measure(file, cacheDir string) (sizes, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return sizes{}, err
	}
	sum := sha256.Sum256(data)
	key := filepath.Join(cacheDir, hex.EncodeToString(sum[:])+".sizes")
	s := sizes{raw: int64(len(data))}
	if cacheDir != "" {
		if b, err := os.ReadFile(key); err == nil {
			if _, err := fmt.Sscanf(string(b), "%d %d", &s.gzip, &s.brotli); err == nil {
				return s, nil
			}
		}
	}

	fmt.Fprintf(os.Stderr, "wasmsize: compressing %s (%s); brotli -q 11 takes about 3 s per MB...\n", file, human(s.raw))
	var wg sync.WaitGroup
	var gzErr, brErr error
	wg.Go(func() {
		var n counter
		w, _ := gzip.NewWriterLevel(&n, gzip.BestCompression)
		gzErr = compress(w, data)
		s.gzip = int64(n)
	})
	wg.Go(func() {
		var n counter
		w := brotli.NewWriterOptions(&n, brotli.WriterOptions{Quality: brotli.BestCompression, LGWin: brotliWindow})
		brErr = compress(w, data)
		s.brotli = int64(n)
	})
	wg.Wait()
	if err := errors.Join(gzErr, brErr); err != nil {
		return sizes{}, err
	}
	if cacheDir != "" {
		if err := os.MkdirAll(cacheDir, 0o755); err != nil {
			return sizes{}, err
		}
		if err := os.WriteFile(key, fmt.Appendf(nil, "%d %d\n", s.gzip, s.brotli), 0o644); err != nil {
			return sizes{}, err
		}
	}
	return s, nil
}

func compress(w io.WriteCloser, data []byte) error {
	if _, err := w.Write(data); err != nil {
		return err
	}
	return w.Close()
}

// counter is an io.Writer that only counts.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

// human formats n as exact bytes plus decimal megabytes, the unit of the targets.
func human(n int64) string {
	return fmt.Sprintf("%s (%.2f MB)", commas(n), float64(n)/1e6)
}

func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// parseSize reads "6MB" (decimal), "6MiB" (binary), "512kB", "512KiB" or a plain byte count.
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"MiB", 1 << 20}, {"KiB", 1 << 10}, {"MB", 1e6}, {"kB", 1e3}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = v, u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return int64(f * mult), nil
}
