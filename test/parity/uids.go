package parity

import (
	"context"
	"fmt"
	"regexp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// uidRefRE matches a reference to a live object's uid in a patch:
// {{uid Kind namespace/name}}, or {{uid Kind name}} for a cluster-scoped
// kind. It lets a scenario write ownerReferences to objects it created.
var uidRefRE = regexp.MustCompile(`\{\{uid ([A-Za-z0-9]+) (?:([a-z0-9.-]+)/)?([a-z0-9.:-]+)\}\}`)

// uidLookup returns the uid of the named object.
type uidLookup func(kind, namespace, name string) (types.UID, error)

// substituteUIDs replaces every uid reference in a marshalled patch by the
// uid lookup returns. The scenario's own patch is left as it was: each
// binary's cluster has other uids.
func substituteUIDs(body []byte, lookup uidLookup) ([]byte, error) {
	var err error
	out := uidRefRE.ReplaceAllFunc(body, func(m []byte) []byte {
		if err != nil {
			return m
		}
		g := uidRefRE.FindSubmatch(m)
		var uid types.UID
		uid, err = lookup(string(g[1]), string(g[2]), string(g[3]))
		return []byte(uid)
	})
	return out, err
}

// lookupUID reads the uid of a live object, for substituteUIDs.
func (r *stepRunner) lookupUID(ctx context.Context) uidLookup {
	return func(kind, namespace, name string) (types.UID, error) {
		ri, _, err := r.kinds.resource("", kind, namespace)
		if err != nil {
			return "", err
		}
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("uid of %s %s/%s: %w", kind, namespace, name, err)
		}
		return obj.GetUID(), nil
	}
}
