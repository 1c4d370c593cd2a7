// Package fuzz holds the project's go test -fuzz targets. Their seed
// corpus (in f.Add calls and testdata/fuzz) runs in every plain go test;
// long fuzzing is opt-in:
//
//	go test ./fuzz -run '^$' -fuzz FuzzDecode -fuzztime 10m
//
// A crash found by the fuzzer is written to testdata/fuzz/<Target>/ and
// from then on replays in every go test.
package fuzz
