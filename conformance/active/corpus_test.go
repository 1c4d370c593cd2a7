package active

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// corpusEnv, set to a directory, makes the tests that write a capture
// while they run keep it there with the PICS they judge it under: the
// judge's parity corpus (conformance/testdata/e2e, whose verdicts
// conformance's TestGoldenVerdicts freezes) is made of them:
//
//	MRC_CORPUS_DIR=$PWD/conformance/testdata/e2e go test ./conformance/active -count=1 \
//		-run 'TestInprocCaptureAgreesWithJudge|TestE2EAFPacket'
//	go test ./conformance -run TestGoldenVerdicts -update-golden
const corpusEnv = "MRC_CORPUS_DIR"

// keepCapture keeps a capture the test wrote, gzip-compressed, and its
// PICS, as name in the corpus directory when one is given; and, whatever
// the environment, keeps them if the test fails (keepOnFailure).
func keepCapture(t *testing.T, name string, seed uint64, capture []byte, pics string) {
	t.Helper()
	keepOnFailure(t, name, seed, capture, pics)
	dir := os.Getenv(corpusEnv)
	if dir == "" {
		return
	}
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if _, err := w.Write(capture); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".pcapng.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".pics.json"), []byte(pics+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// keepOnFailure keeps the capture and PICS of a test that fails, outside
// the test's own temporary directories (which go when it ends), so that a
// failure seen once under load can be decoded and judged again:
//
//	mrc-conform judge --pics <dir>/<name>.pics.json --format json <dir>/<name>.pcapng
func keepOnFailure(t *testing.T, name string, seed uint64, capture []byte, pics string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		dir, err := os.MkdirTemp("", fmt.Sprintf("mrc-failed-%s-seed%d-", name, seed))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".pcapng"), capture, 0o644)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+".pics.json"), []byte(pics+"\n"), 0o644)
		}
		if err != nil {
			t.Logf("keeping the failed run's capture: %v", err)
			return
		}
		t.Logf("the failed run's capture (seed %d) and PICS are kept in %s", seed, dir)
	})
}
