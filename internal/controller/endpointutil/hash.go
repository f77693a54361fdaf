package endpointutil

import (
	"encoding/hex"
	"hash/fnv"

	"github.com/kcm-dev/kcm/internal/controller/hashing"
)

// DeepHashString is upstream's deepHashObjectToString: the hex FNV-128a of
// a dump of obj that follows pointers. Upstream orders a slice's ports,
// and an Endpoints object's ports and subsets, by it; those orders show in
// the API, so they are reproduced with the same hash.
func DeepHashString(obj any) string {
	h := fnv.New128a()
	hashing.DeepHashObject(h, obj)
	return hex.EncodeToString(h.Sum(nil))
}
