package hashing

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"
)

// DeepHashObject resets h and writes a dump of obj to it that follows
// pointers, so that the hash depends on values only, never on addresses.
func DeepHashObject(h hash.Hash, obj any) {
	h.Reset()
	fmt.Fprintf(h, "%v", dump.ForHash(obj))
}

// PodTemplateHash returns the value of the pod-template-hash label the
// Deployment controller gives a ReplicaSet made from template. A non-nil
// collisionCount (the Deployment's status.collisionCount) is mixed in, so
// that bumping it yields a different name after a hash collision.
func PodTemplateHash(template *v1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	// The struct, not the pointer: the dump of a pointer names its type.
	DeepHashObject(h, *template)
	if collisionCount != nil {
		// Eight bytes, of which the upper four stay zero, as upstream.
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		h.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}
