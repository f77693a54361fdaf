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
