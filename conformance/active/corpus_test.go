package active

import (
	"bytes"
	"compress/gzip"
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
// PICS, as name in the corpus directory when one is given.
func keepCapture(t *testing.T, name string, capture []byte, pics string) {
	t.Helper()
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
