// Package golden reads the inputs of the golden tests, which compare kcm's
// values with upstream's: JSON files in the tests' testdata directories.
// The generators in hack/tools/k8s (daemonsetgolden, deployhash,
// endpointsgolden, mirroringgolden) read the same files and run upstream's
// code on them to print the values the tests expect, so that the two sides
// cannot drift apart.
package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// Read decodes the JSON file at path into a T. Unknown fields are errors,
// as in the generators: a misspelt field would otherwise drop out of both
// sides' input unnoticed.
func Read[T any](t testing.TB, path string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}
